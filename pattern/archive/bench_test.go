package archive_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo"

	"github.com/formworkdb/formwork/internal/testenv"
	"github.com/formworkdb/formwork/pattern/archive"
)

// naiveArchive is the usual hand-written job: read every old document
// through the client, insert it into the archive, then delete with a
// cutoff computed again (the bug the package exists for; here the clock
// is fixed, so it is only the cost that differs).
func naiveArchive(ctx context.Context, live, arch *mongo.Collection, cutoff time.Time) error {
	f := bson.D{{Key: "createdAt", Value: bson.D{{Key: "$lt", Value: cutoff}}}}
	cur, err := live.Find(ctx, f)
	if err != nil {
		return err
	}
	var batch []any
	for cur.Next(ctx) {
		batch = append(batch, bson.Raw(append([]byte(nil), cur.Current...)))
		if len(batch) == 1000 {
			if _, err := arch.InsertMany(ctx, batch); err != nil {
				return err
			}
			batch = batch[:0]
		}
	}
	if err := cur.Close(ctx); err != nil {
		return err
	}
	if len(batch) > 0 {
		if _, err := arch.InsertMany(ctx, batch); err != nil {
			return err
		}
	}
	_, err = live.DeleteMany(ctx, f)
	return err
}

// BenchmarkArchive moves n orders (one every 7 hours, all older than the
// cutoff) to the archive: the pattern with $merge per 3-day slice
// against the naive client-side copy.
func BenchmarkArchive(b *testing.B) {
	for _, form := range []string{"pattern", "naive"} {
		for _, n := range []int{1000, 10000} {
			b.Run(fmt.Sprintf("form=%s/docs=%d", form, n), func(b *testing.B) {
				ctx := context.Background()
				db, count := testenv.Monitored(b)
				cfg := archive.Config{Field: "createdAt", Age: 0, Slice: 30 * 24 * time.Hour}
				var total, shipped int64
				for i := 0; b.Loop(); i++ {
					b.StopTimer()
					live, arch := db.Collection(fmt.Sprint("live", i)), db.Collection(fmt.Sprint("arch", i))
					a, err := archive.New[order](live, arch, cfg)
					if err != nil {
						b.Fatal(err)
					}
					if err := a.EnsureIndexes(ctx); err != nil {
						b.Fatal(err)
					}
					docs := make([]any, n)
					for j := range n {
						docs[j] = order{ID: j, Customer: "c1", CreatedAt: day0.Add(time.Duration(j) * 7 * time.Hour), Total: j}
					}
					if _, err := live.InsertMany(ctx, docs); err != nil {
						b.Fatal(err)
					}
					count.Reset()
					b.StartTimer()
					if form == "pattern" {
						_, err = a.Run(ctx, archive.RunOptions{Now: time.Date(2030, 1, 1, 0, 0, 0, 0, time.UTC)})
					} else {
						err = naiveArchive(ctx, live, arch, time.Date(2030, 1, 1, 0, 0, 0, 0, time.UTC))
					}
					if err != nil {
						b.Fatal(err)
					}
					b.StopTimer()
					total += count.Commands()
					shipped += count.Docs()
					if c, _ := live.CountDocuments(ctx, bson.D{}); c != 0 {
						b.Fatalf("%d left live", c)
					}
					b.StartTimer()
				}
				b.ReportMetric(float64(total)/float64(b.N), "roundtrips/op")
				b.ReportMetric(float64(shipped)/float64(b.N), "docs-to-client/op")
			})
		}
	}
}
