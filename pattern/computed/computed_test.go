package computed

import (
	"context"
	"errors"
	"strings"
	"testing"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo"

	"github.com/formworkdb/formwork/internal/testenv"
	"github.com/formworkdb/formwork/pattern"
)

func TestConfigValidate(t *testing.T) {
	if err := allConfig().Validate(); err != nil {
		t.Fatal(err)
	}
	if err := (Config{Parent: "a.p", Value: "a.v", Target: "stats.rating"}).Validate(); err != nil {
		t.Fatalf("dotted paths: %v", err)
	}
	for _, c := range []Config{
		{Parent: "", Value: "stars", Target: "rating"},
		{Parent: "productId", Value: "a..b", Target: "rating"},
		{Parent: "productId", Value: "stars", Target: "_id"},
		{Parent: "productId", Value: "stars", Target: "_id.x"},
		{Parent: "productId", Value: "stars", Target: "$r"},
		{Parent: "productId", Value: "stars", Target: "r.$x"},
		{Parent: "x", Value: "x", Target: "rating"},
		{Parent: "x", Value: "x.y", Target: "rating"},
		{Parent: "productId", Value: "stars", Target: "rating", Stats: 1 << 6},
		{Parent: "productId", Value: "stars", Target: "rating", OnParentDelete: 7},
		{Parent: "productId", Value: "stars", Target: strings.Repeat("a.", 40) + "a"},
	} {
		if err := c.Validate(); !errors.Is(err, ErrInvalidConfig) {
			t.Errorf("Validate(%+v) = %v, want ErrInvalidConfig", c, err)
		}
		if _, err := New[bson.D, bson.D](testenv.Database(t).Collection("p"), testenv.Database(t).Collection("c"), c); !errors.Is(err, ErrInvalidConfig) {
			t.Errorf("New(%+v) = %v, want ErrInvalidConfig", c, err)
		}
	}
	if got := (Sum | Min).String(); got != "sum|min" {
		t.Errorf("Stat string %q", got)
	}
	if !errors.Is(ErrParentNotFound, pattern.ErrParentNotFound) || !errors.Is(ErrHasChildren, pattern.ErrHasChildren) || !errors.Is(ErrNotFound, pattern.ErrNotFound) {
		t.Error("sentinels are not the pattern package's")
	}
}

func TestRollupInsertEditMoveDelete(t *testing.T) {
	ctx := context.Background()
	f := newFixture(t, allConfig(), "p1", "p2")
	r5 := f.rate(t, "p1", 5)
	r3 := f.rate(t, "p1", 3)
	r4 := f.rate(t, "p1", 4)
	f.rate(t, "p2", 1)
	f.requireTotals(t, "p1", Totals{Sum: 12, Count: 3, Min: 3, Max: 5})

	// Edit the min upwards: the min is recomputed from the children.
	got, err := f.r.Edit(ctx, r3, 4)
	if err != nil || got.Stars != 4 || got.Product != "p1" {
		t.Fatalf("edit: %+v, %v", got, err)
	}
	f.requireTotals(t, "p1", Totals{Sum: 13, Count: 3, Min: 4, Max: 5})
	// Edit the max downwards.
	if _, err := f.r.Edit(ctx, r5, 2); err != nil {
		t.Fatal(err)
	}
	f.requireTotals(t, "p1", Totals{Sum: 10, Count: 3, Min: 2, Max: 4})
	// An edit that changes nothing writes nothing (the revision stays).
	rev := f.stored(t, "p1").Lookup("rev").Int64()
	if _, err := f.r.Edit(ctx, r5, 2); err != nil {
		t.Fatal(err)
	}
	if _, err := f.r.Update(ctx, r5, bson.D{{Key: "$set", Value: bson.D{{Key: "author", Value: "ann"}}}}); err != nil {
		t.Fatal(err)
	}
	if again := f.stored(t, "p1").Lookup("rev").Int64(); again != rev {
		t.Fatalf("revision %d -> %d on writes that change no total", rev, again)
	}

	// Move the 4 to p2: subtracted from p1 (its max), added to p2.
	moved, err := f.r.Move(ctx, r4, "p2")
	if err != nil || moved.Product != "p2" {
		t.Fatalf("move: %+v, %v", moved, err)
	}
	f.requireTotals(t, "p1", Totals{Sum: 6, Count: 2, Min: 2, Max: 4}) // r3 is 4 now
	f.requireTotals(t, "p2", Totals{Sum: 5, Count: 2, Min: 1, Max: 4})
	// Move and edit in one update.
	if _, err := f.r.Update(ctx, r3, bson.D{{Key: "$set", Value: bson.D{{Key: "productId", Value: "p2"}, {Key: "stars", Value: 5}}}}); err != nil {
		t.Fatal(err)
	}
	f.requireTotals(t, "p1", Totals{Sum: 2, Count: 1, Min: 2, Max: 2})
	f.requireTotals(t, "p2", Totals{Sum: 10, Count: 3, Min: 1, Max: 5})

	// Delete the last child of p1: no min or max left.
	gone, err := f.r.Delete(ctx, r5)
	if err != nil || gone.Stars != 2 {
		t.Fatalf("delete: %+v, %v", gone, err)
	}
	f.requireTotals(t, "p1", Totals{})
	if avg, ok := (Totals{}).Average(); ok || avg != 0 {
		t.Fatalf("average of nothing: %v %v", avg, ok)
	}
	p2, err := f.r.Parent(ctx, "p2")
	if err != nil || p2.Name != "product p2" || p2.Rating != (Totals{Sum: 10, Count: 3, Min: 1, Max: 5}) {
		t.Fatalf("typed parent: %+v, %v", p2, err)
	}
	if avg, ok := p2.Rating.Average(); !ok || avg != 10.0/3 {
		t.Fatalf("average %v %v", avg, ok)
	}
	f.requireClean(t)

	if _, err := f.r.Delete(ctx, r5); !errors.Is(err, ErrNotFound) {
		t.Fatalf("second delete = %v", err)
	}
	if _, err := f.r.Edit(ctx, r5, 2); !errors.Is(err, ErrNotFound) {
		t.Fatalf("edit of a deleted child = %v", err)
	}
	if _, err := f.r.Edit(ctx, r3, "two"); !errors.Is(err, ErrNotNumber) {
		t.Fatalf("edit to a string = %v", err)
	}
	if _, err := f.r.Move(ctx, r3, "nope"); !errors.Is(err, ErrParentNotFound) {
		t.Fatalf("move to an unknown parent = %v", err)
	}
	// A move to a missing parent (here through a bare update) leaves the
	// child counting nowhere; moving it back counts it again.
	if _, err := f.r.Update(ctx, r3, bson.D{{Key: "$set", Value: bson.D{{Key: "productId", Value: "nope"}}}}); !errors.Is(err, ErrParentNotFound) {
		t.Fatalf("update to an unknown parent = %v", err)
	}
	// In a transaction the refused update is taken back: the child stays
	// in p2 and nothing is orphaned.
	wantP2, wantOrphans := Totals{Sum: 5, Count: 2, Min: 1, Max: 4}, int64(1)
	if txn, _ := pattern.Transactions(ctx, f.products.Database().Client()); txn {
		wantP2, wantOrphans = Totals{Sum: 10, Count: 3, Min: 1, Max: 5}, 0
	}
	f.requireTotals(t, "p2", wantP2)
	if rep, err := f.r.Verify(ctx); err != nil || len(rep.Drifted) != 0 || rep.Orphans != wantOrphans {
		t.Fatalf("verify with an orphan: %+v, %v", rep, err)
	}
	if _, err := f.r.Move(ctx, r3, "p2"); err != nil {
		t.Fatal(err)
	}
	f.requireTotals(t, "p2", Totals{Sum: 10, Count: 3, Min: 1, Max: 5})
	if _, err := f.r.Get(ctx, "nope"); !errors.Is(err, ErrParentNotFound) {
		t.Fatalf("Get of an unknown parent = %v", err)
	}
	if _, err := f.r.Parent(ctx, "nope"); !errors.Is(err, ErrParentNotFound) {
		t.Fatalf("Parent of an unknown parent = %v", err)
	}
	f.requireClean(t)
}

func TestRollupInsertRejects(t *testing.T) {
	ctx := context.Background()
	f := newFixture(t, allConfig(), "p1")
	if _, err := f.r.Insert(ctx, review{Product: "nope", Stars: 4}); !errors.Is(err, ErrParentNotFound) {
		t.Fatalf("Insert for an unknown parent = %v", err)
	}
	d, err := New[bson.D, bson.D](f.products, f.reviews, allConfig())
	if err != nil {
		t.Fatal(err)
	}
	if _, err := d.Insert(ctx, bson.D{{Key: "productId", Value: "p1"}, {Key: "stars", Value: "five"}}); !errors.Is(err, ErrNotNumber) {
		t.Fatalf("Insert of a string = %v", err)
	}
	if _, err := d.Insert(ctx, bson.D{{Key: "stars", Value: 4}}); err == nil {
		t.Fatal("Insert without a parent succeeded")
	}
	if _, err := d.InsertMany(ctx, []bson.D{{{Key: "productId", Value: "p1"}, {Key: "stars", Value: 4}}, {{Key: "productId", Value: "nope"}, {Key: "stars", Value: 4}}}); !errors.Is(err, ErrParentNotFound) {
		t.Fatalf("InsertMany naming an unknown parent = %v", err)
	}
	if n, _ := f.reviews.CountDocuments(ctx, bson.D{}); n != 0 {
		t.Fatalf("%d reviews stored after rejected inserts", n)
	}
	f.requireTotals(t, "p1", Totals{})
}

// TestRollupWideningAndTypes keeps int32, int64 and double values: sums
// stay NumberLong until a double arrives; non-numbers count nowhere.
func TestRollupWideningAndTypes(t *testing.T) {
	ctx := context.Background()
	db := testenv.Database(t)
	products, reviews := db.Collection("products"), db.Collection("reviews")
	r, err := New[bson.D, bson.D](products, reviews, Config{Parent: "p", Value: "v", Target: "stats.t", Stats: Sum | Count | Min | Max})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := products.InsertOne(ctx, bson.D{{Key: "_id", Value: 1}}); err != nil {
		t.Fatal(err)
	}
	for _, v := range []any{int32(2), int64(1) << 40} {
		if _, err := r.Insert(ctx, bson.D{{Key: "p", Value: 1}, {Key: "v", Value: v}}); err != nil {
			t.Fatal(err)
		}
	}
	doc, _ := products.FindOne(ctx, bson.D{}).Raw()
	if s := doc.Lookup("stats", "t", "sum"); s.Type != bson.TypeInt64 || s.Int64() != 2+1<<40 {
		t.Fatalf("integer sum %v", doc)
	}
	// The parent is found by a double _id equal to its int32 _id, as an
	// equality match finds it.
	if _, err := r.Insert(ctx, bson.D{{Key: "p", Value: 1.0}, {Key: "v", Value: 0.5}}); err != nil {
		t.Fatal(err)
	}
	// A child stored with a string value (a bypass write) counts nowhere.
	src := pattern.NewSource[bson.D](reviews, r)
	if _, err := src.Insert(ctx, bson.D{{Key: "p", Value: 1}, {Key: "v", Value: "n/a"}}); err != nil {
		t.Fatal(err)
	}
	tot, err := r.Get(ctx, 1)
	if err != nil || tot != (Totals{Sum: 2.5 + 1<<40, Count: 3, Min: 0.5, Max: 1 << 40}) {
		t.Fatalf("totals %+v, %v", tot, err)
	}
	doc, _ = products.FindOne(ctx, bson.D{}).Raw()
	if s := doc.Lookup("stats", "t", "sum"); s.Type != bson.TypeDouble {
		t.Fatalf("sum after a double: %v", doc)
	}
	if rep, err := r.Verify(ctx); err != nil || len(rep.Drifted) != 0 {
		t.Fatalf("verify: %+v, %v", rep, err)
	}
}

// TestRollupTypeMismatch: a stored sum of the wrong type fails the $inc
// with TypeMismatch (14) and advice to Recompute; Repair fixes it.
func TestRollupTypeMismatch(t *testing.T) {
	ctx := context.Background()
	f := newFixture(t, allConfig(), "p1")
	if _, err := f.products.UpdateOne(ctx, bson.D{{Key: "_id", Value: "p1"}},
		bson.D{{Key: "$set", Value: bson.D{{Key: "rating", Value: bson.D{{Key: "sum", Value: "lots"}, {Key: "count", Value: int64(1)}}}}}}); err != nil {
		t.Fatal(err)
	}
	_, err := f.r.Insert(ctx, review{Product: "p1", Stars: 4})
	var se mongo.ServerError
	if !errors.As(err, &se) || !se.HasErrorCode(14) || !strings.Contains(err.Error(), "Recompute") {
		t.Fatalf("Insert onto a string sum = %v, want TypeMismatch (14) and advice to Recompute", err)
	}
	if _, err := f.r.Get(ctx, "p1"); !errors.Is(err, ErrNotNumber) {
		t.Fatalf("Get of a string sum = %v", err)
	}
	rep, err := f.r.Repair(ctx)
	if err != nil || rep.Repaired != 1 {
		t.Fatalf("repair: %+v, %v", rep, err)
	}
	// In a transaction the failed insert took its child back with it.
	want := Totals{Sum: 4, Count: 1, Min: 4, Max: 4}
	if txn, _ := pattern.Transactions(ctx, f.products.Database().Client()); txn {
		want = Totals{}
	}
	f.requireTotals(t, "p1", want)
}

// TestRollupStatsSubset keeps only what Stats names.
func TestRollupStatsSubset(t *testing.T) {
	ctx := context.Background()
	f := newFixture(t, Config{Parent: "productId", Value: "stars", Target: "rating", Stats: Max}, "p1")
	a := f.rate(t, "p1", 3)
	f.rate(t, "p1", 5)
	if _, err := f.r.Delete(ctx, f.onlyOf(t, "p1", 5)); err != nil {
		t.Fatal(err)
	}
	s := f.stored(t, "p1")
	if _, err := s.LookupErr("sum"); err == nil {
		t.Fatalf("stored %v keeps a sum", s)
	}
	if v := s.Lookup("max"); v.AsInt64() != 3 {
		t.Fatalf("stored %v, want max 3", s)
	}
	if _, err := f.r.Delete(ctx, a); err != nil {
		t.Fatal(err)
	}
	if _, err := f.stored(t, "p1").LookupErr("max"); err == nil {
		t.Fatalf("max left after the last child: %v", f.stored(t, "p1"))
	}
	f.requireClean(t)
	// The zero Stats keeps sum and count.
	if got := (Config{}).withDefaults().Stats; got != Sum|Count {
		t.Fatalf("default stats %v", got)
	}
}

func (f *fixture) onlyOf(t testing.TB, p string, stars int) any {
	t.Helper()
	var r review
	if err := f.reviews.FindOne(context.Background(), bson.D{{Key: "productId", Value: p}, {Key: "stars", Value: stars}}).Decode(&r); err != nil {
		t.Fatal(err)
	}
	return r.ID
}

// TestTotalsMarshal: a new parent inserted from its struct stores no min
// or max, so the first child's value becomes both.
func TestTotalsMarshal(t *testing.T) {
	ctx := context.Background()
	f := newFixture(t, allConfig())
	if _, err := f.products.InsertOne(ctx, product{ID: "z", Rating: Totals{Sum: 0}}); err != nil {
		t.Fatal(err)
	}
	if _, err := f.stored(t, "z").LookupErr("min"); err == nil {
		t.Fatalf("zero totals stored a min: %v", f.stored(t, "z"))
	}
	raw, err := bson.Marshal(product{ID: "y", Rating: Totals{Sum: 3, Count: 1, Min: 0, Max: 3}})
	if err != nil {
		t.Fatal(err)
	}
	if v := bson.Raw(raw).Lookup("rating", "min"); v.Type != bson.TypeDouble || v.Double() != 0 {
		t.Fatalf("a zero min with children is not stored: %v", bson.Raw(raw))
	}
	f.rate(t, "z", 7)
	f.requireTotals(t, "z", Totals{Sum: 7, Count: 1, Min: 7, Max: 7})
}
