package computed

import (
	"context"
	"errors"
	"slices"
	"strings"
	"sync"
	"testing"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo"

	"github.com/formworkdb/formwork/internal/explaintest"
	"github.com/formworkdb/formwork/internal/testenv"
)

func ratingConfig() Config { return Config{Parent: "productId", Value: "stars", Target: "rating"} }

type fixture struct {
	db       *mongo.Database
	products *mongo.Collection
	ratings  *mongo.Collection
	m        *Mean
}

func newFixture(t *testing.T, products ...string) *fixture {
	t.Helper()
	ctx := context.Background()
	db := testenv.Database(t)
	f := &fixture{db: db, products: db.Collection("products"), ratings: db.Collection("ratings")}
	m, err := New(f.products, f.ratings, ratingConfig())
	if err != nil {
		t.Fatal(err)
	}
	if err := m.EnsureIndexes(ctx); err != nil {
		t.Fatal(err)
	}
	f.m = m
	for _, p := range products {
		if _, err := f.products.InsertOne(ctx, bson.D{{Key: "_id", Value: p}, {Key: "name", Value: "product " + p}}); err != nil {
			t.Fatal(err)
		}
	}
	return f
}

func (f *fixture) rate(t *testing.T, p string, stars int) any {
	t.Helper()
	id, err := f.m.Insert(context.Background(), bson.D{{Key: "productId", Value: p}, {Key: "stars", Value: int32(stars)}})
	if err != nil {
		t.Fatal(err)
	}
	return id
}

// stored returns the product's rating document as stored.
func (f *fixture) stored(t *testing.T, p string) bson.Raw {
	t.Helper()
	doc, err := f.products.FindOne(context.Background(), bson.D{{Key: "_id", Value: p}}).Raw()
	if err != nil {
		t.Fatal(err)
	}
	r, _ := doc.Lookup("rating").DocumentOK()
	return r
}

// requireStored checks the stored {sum, count}: both NumberLong, nothing else.
func requireStored(t *testing.T, r bson.Raw, sum, count int64) {
	t.Helper()
	els, _ := r.Elements()
	var keys []string
	for _, e := range els {
		keys = append(keys, e.Key())
	}
	slices.Sort(keys)
	if !slices.Equal(keys, []string{"count", "sum"}) {
		t.Fatalf("stored rating %v: want exactly sum and count (never an average)", r)
	}
	s, c := r.Lookup("sum"), r.Lookup("count")
	if s.Type != bson.TypeInt64 || c.Type != bson.TypeInt64 || s.Int64() != sum || c.Int64() != count {
		t.Fatalf("stored rating %v, want NumberLong sum %d and count %d", r, sum, count)
	}
}

func TestConfigValidate(t *testing.T) {
	if err := ratingConfig().Validate(); err != nil {
		t.Fatal(err)
	}
	for _, c := range []Config{
		{Parent: "", Value: "stars", Target: "rating"},
		{Parent: "productId", Value: "a.b", Target: "rating"},
		{Parent: "productId", Value: "stars", Target: "_id"},
		{Parent: "productId", Value: "stars", Target: "$r"},
		{Parent: "x", Value: "x", Target: "rating"},
	} {
		if err := c.Validate(); err == nil {
			t.Errorf("Validate(%+v) = nil", c)
		}
	}
}

func TestMeanInsertEditDelete(t *testing.T) {
	ctx := context.Background()
	f := newFixture(t, "p1", "p2")
	r5 := f.rate(t, "p1", 5)
	r3 := f.rate(t, "p1", 3)
	f.rate(t, "p1", 4)
	f.rate(t, "p2", 1)
	requireStored(t, f.stored(t, "p1"), 12, 3)

	if err := f.m.Edit(ctx, r3, 1); err != nil {
		t.Fatal(err)
	}
	requireStored(t, f.stored(t, "p1"), 10, 3)
	src, _ := f.ratings.FindOne(ctx, bson.D{{Key: "_id", Value: r3}}).Raw()
	if src.Lookup("stars").AsInt64() != 1 {
		t.Fatalf("source after edit: %v", src)
	}
	if err := f.m.Edit(ctx, r3, 1); err != nil { // unchanged value: no $inc
		t.Fatal(err)
	}
	if err := f.m.Delete(ctx, r5); err != nil {
		t.Fatal(err)
	}
	requireStored(t, f.stored(t, "p1"), 5, 2)
	requireStored(t, f.stored(t, "p2"), 1, 1)

	avg, n, err := f.m.Average(ctx, "p1")
	if err != nil || avg != 2.5 || n != 2 {
		t.Fatalf("Average = %v, %d, %v; want 2.5 of 2", avg, n, err)
	}
	if err := f.m.Delete(ctx, r5); !errors.Is(err, ErrSourceNotFound) {
		t.Fatalf("second delete = %v", err)
	}
	if err := f.m.Edit(ctx, r5, 2); !errors.Is(err, ErrSourceNotFound) {
		t.Fatalf("edit of a deleted source = %v", err)
	}
	if err := f.m.Edit(ctx, r3, "two"); !errors.Is(err, ErrNotNumber) {
		t.Fatalf("edit to a string = %v", err)
	}
	if _, _, err := f.m.Average(ctx, "nope"); !errors.Is(err, ErrParentNotFound) {
		t.Fatalf("Average of an unknown parent = %v", err)
	}

	// No ratings left: count 0, no average.
	if err := f.m.Delete(ctx, f.onlyRating(t, "p2")); err != nil {
		t.Fatal(err)
	}
	requireStored(t, f.stored(t, "p2"), 0, 0)
	if avg, n, err := f.m.Average(ctx, "p2"); avg != 0 || n != 0 || err != nil {
		t.Fatalf("Average with no ratings = %v, %d, %v", avg, n, err)
	}
}

func (f *fixture) onlyRating(t *testing.T, p string) any {
	t.Helper()
	doc, err := f.ratings.FindOne(context.Background(), bson.D{{Key: "productId", Value: p}}).Raw()
	if err != nil {
		t.Fatal(err)
	}
	return doc.Lookup("_id")
}

func TestMeanInsertRejects(t *testing.T) {
	ctx := context.Background()
	f := newFixture(t, "p1")
	if _, err := f.m.Insert(ctx, bson.D{{Key: "productId", Value: "nope"}, {Key: "stars", Value: 4}}); !errors.Is(err, ErrParentNotFound) {
		t.Fatalf("Insert for an unknown parent = %v", err)
	}
	if _, err := f.m.Insert(ctx, bson.D{{Key: "productId", Value: "p1"}, {Key: "stars", Value: "five"}}); !errors.Is(err, ErrNotNumber) {
		t.Fatalf("Insert of a string = %v", err)
	}
	if _, err := f.m.Insert(ctx, bson.D{{Key: "stars", Value: 4}}); err == nil {
		t.Fatal("Insert without a parent succeeded")
	}
	if n, _ := f.ratings.CountDocuments(ctx, bson.D{}); n != 0 {
		t.Fatalf("%d ratings stored after rejected inserts", n)
	}
}

func TestMeanIncTypeMismatch(t *testing.T) {
	ctx := context.Background()
	f := newFixture(t, "p1")
	if _, err := f.products.UpdateOne(ctx, bson.D{{Key: "_id", Value: "p1"}},
		bson.D{{Key: "$set", Value: bson.D{{Key: "rating", Value: bson.D{{Key: "sum", Value: "lots"}, {Key: "count", Value: int64(1)}}}}}}); err != nil {
		t.Fatal(err)
	}
	_, err := f.m.Insert(ctx, bson.D{{Key: "productId", Value: "p1"}, {Key: "stars", Value: 4}})
	var se mongo.ServerError
	if !errors.As(err, &se) || !se.HasErrorCode(14) || !strings.Contains(err.Error(), "Recompute") {
		t.Fatalf("Insert onto a string sum = %v, want TypeMismatch (14) and advice to Recompute", err)
	}
	rep, err := f.m.Repair(ctx)
	if err != nil || rep.Repaired != 1 {
		t.Fatalf("repair: %+v, %v", rep, err)
	}
	requireStored(t, f.stored(t, "p1"), 4, 1)
}

func TestMeanConcurrentExact(t *testing.T) {
	ctx := context.Background()
	f := newFixture(t, "p1")
	const workers, each = 16, 40
	var wg sync.WaitGroup
	errs := make(chan error, workers)
	for g := range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range each {
				id, err := f.m.Insert(ctx, bson.D{{Key: "productId", Value: "p1"}, {Key: "stars", Value: int32(g%5 + 1)}})
				if err == nil && i%4 == 0 {
					err = f.m.Edit(ctx, id, 5)
				}
				if err == nil && i%10 == 0 {
					err = f.m.Delete(ctx, id)
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
	// Expected: per worker, 40 inserts of g%5+1, i%4==0 edited to 5, i%10==0 deleted.
	var sum, count int64
	for g := range workers {
		for i := range each {
			if i%10 == 0 {
				continue
			}
			v := int64(g%5 + 1)
			if i%4 == 0 {
				v = 5
			}
			sum += v
			count++
		}
	}
	requireStored(t, f.stored(t, "p1"), sum, count)
	if rep, err := f.m.Verify(ctx); err != nil || len(rep.Drifted) != 0 {
		t.Fatalf("verify: %+v, %v", rep, err)
	}
}

func TestMeanVerifyRepair(t *testing.T) {
	ctx := context.Background()
	f := newFixture(t, "a", "b", "c", "d", "e")
	for _, s := range []int{5, 4, 4} {
		f.rate(t, "a", s)
		f.rate(t, "b", s)
	}
	// b drifts (a lost $inc); c's ratings bypassed the pattern; d lost all
	// its ratings but kept its total; e never had any. Two orphans.
	must := func(_ any, err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	must(f.products.UpdateOne(ctx, bson.D{{Key: "_id", Value: "b"}}, bson.D{{Key: "$inc", Value: bson.D{{Key: "rating.sum", Value: int64(-4)}, {Key: "rating.count", Value: int64(-1)}}}}))
	must(f.ratings.InsertMany(ctx, []any{
		bson.D{{Key: "productId", Value: "c"}, {Key: "stars", Value: int32(2)}},
		bson.D{{Key: "productId", Value: "c"}, {Key: "stars", Value: int64(3)}},
		bson.D{{Key: "productId", Value: "c"}, {Key: "stars", Value: "n/a"}},
		bson.D{{Key: "productId", Value: "gone"}, {Key: "stars", Value: int32(1)}},
		bson.D{{Key: "productId", Value: "gone"}, {Key: "stars", Value: int32(1)}},
	}))
	must(f.products.UpdateOne(ctx, bson.D{{Key: "_id", Value: "d"}}, bson.D{{Key: "$set", Value: bson.D{{Key: "rating", Value: bson.D{{Key: "sum", Value: int64(9)}, {Key: "count", Value: int64(2)}}}}}}))

	rep, err := f.m.Verify(ctx)
	if err != nil {
		t.Fatal(err)
	}
	var drifted []string
	for _, d := range rep.Drifted {
		drifted = append(drifted, d.ID.StringValue())
	}
	if rep.Checked != 5 || rep.Orphans != 2 || !slices.Equal(drifted, []string{"b", "c", "d"}) {
		t.Fatalf("verify: %+v (drifted %v); want 5 checked, 2 orphans, b c d drifted", rep, drifted)
	}
	if d := rep.Drifted[1]; d.Want != (Total{Sum: 5, Count: 3}) || d.Stored != (Total{}) {
		t.Fatalf("drift of c: %+v; want stored 0/0, want sum 5 of 3 (a string counts, adds nothing)", d)
	}
	rep, err = f.m.Repair(ctx)
	if err != nil || rep.Repaired != 3 {
		t.Fatalf("repair: %+v, %v", rep, err)
	}
	requireStored(t, f.stored(t, "b"), 13, 3)
	requireStored(t, f.stored(t, "c"), 5, 3)
	requireStored(t, f.stored(t, "d"), 0, 0)
	if rep, err := f.m.Verify(ctx); err != nil || len(rep.Drifted) != 0 {
		t.Fatalf("verify after repair: %+v, %v", rep, err)
	}

	// Recompute is idempotent: the stored bytes do not change.
	before := f.stored(t, "a")
	for range 2 {
		if tot, err := f.m.Recompute(ctx, "a"); err != nil || tot != (Total{Sum: 13, Count: 3}) {
			t.Fatalf("recompute: %+v, %v", tot, err)
		}
	}
	requireStored(t, f.stored(t, "a"), 13, 3)
	if again := f.stored(t, "a"); len(again) != len(before) {
		t.Fatalf("recompute changed the shape: %v -> %v", before, again)
	}
	if _, err := f.m.Recompute(ctx, "nope"); !errors.Is(err, ErrParentNotFound) {
		t.Fatalf("recompute of an unknown parent: %v", err)
	}
}

func TestMeanRecomputeUnderWrites(t *testing.T) {
	ctx := context.Background()
	f := newFixture(t, "p1")
	const workers, each = 4, 50
	var wg sync.WaitGroup
	errs := make(chan error, workers+1)
	for range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for range each {
				if _, err := f.m.Insert(ctx, bson.D{{Key: "productId", Value: "p1"}, {Key: "stars", Value: int32(3)}}); err != nil {
					errs <- err
					return
				}
			}
		}()
	}
	done := make(chan struct{})
	go func() {
		defer close(done)
		for i := 0; i < 20; i++ {
			if _, err := f.m.Recompute(ctx, "p1"); err != nil && !errors.Is(err, ErrContention) {
				errs <- err
				return
			}
		}
	}()
	wg.Wait()
	<-done
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	// Writers caught between their two writes may have been counted twice
	// or not at all (doc.go); once quiet, one Repair converges.
	if _, err := f.m.Repair(ctx); err != nil {
		t.Fatal(err)
	}
	requireStored(t, f.stored(t, "p1"), 3*workers*each, workers*each)
}

func TestMeanRecomputeIndexUsed(t *testing.T) {
	ctx := context.Background()
	f := newFixture(t, "p1", "p2", "p3")
	for _, p := range []string{"p1", "p2", "p3"} {
		for s := range 20 {
			f.rate(t, p, s%5+1)
		}
	}
	scan := bson.D{{Key: "find", Value: "ratings"}, {Key: "filter", Value: bson.D{{Key: "productId", Value: "p2"}}},
		{Key: "projection", Value: bson.D{{Key: "_id", Value: 0}, {Key: "stars", Value: 1}}}}
	if res := explaintest.Run(t, f.db, scan); res.HasStage("COLLSCAN") || !res.Uses("productId_1") {
		t.Fatalf("plan %v: want a scan of productId_1 and no COLLSCAN", res)
	}
	if err := f.ratings.Indexes().DropOne(ctx, "productId_1"); err != nil {
		t.Fatal(err)
	}
	if res := explaintest.Run(t, f.db, scan); !res.HasStage("COLLSCAN") {
		t.Fatalf("plan without the index: %v", res)
	}
}
