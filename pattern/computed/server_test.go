package computed

import (
	"context"
	"errors"
	"testing"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo"
)

// drift breaks the totals four ways without Apply: p1 gains a child, p2
// loses all its children, p3's totals are overwritten, p4 stays right;
// a child names a parent "ghost" that does not exist.
func drift(t *testing.T, f *fixture) {
	t.Helper()
	ctx := context.Background()
	f.rate(t, "p1", 4)
	f.rate(t, "p2", 2)
	f.rate(t, "p2", 5)
	f.rate(t, "p3", 3)
	f.rate(t, "p4", 1)
	if _, err := f.reviews.InsertMany(ctx, []any{review{Product: "p1", Stars: 1}, review{Product: "ghost", Stars: 5}, review{Product: "ghost", Stars: 3}}); err != nil {
		t.Fatal(err)
	}
	if _, err := f.reviews.DeleteMany(ctx, bson.D{{Key: "productId", Value: "p2"}}); err != nil {
		t.Fatal(err)
	}
	if _, err := f.products.UpdateOne(ctx, bson.D{{Key: "_id", Value: "p3"}}, bson.D{{Key: "$set", Value: bson.D{{Key: "rating.sum", Value: int64(99)}}}}); err != nil {
		t.Fatal(err)
	}
}

// driftedIDs lists a report's drifted parents.
func driftedIDs(rep Report) string {
	s := ""
	for _, d := range rep.Drifted {
		s += d.ID.StringValue() + " "
	}
	return s
}

// TestVerifyAllAgreesWithVerify: the server-side comparison reports the
// same parents and orphans as the client-side one.
func TestVerifyAllAgreesWithVerify(t *testing.T) {
	ctx := context.Background()
	f := newFixture(t, allConfig(), "p1", "p2", "p3", "p4", "p5")
	drift(t, f)
	want, err := f.r.Verify(ctx)
	if err != nil {
		t.Fatal(err)
	}
	got, err := f.r.VerifyAll(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if driftedIDs(got) != "p1 p2 p3 " || driftedIDs(got) != driftedIDs(want) || got.Checked != 5 || got.Orphans != 2 || want.Orphans != 2 {
		t.Fatalf("VerifyAll %q checked %d orphans %d; Verify %q orphans %d", driftedIDs(got), got.Checked, got.Orphans, driftedIDs(want), want.Orphans)
	}
	for i := range got.Drifted {
		if got.Drifted[i].Why != want.Drifted[i].Why {
			t.Errorf("%v: %q, Verify says %q", got.Drifted[i].ID, got.Drifted[i].Why, want.Drifted[i].Why)
		}
	}
	names, err := f.db.ListCollectionNames(ctx, bson.D{})
	if err != nil || len(names) != 2 {
		t.Fatalf("collections left behind: %v, %v", names, err)
	}
}

// TestRecomputeAllRepairsEverything: in batches of two, with a resume
// in the middle, the server-side recompute fixes every drift, resets the
// parent whose children all disappeared to the empty rollup, keeps the
// stored types of the inline path, bumps rev, and is idempotent.
func TestRecomputeAllRepairsEverything(t *testing.T) {
	ctx := context.Background()
	f := newFixture(t, allConfig(), "p1", "p2", "p3", "p4", "p5")
	drift(t, f)
	stop := errors.New("stop")
	rep, err := f.r.RecomputeAll(ctx, RecomputeOptions{Batch: 2, OnBatch: func(last bson.RawValue, done int64) error {
		if done == 2 {
			return stop
		}
		return nil
	}})
	if !errors.Is(err, stop) || rep.Last.StringValue() != "p2" {
		t.Fatalf("interrupted run: %+v, %v", rep, err)
	}
	rep, err = f.r.RecomputeAll(ctx, RecomputeOptions{Batch: 2, After: rep.Last})
	if err != nil || rep.Parents != 3 || rep.Batches != 2 {
		t.Fatalf("resumed run: %+v, %v", rep, err)
	}
	requireNoDrift(t, f)
	f.requireTotals(t, "p1", Totals{Sum: 5, Count: 2, Min: 1, Max: 4})
	f.requireTotals(t, "p2", Totals{})
	f.requireTotals(t, "p3", Totals{Sum: 3, Count: 1, Min: 3, Max: 3})
	if got := f.stored(t, "p2").String(); got != `{"count": {"$numberLong":"0"},"rev": {"$numberLong":"3"},"sum": {"$numberLong":"0"}}` {
		t.Fatalf("p2 reset to %s", got)
	}
	if _, err := f.products.FindOne(ctx, bson.D{{Key: "_id", Value: "ghost"}}).Raw(); !errors.Is(err, mongo.ErrNoDocuments) {
		t.Fatalf("discard created a stub: %v", err)
	}
	before := map[string]string{}
	for _, p := range []string{"p1", "p2", "p3", "p4", "p5"} {
		before[p] = f.stored(t, p).Lookup("sum").String()
	}
	if _, err := f.r.RecomputeAll(ctx, RecomputeOptions{}); err != nil {
		t.Fatal(err)
	}
	for p, s := range before {
		if got := f.stored(t, p).Lookup("sum").String(); got != s {
			t.Errorf("%s: second run changed sum %s to %s", p, s, got)
		}
	}
	requireNoDrift(t, f)
}

// TestRecomputeAllKeepsOtherTargetFields: a dotted target keeps its
// siblings; only the kept statistics are written.
func TestRecomputeAllKeepsOtherTargetFields(t *testing.T) {
	ctx := context.Background()
	f := newFixture(t, Config{Parent: "productId", Value: "stars", Target: "stats.rating"}, "p1")
	if _, err := f.products.UpdateOne(ctx, bson.D{{Key: "_id", Value: "p1"}}, bson.D{{Key: "$set", Value: bson.D{{Key: "stats.views", Value: 7}, {Key: "stats.rating.note", Value: "x"}}}}); err != nil {
		t.Fatal(err)
	}
	if _, err := f.reviews.InsertMany(ctx, []any{review{Product: "p1", Stars: 2}, review{Product: "p1", Stars: 3}}); err != nil {
		t.Fatal(err)
	}
	if _, err := f.r.RecomputeAll(ctx, RecomputeOptions{}); err != nil {
		t.Fatal(err)
	}
	raw, err := f.products.FindOne(ctx, bson.D{{Key: "_id", Value: "p1"}}).Raw()
	if err != nil {
		t.Fatal(err)
	}
	// ($set creates stats.rating before stats.views: new fields in name order.)
	want := `{"rating": {"note": "x","sum": {"$numberLong":"5"},"count": {"$numberLong":"2"},"rev": {"$numberLong":"1"}},"views": {"$numberInt":"7"}}`
	if got := raw.Lookup("stats").String(); got != want {
		t.Fatalf("stats = %s\nwant %s", got, want)
	}
}

// TestRecomputeAllWhenNotMatched: "insert" creates a stub parent for
// orphaned children and leaves existing parents alone; "fail" reports
// MergeStageNoMatchingDocument (13113) after the existing parents are
// done.
func TestRecomputeAllWhenNotMatched(t *testing.T) {
	ctx := context.Background()
	for _, wnm := range []string{"insert", "fail"} {
		cfg := allConfig()
		cfg.WhenNotMatched = wnm
		f := newFixture(t, cfg, "p1", "p2", "p3", "p4", "p5")
		drift(t, f)
		_, err := f.r.RecomputeAll(ctx, RecomputeOptions{})
		f.requireTotals(t, "p1", Totals{Sum: 5, Count: 2, Min: 1, Max: 4})
		switch wnm {
		case "insert":
			if err != nil {
				t.Fatal(err)
			}
			f.requireTotals(t, "ghost", Totals{Sum: 8, Count: 2, Min: 3, Max: 5})
			raw, _ := f.products.FindOne(ctx, bson.D{{Key: "_id", Value: "ghost"}}).Raw()
			if got := raw.String(); got != `{"_id": "ghost","rating": {"sum": {"$numberLong":"8"},"count": {"$numberLong":"2"},"min": {"$numberInt":"3"},"max": {"$numberInt":"5"}}}` {
				t.Fatalf("stub = %s", got)
			}
			f.requireClean(t)
		case "fail":
			var ce mongo.CommandError
			if !errors.As(err, &ce) || ce.Code != 13113 {
				t.Fatalf("fail: %v", err)
			}
		}
	}
	if err := (Config{Parent: "a", Value: "b", Target: "c", WhenNotMatched: "merge"}).Validate(); !errors.Is(err, ErrInvalidConfig) {
		t.Fatalf("WhenNotMatched merge: %v", err)
	}
}

// TestRecomputeAllTypes: a double anywhere makes the sum a double, as
// the inline path stores it.
func TestRecomputeAllTypes(t *testing.T) {
	ctx := context.Background()
	f := newFixture(t, allConfig(), "p1")
	if _, err := f.reviews.InsertMany(ctx, []any{bson.D{{Key: "productId", Value: "p1"}, {Key: "stars", Value: 2.5}}, review{Product: "p1", Stars: 1}}); err != nil {
		t.Fatal(err)
	}
	if _, err := f.r.RecomputeAll(ctx, RecomputeOptions{}); err != nil {
		t.Fatal(err)
	}
	if v := f.stored(t, "p1").Lookup("sum"); v.Type != bson.TypeDouble || v.Double() != 3.5 {
		t.Fatalf("sum = %v", v)
	}
	f.requireClean(t)
}

// requireNoDrift checks that Verify finds no drifted parent (orphans,
// which count nowhere under discard, allowed).
func requireNoDrift(t *testing.T, f *fixture) {
	t.Helper()
	rep, err := f.r.Verify(context.Background())
	if err != nil || len(rep.Drifted) != 0 {
		t.Fatalf("verify: %+v, %v", rep, err)
	}
}
