package computed

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"sync"
	"testing"

	"go.mongodb.org/mongo-driver/v2/bson"
)

// TestRollupConcurrentExact runs many goroutines that insert, edit,
// delete and move children of the same few parents; at the end every
// parent's sum, count, min and max equal what its children hold, computed
// here from the children as they are, with no Repair.
func TestRollupConcurrentExact(t *testing.T) {
	ctx := context.Background()
	parents := []string{"a", "b", "c"}
	f := newFixture(t, allConfig(), parents...)
	const workers, each = 12, 40
	var wg sync.WaitGroup
	errs := make(chan error, workers)
	for g := range workers {
		wg.Go(func() {
			rng := rand.New(rand.NewPCG(uint64(g), 7))
			var mine []any
			for range each {
				var err error
				switch op := rng.IntN(10); {
				case op < 4 || len(mine) == 0:
					var id any
					id, err = f.r.Insert(ctx, review{Product: parents[rng.IntN(len(parents))], Stars: rng.IntN(100) - 20})
					mine = append(mine, id)
				case op < 6:
					_, err = f.r.Edit(ctx, mine[rng.IntN(len(mine))], rng.IntN(100)-20)
				case op < 8:
					_, err = f.r.Move(ctx, mine[rng.IntN(len(mine))], parents[rng.IntN(len(parents))])
				default:
					i := rng.IntN(len(mine))
					_, err = f.r.Delete(ctx, mine[i])
					mine = append(mine[:i], mine[i+1:]...)
				}
				if err != nil {
					errs <- err
					return
				}
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	for _, p := range parents {
		f.requireTotals(t, p, f.fromChildren(t, p))
	}
	f.requireClean(t)
}

// fromChildren computes a parent's totals in Go from its children.
func (f *fixture) fromChildren(t testing.TB, p string) Totals {
	t.Helper()
	cur, err := f.reviews.Find(context.Background(), bson.D{{Key: "productId", Value: p}})
	if err != nil {
		t.Fatal(err)
	}
	var rs []review
	if err := cur.All(context.Background(), &rs); err != nil {
		t.Fatal(err)
	}
	var tot Totals
	for i, r := range rs {
		v := float64(r.Stars)
		tot.Sum += v
		tot.Count++
		if i == 0 || v < tot.Min {
			tot.Min = v
		}
		if i == 0 || v > tot.Max {
			tot.Max = v
		}
	}
	return tot
}

// TestRollupConcurrentMinDelete races deletes of the current minimum with
// inserts of values above it on one parent: the min recompute after each
// delete compare-and-sets on the revision, so no inserted value is lost
// from the min.
func TestRollupConcurrentMinDelete(t *testing.T) {
	ctx := context.Background()
	f := newFixture(t, allConfig(), "p")
	const n = 60
	ids := make([]any, n)
	for i := range n {
		ids[i] = f.rate(t, "p", 1000+i)
	}
	var wg sync.WaitGroup
	errs := make(chan error, 8)
	wg.Go(func() { // delete the smallest, one after another
		for _, id := range ids {
			if _, err := f.r.Delete(ctx, id); err != nil {
				errs <- err
				return
			}
		}
	})
	for g := range 4 {
		wg.Go(func() { // insert values below the remaining ones
			for i := range 15 {
				if _, err := f.r.Insert(ctx, review{Product: "p", Stars: 500 + g*100 + i}); err != nil {
					errs <- err
					return
				}
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	f.requireTotals(t, "p", Totals{Sum: 4*15*500 + 15*100*(0+1+2+3) + 4*(14*15/2), Count: 60, Min: 500, Max: 814})
	f.requireClean(t)
}

// TestRollupRecomputeUnderWrites runs Recompute and Repair while writers
// insert: Recompute never overwrites an Apply (compare-and-set on the
// revision); once quiet, one Repair converges.
func TestRollupRecomputeUnderWrites(t *testing.T) {
	ctx := context.Background()
	f := newFixture(t, allConfig(), "p1")
	const workers, each = 4, 50
	var wg sync.WaitGroup
	errs := make(chan error, workers+1)
	for range workers {
		wg.Go(func() {
			for range each {
				if _, err := f.r.Insert(ctx, review{Product: "p1", Stars: 3}); err != nil {
					errs <- err
					return
				}
			}
		})
	}
	wg.Go(func() {
		for range 20 {
			if _, err := f.r.Recompute(ctx, "p1"); err != nil && !errors.Is(err, ErrContention) {
				errs <- err
				return
			}
		}
	})
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	// Writers caught between their two writes may have been counted twice
	// (doc.go); once quiet, one Repair converges.
	if _, err := f.r.Repair(ctx); err != nil {
		t.Fatal(err)
	}
	f.requireTotals(t, "p1", Totals{Sum: 3 * workers * each, Count: workers * each, Min: 3, Max: 3})
}

// TestRollupConcurrentParentDelete deletes parents, under each policy,
// while writers insert, edit and move children of them: the surviving
// parents' totals are exact, and under Cascade, after Repair, no child
// names a missing parent.
func TestRollupConcurrentParentDelete(t *testing.T) {
	for _, policy := range []Policy{Refuse, Cascade, Detach} {
		t.Run(policy.String(), func(t *testing.T) {
			ctx := context.Background()
			cfg := allConfig()
			cfg.OnParentDelete = policy
			var parents []string
			for i := range 6 {
				parents = append(parents, fmt.Sprint("p", i))
			}
			f := newFixture(t, cfg, parents...)
			var wg sync.WaitGroup
			errs := make(chan error, 8)
			for g := range 4 {
				wg.Go(func() {
					for i := range 30 {
						id, err := f.r.Insert(ctx, review{Product: parents[(g+i)%len(parents)], Stars: i})
						if err == nil && i%3 == 0 {
							_, err = f.r.Edit(ctx, id, 30-i)
						}
						if err == nil && i%4 == 0 {
							_, err = f.r.Move(ctx, id, parents[(g+i+1)%len(parents)])
						}
						if errors.Is(err, ErrNotFound) && policy == Cascade {
							err = nil // deleted with its parent
						}
						if err != nil && !errors.Is(err, ErrParentNotFound) {
							errs <- err
							return
						}
					}
				})
			}
			wg.Go(func() {
				for _, p := range parents[:3] {
					if _, err := f.r.DeleteParent(ctx, p); err != nil && !(policy == Refuse && errors.Is(err, ErrHasChildren)) {
						errs <- err
						return
					}
				}
			})
			wg.Wait()
			close(errs)
			for err := range errs {
				t.Fatal(err)
			}
			for _, p := range parents {
				if _, err := f.r.Get(ctx, p); err == nil {
					f.requireTotals(t, p, f.fromChildren(t, p))
				}
			}
			rep, err := f.r.Verify(ctx)
			if err != nil || len(rep.Drifted) != 0 {
				t.Fatalf("verify: %+v, %v", rep, err)
			}
			// A move racing a cascade can leave an orphan; under Cascade,
			// Repair deletes it.
			if _, err := f.r.Repair(ctx); err != nil {
				t.Fatal(err)
			}
			if rep, err := f.r.Verify(ctx); err != nil || (policy == Cascade && rep.Orphans != 0) {
				t.Fatalf("verify after repair: %+v, %v", rep, err)
			}
		})
	}
}

// TestRollupMinDeleteRace races, on each of many parents, the delete of
// the minimum with the insert of a value between it and the next: the
// insert's $min changes nothing (the stale min is lower), so only the
// revision tells the delete's recompute that a value arrived after it
// read the children. Every parent must end with the inserted value as
// its min.
func TestRollupMinDeleteRace(t *testing.T) {
	ctx := context.Background()
	f := newFixture(t, allConfig())
	const rounds = 60
	lows := make([]any, rounds)
	for i := range rounds {
		p := fmt.Sprint("p", i)
		if _, err := f.products.InsertOne(ctx, product{ID: p}); err != nil {
			t.Fatal(err)
		}
		lows[i] = f.rate(t, p, 10)
		f.rate(t, p, 100)
	}
	var wg sync.WaitGroup
	errs := make(chan error, 2*rounds)
	for i := range rounds {
		wg.Go(func() {
			if _, err := f.r.Delete(ctx, lows[i]); err != nil {
				errs <- err
			}
		})
		wg.Go(func() {
			if _, err := f.r.Insert(ctx, review{Product: fmt.Sprint("p", i), Stars: 50}); err != nil {
				errs <- err
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	for i := range rounds {
		f.requireTotals(t, fmt.Sprint("p", i), Totals{Sum: 150, Count: 2, Min: 50, Max: 100})
	}
}
