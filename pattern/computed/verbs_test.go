package computed

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"testing"

	"go.mongodb.org/mongo-driver/v2/bson"

	"github.com/formworkdb/formwork/internal/explaintest"
	"github.com/formworkdb/formwork/internal/testenv"
)

func TestRollupVerifyRepair(t *testing.T) {
	ctx := context.Background()
	f := newFixture(t, allConfig(), "a", "b", "c", "d", "e", "f")
	for _, s := range []int{5, 4, 4} {
		f.rate(t, "a", s)
		f.rate(t, "b", s)
		f.rate(t, "f", s)
	}
	must := func(_ any, err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	// b lost an $inc; c's reviews bypassed the pattern; d lost all its
	// reviews but kept its totals; e never had any; f's max is stale.
	// Two orphans.
	must(f.products.UpdateOne(ctx, bson.D{{Key: "_id", Value: "b"}}, bson.D{{Key: "$inc", Value: bson.D{{Key: "rating.sum", Value: int64(-4)}, {Key: "rating.count", Value: int64(-1)}}}}))
	must(f.reviews.InsertMany(ctx, []any{
		bson.D{{Key: "productId", Value: "c"}, {Key: "stars", Value: int32(2)}},
		bson.D{{Key: "productId", Value: "c"}, {Key: "stars", Value: int64(3)}},
		bson.D{{Key: "productId", Value: "c"}, {Key: "stars", Value: "n/a"}},
		bson.D{{Key: "productId", Value: "gone"}, {Key: "stars", Value: int32(1)}},
		bson.D{{Key: "productId", Value: "gone"}, {Key: "stars", Value: int32(1)}},
	}))
	must(f.products.UpdateOne(ctx, bson.D{{Key: "_id", Value: "d"}}, bson.D{{Key: "$set", Value: bson.D{{Key: "rating", Value: bson.D{{Key: "sum", Value: int64(9)}, {Key: "count", Value: int64(2)}}}}}}))
	must(f.products.UpdateOne(ctx, bson.D{{Key: "_id", Value: "f"}}, bson.D{{Key: "$set", Value: bson.D{{Key: "rating.max", Value: int64(7)}}}}))

	rep, err := f.r.Verify(ctx)
	if err != nil {
		t.Fatal(err)
	}
	var drifted []string
	for _, d := range rep.Drifted {
		drifted = append(drifted, d.ID.StringValue())
	}
	if rep.Checked != 6 || rep.Orphans != 2 || !slices.Equal(drifted, []string{"b", "c", "d", "f"}) {
		t.Fatalf("verify: %+v (drifted %v); want 6 checked, 2 orphans, b c d f drifted", rep, drifted)
	}
	if d := rep.Drifted[1]; d.Want != (Totals{Sum: 5, Count: 2, Min: 2, Max: 3}) || d.Stored != (Totals{}) {
		t.Fatalf("drift of c: %+v; want stored 0/0, want sum 5 of 2 (a string counts nowhere)", d)
	}
	if d := rep.Drifted[3]; d.Why != "max 7 want 5" {
		t.Fatalf("drift of f: %q", d.Why)
	}
	res, err := f.r.Check(ctx, false)
	if err != nil || res.OK() || res.Problems != 4 || res.Checked != 6 || res.Name != "computed products.rating" || len(res.Details) != 5 {
		t.Fatalf("check: %+v, %v", res, err)
	}
	res, err = f.r.Check(ctx, true)
	if err != nil || res.Repaired != 4 {
		t.Fatalf("check with repair: %+v, %v", res, err)
	}
	f.requireTotals(t, "b", Totals{Sum: 13, Count: 3, Min: 4, Max: 5})
	f.requireTotals(t, "c", Totals{Sum: 5, Count: 2, Min: 2, Max: 3})
	f.requireTotals(t, "d", Totals{})
	f.requireTotals(t, "f", Totals{Sum: 13, Count: 3, Min: 4, Max: 5})
	if res, err := f.r.Check(ctx, false); err != nil || !res.OK() {
		t.Fatalf("check after repair: %+v, %v", res, err)
	}

	// Recompute is idempotent.
	for range 2 {
		if tot, err := f.r.Recompute(ctx, "a"); err != nil || tot != (Totals{Sum: 13, Count: 3, Min: 4, Max: 5}) {
			t.Fatalf("recompute: %+v, %v", tot, err)
		}
	}
	f.requireTotals(t, "a", Totals{Sum: 13, Count: 3, Min: 4, Max: 5})
	if _, err := f.r.Recompute(ctx, "nope"); !errors.Is(err, ErrParentNotFound) {
		t.Fatalf("recompute of an unknown parent: %v", err)
	}
}

func TestRollupDeleteParent(t *testing.T) {
	ctx := context.Background()
	for _, policy := range []Policy{Refuse, Cascade, Detach} {
		t.Run(policy.String(), func(t *testing.T) {
			cfg := allConfig()
			cfg.OnParentDelete = policy
			f := newFixture(t, cfg, "p1", "p2", "empty")
			f.rate(t, "p1", 3)
			f.rate(t, "p1", 4)
			f.rate(t, "p2", 5)
			if n, err := f.r.DeleteParent(ctx, "empty"); err != nil || n != 0 {
				t.Fatalf("delete of a parent with no children: %d, %v", n, err)
			}
			n, err := f.r.DeleteParent(ctx, "p1")
			left, _ := f.reviews.CountDocuments(ctx, bson.D{{Key: "productId", Value: "p1"}})
			_, gerr := f.r.Get(ctx, "p1")
			switch policy {
			case Refuse:
				if !errors.Is(err, ErrHasChildren) || left != 2 || gerr != nil {
					t.Fatalf("refuse: %d, %v; %d children left, get %v", n, err, left, gerr)
				}
			case Cascade:
				if err != nil || n != 2 || left != 0 || !errors.Is(gerr, ErrParentNotFound) {
					t.Fatalf("cascade: %d, %v; %d children left, get %v", n, err, left, gerr)
				}
			case Detach:
				if err != nil || n != 0 || left != 2 || !errors.Is(gerr, ErrParentNotFound) {
					t.Fatalf("detach: %d, %v; %d children left, get %v", n, err, left, gerr)
				}
				// A detached child can still be edited, moved and deleted.
				id := f.onlyOf(t, "p1", 3)
				if _, err := f.r.Edit(ctx, id, 1); err != nil {
					t.Fatal(err)
				}
				if _, err := f.r.Move(ctx, id, "p2"); err != nil {
					t.Fatal(err)
				}
				f.requireTotals(t, "p2", Totals{Sum: 6, Count: 2, Min: 1, Max: 5})
				if _, err := f.r.Delete(ctx, f.onlyOf(t, "p1", 4)); err != nil {
					t.Fatal(err)
				}
			}
			if _, err := f.r.DeleteParent(ctx, "nope"); !errors.Is(err, ErrParentNotFound) {
				t.Fatalf("delete of an unknown parent: %v", err)
			}
			res, err := f.r.Check(ctx, false)
			if err != nil || !res.OK() {
				t.Fatalf("check: %+v, %v", res, err)
			}
		})
	}
}

// TestRollupCascadeRepairOrphans: under Cascade, orphans (a cascade a
// failure interrupted, or a bypass write) are problems and Repair deletes
// them; under Detach they are listed, not problems.
func TestRollupCascadeRepairOrphans(t *testing.T) {
	ctx := context.Background()
	for _, policy := range []Policy{Cascade, Detach} {
		t.Run(policy.String(), func(t *testing.T) {
			cfg := allConfig()
			cfg.OnParentDelete = policy
			f := newFixture(t, cfg, "p1")
			f.rate(t, "p1", 3)
			if _, err := f.reviews.InsertOne(ctx, review{Product: "gone", Stars: 2}); err != nil {
				t.Fatal(err)
			}
			res, err := f.r.Check(ctx, false)
			if err != nil || res.OK() != (policy == Detach) || len(res.Details) != 1 {
				t.Fatalf("check: %+v, %v", res, err)
			}
			res, err = f.r.Check(ctx, true)
			left, _ := f.reviews.CountDocuments(ctx, bson.D{{Key: "productId", Value: "gone"}})
			if err != nil || (policy == Cascade) != (left == 0 && res.Repaired == 1) {
				t.Fatalf("repair: %+v, %v; %d orphans left", res, err, left)
			}
		})
	}
}

// TestRollupInsertManyOneUpdatePerParent loads children in bulk: one
// insertMany and one update per parent, whatever the number of children.
func TestRollupInsertManyOneUpdatePerParent(t *testing.T) {
	ctx := context.Background()
	db, count := testenv.Monitored(t)
	f := fixtureOn(t, db, allConfig(), "p1", "p2", "p3")
	var rs []review
	for i := range 300 {
		rs = append(rs, review{Product: fmt.Sprint("p", i%3+1), Stars: i % 7})
	}
	count.Reset()
	ids, err := f.r.InsertMany(ctx, rs)
	if err != nil || len(ids) != 300 {
		t.Fatalf("insert many: %d ids, %v", len(ids), err)
	}
	if n := count.Commands("update"); n != 3 {
		t.Fatalf("%d update commands for 3 parents, want 3", n)
	}
	if n := count.Commands("insert"); n != 1 {
		t.Fatalf("%d insert commands, want 1", n)
	}
	for _, p := range []string{"p1", "p2", "p3"} {
		f.requireTotals(t, p, f.fromChildren(t, p))
	}
	f.requireClean(t)
}

// TestRollupBackfill brings totals in for children loaded without the
// pattern, and resets parents that have none.
func TestRollupBackfill(t *testing.T) {
	ctx := context.Background()
	f := newFixture(t, allConfig())
	var ps, rs []any
	for p := range 1200 {
		ps = append(ps, product{ID: fmt.Sprint("p", p)})
		for s := range p % 4 {
			rs = append(rs, review{Product: fmt.Sprint("p", p), Stars: s + p%3})
		}
	}
	if _, err := f.products.InsertMany(ctx, ps); err != nil {
		t.Fatal(err)
	}
	if _, err := f.reviews.InsertMany(ctx, rs); err != nil {
		t.Fatal(err)
	}
	if _, err := f.products.UpdateOne(ctx, bson.D{{Key: "_id", Value: "p0"}}, bson.D{{Key: "$set", Value: bson.D{{Key: "rating.sum", Value: int64(40)}}}}); err != nil {
		t.Fatal(err)
	}
	n, err := f.r.Backfill(ctx)
	if err != nil || n != 1200 {
		t.Fatalf("backfill: %d, %v", n, err)
	}
	for _, p := range []string{"p0", "p1", "p7", "p1199"} {
		f.requireTotals(t, p, f.fromChildren(t, p))
	}
	f.requireClean(t)
}

// TestRollupPlans: Recompute's $match and the min/max lookups use the
// {productId: 1, stars: 1} index, without a blocking sort.
func TestRollupPlans(t *testing.T) {
	f := newFixture(t, allConfig(), "p1", "p2", "p3")
	for _, p := range []string{"p1", "p2", "p3"} {
		for s := range 20 {
			f.rate(t, p, s%5+1)
		}
	}
	typed := bson.D{{Key: "$type", Value: numberTypes}}
	for _, dir := range []int{1, -1} {
		cmd := bson.D{{Key: "find", Value: "reviews"},
			{Key: "filter", Value: bson.D{{Key: "productId", Value: "p2"}, {Key: "stars", Value: typed}}},
			{Key: "sort", Value: bson.D{{Key: "productId", Value: dir}, {Key: "stars", Value: dir}}},
			{Key: "projection", Value: bson.D{{Key: "_id", Value: 0}, {Key: "stars", Value: 1}}},
			{Key: "limit", Value: 1}}
		if res := explaintest.Run(t, f.db, cmd); res.HasStage("COLLSCAN") || res.HasStage("SORT") || !res.Uses("productId_1_stars_1") {
			t.Fatalf("min/max plan (dir %d) %v: want an index scan of productId_1_stars_1, no COLLSCAN, no SORT", dir, res)
		}
		stats, err := f.db.RunCommand(context.Background(), bson.D{{Key: "explain", Value: cmd}, {Key: "verbosity", Value: "executionStats"}}).Raw()
		if err != nil {
			t.Fatal(err)
		}
		if keys := stats.Lookup("executionStats", "totalKeysExamined").AsInt64(); keys != 1 {
			t.Fatalf("min/max lookup (dir %d) examined %d keys of 20, want 1", dir, keys)
		}
	}
	cmd := bson.D{{Key: "aggregate", Value: "reviews"}, {Key: "pipeline", Value: bson.A{
		bson.D{{Key: "$match", Value: bson.D{{Key: "productId", Value: "p2"}, {Key: "stars", Value: typed}}}},
		bson.D{{Key: "$group", Value: bson.D{{Key: "_id", Value: nil}, {Key: "n", Value: bson.D{{Key: "$sum", Value: 1}}}}}},
	}}, {Key: "cursor", Value: bson.D{}}}
	if res := explaintest.Run(t, f.db, cmd); res.HasStage("COLLSCAN") || !res.Uses("productId_1_stars_1") {
		t.Fatalf("recompute plan %v: want an index scan, no COLLSCAN", res)
	}
}
