package engine_test

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo/options"

	"github.com/formworkdb/formwork/internal/testenv"
)

// Sizes of the concurrency tests. incWorkers × incsPerWorker is fixed by
// issue 4: eight clients of 10,000 increments each end at exactly 80,000.
// An upsert on a field without an index scans the collection, so that
// variant runs fewer rounds.
const (
	incWorkers    = 8
	incsPerWorker = 10000
	idRounds      = 1000
	fieldRounds   = 250
)

// TestIncConcurrent sends 8 × 10,000 {$inc: {n: 1}} to one document from
// concurrent goroutines through the driver: no increment may be lost, and
// every update matches and modifies the document.
func TestIncConcurrent(t *testing.T) {
	ctx := context.Background()
	coll := testenv.Database(t).Collection("counter")
	if _, err := coll.InsertOne(ctx, bson.D{{Key: "_id", Value: 1}, {Key: "n", Value: 0}}); err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	var wg sync.WaitGroup
	errs := make(chan error, incWorkers)
	for w := 0; w < incWorkers; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; i < incsPerWorker; i++ {
				res, err := coll.UpdateOne(ctx, bson.D{{Key: "_id", Value: 1}}, bson.D{{Key: "$inc", Value: bson.D{{Key: "n", Value: 1}}}})
				if err == nil && (res.MatchedCount != 1 || res.ModifiedCount != 1) {
					err = fmt.Errorf("update %d: matched %d, modified %d", i, res.MatchedCount, res.ModifiedCount)
				}
				if err != nil {
					errs <- err
					return
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	t.Logf("%d updates in %v", incWorkers*incsPerWorker, time.Since(start))
	var got struct{ N int64 }
	if err := coll.FindOne(ctx, bson.D{{Key: "_id", Value: 1}}).Decode(&got); err != nil {
		t.Fatal(err)
	}
	if got.N != incWorkers*incsPerWorker {
		t.Fatalf("n = %d after %d concurrent $inc, want %d", got.N, incWorkers*incsPerWorker, incWorkers*incsPerWorker)
	}
}

// TestIncUpsertConcurrent has 8 goroutines upsert {$inc: {n: 1}} with the
// same filters, round after round: each round must create exactly one
// document, report exactly one upsert, and end with n = 8.
func TestIncUpsertConcurrent(t *testing.T) {
	t.Run("id", func(t *testing.T) {
		testUpsertConcurrent(t, "_id", idRounds)
	})
	t.Run("field", func(t *testing.T) {
		if testenv.Real() {
			// MongoDB only retries a racing upsert whose filter is an
			// equality on a unique index; on any other filter it may
			// insert one document per racing client.
			// https://www.mongodb.com/docs/manual/reference/method/db.collection.updateOne/#upsert-with-duplicate-values
			t.Skip("without a unique index MongoDB may insert duplicates")
		}
		testUpsertConcurrent(t, "k", fieldRounds)
	})
}

func testUpsertConcurrent(t *testing.T, key string, rounds int) {
	ctx := context.Background()
	coll := testenv.Database(t).Collection("upserts")
	var upserted atomic.Int64
	start := time.Now()
	var wg sync.WaitGroup
	errs := make(chan error, incWorkers)
	for w := 0; w < incWorkers; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for r := 0; r < rounds; r++ {
				res, err := coll.UpdateOne(ctx, bson.D{{Key: key, Value: r}}, bson.D{{Key: "$inc", Value: bson.D{{Key: "n", Value: 1}}}}, options.UpdateOne().SetUpsert(true))
				if err != nil {
					errs <- err
					return
				}
				switch {
				case res.UpsertedCount == 1 && res.MatchedCount == 0:
					upserted.Add(1)
				case res.UpsertedCount == 0 && res.MatchedCount == 1 && res.ModifiedCount == 1:
				default:
					errs <- fmt.Errorf("round %d: matched %d, modified %d, upserted %d", r, res.MatchedCount, res.ModifiedCount, res.UpsertedCount)
					return
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	t.Logf("%d upserts in %v", incWorkers*rounds, time.Since(start))
	if got := upserted.Load(); got != int64(rounds) {
		t.Errorf("%d upserts reported for %d filters", got, rounds)
	}
	cur, err := coll.Find(ctx, bson.D{}, options.Find().SetSort(bson.D{{Key: key, Value: 1}}))
	if err != nil {
		t.Fatal(err)
	}
	var docs []bson.M
	if err := cur.All(ctx, &docs); err != nil {
		t.Fatal(err)
	}
	if len(docs) != rounds {
		t.Fatalf("%d documents after upserting %d filters", len(docs), rounds)
	}
	for i, d := range docs {
		if d[key] != int32(i) || d["n"] != int32(incWorkers) {
			t.Fatalf("document %d = %v, want %s: %d and n: %d", i, d, key, i, incWorkers)
		}
	}
}
