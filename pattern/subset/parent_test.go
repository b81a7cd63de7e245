package subset

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"
	"testing"
	"time"

	"go.mongodb.org/mongo-driver/v2/bson"
)

func policyConfig(p Policy) Config {
	cfg := reviewConfig()
	cfg.OnParentDelete = p
	return cfg
}

// count returns the number of reviews of product p.
func (f *fixture) count(t testing.TB, p string) int64 {
	t.Helper()
	n, err := f.reviews.CountDocuments(context.Background(), bson.D{{Key: "productId", Value: p}})
	if err != nil {
		t.Fatal(err)
	}
	return n
}

func TestWindowDeleteParent(t *testing.T) {
	ctx := context.Background()
	for _, policy := range []Policy{Refuse, Cascade, Detach} {
		t.Run(policy.String(), func(t *testing.T) {
			f := newFixture(t, policyConfig(policy))
			f.product(t, "p1")
			f.product(t, "p2")
			f.product(t, "empty")
			for n := range 7 {
				f.add(t, "p1", n)
				f.add(t, "p2", n)
			}
			n, err := f.w.DeleteParent(ctx, "p1")
			switch policy {
			case Refuse:
				if !errors.Is(err, ErrHasChildren) || n != 0 || f.count(t, "p1") != 7 {
					t.Fatalf("DeleteParent = %d, %v; want ErrHasChildren and nothing deleted", n, err)
				}
				if _, err := f.w.Parent(ctx, "p1"); err != nil {
					t.Fatalf("refused parent: %v", err)
				}
			case Cascade:
				if err != nil || n != 7 || f.count(t, "p1") != 0 {
					t.Fatalf("DeleteParent = %d, %v; %d children left", n, err, f.count(t, "p1"))
				}
			case Detach:
				if err != nil || n != 0 || f.count(t, "p1") != 7 {
					t.Fatalf("DeleteParent = %d, %v; %d children left, want 7", n, err, f.count(t, "p1"))
				}
			}
			if policy != Refuse {
				if _, err := f.w.Parent(ctx, "p1"); !errors.Is(err, ErrParentNotFound) {
					t.Fatalf("deleted parent: %v", err)
				}
			}
			if n, err := f.w.DeleteParent(ctx, "empty"); err != nil || n != 0 {
				t.Fatalf("DeleteParent of a parent without children = %d, %v", n, err)
			}
			if _, err := f.w.DeleteParent(ctx, "empty"); !errors.Is(err, ErrParentNotFound) {
				t.Fatalf("second DeleteParent = %v, want ErrParentNotFound", err)
			}
			if f.count(t, "p2") != 7 || len(f.stored(t, "p2")) != size {
				t.Fatal("another parent's children or window changed")
			}
			rep, err := f.w.Verify(ctx)
			if err != nil || rep.Found != 0 || rep.Detached != map[Policy]int64{Detach: 7}[policy] {
				t.Fatalf("Verify after DeleteParent = %+v, %v", rep, err)
			}
			// A detached child can still be edited, moved and deleted.
			if policy == Detach {
				if _, err := f.w.Edit(ctx, "p1-r03", bson.D{{Key: "$set", Value: bson.D{{Key: "at", Value: t0}}}}); err != nil {
					t.Fatal(err)
				}
				if _, err := f.w.Move(ctx, "p1-r06", "p2"); err != nil {
					t.Fatal(err)
				}
				if _, err := f.w.Delete(ctx, "p1-r05"); err != nil {
					t.Fatal(err)
				}
				if got := ids(f.stored(t, "p2")); got[1] != "p1-r06" { // same time as p2-r06, smaller _id
					t.Fatalf("window after moving a detached child in: %v", got)
				}
				f.verifyOK(t)
			}
		})
	}
}

// TestWindowVerifyOrphans is the regression test of children whose
// parent was deleted behind the window's back: Verify used to report all
// consistent (it only looked at parents). Now it reports them per
// policy, and Repair finishes a cascade.
func TestWindowVerifyOrphans(t *testing.T) {
	ctx := context.Background()
	for _, policy := range []Policy{Refuse, Cascade, Detach} {
		t.Run(policy.String(), func(t *testing.T) {
			f := newFixture(t, policyConfig(policy))
			for _, p := range []string{"p1", "p2", "p3"} {
				f.product(t, p)
				for n := range 3 {
					f.add(t, p, n)
				}
			}
			for _, p := range []string{"p1", "p3"} {
				if _, err := f.products.DeleteOne(ctx, bson.D{{Key: "_id", Value: p}}); err != nil {
					t.Fatal(err)
				}
			}
			rep, err := f.w.Verify(ctx)
			if err != nil {
				t.Fatal(err)
			}
			if policy == Detach {
				if rep.Found != 0 || rep.Detached != 6 {
					t.Fatalf("Verify = %+v; want no problem, 6 detached", rep)
				}
				return
			}
			if rep.Found != 2 || !slices.Equal(kinds(rep), []string{"orphan:p1", "orphan:p3"}) || rep.Problems[0].Count != 3 {
				t.Fatalf("Verify = %+v; want p1 and p3 orphaned, 3 children each", rep)
			}
			res, err := f.w.Check(ctx, false)
			if err != nil || res.Problems != 2 || res.Details[0] != `parent "p1" does not exist; 3 children reference it` {
				t.Fatalf("Check = %+v, %v", res, err)
			}
			rep, err = f.w.Repair(ctx)
			if err != nil {
				t.Fatal(err)
			}
			left := f.count(t, "p1") + f.count(t, "p3")
			switch policy {
			case Cascade:
				if !rep.OK() || rep.Repaired != 2 || left != 0 {
					t.Fatalf("Repair = %+v, %d children left; want them deleted", rep, left)
				}
				f.verifyOK(t)
			case Refuse:
				if rep.OK() || rep.Repaired != 0 || left != 6 {
					t.Fatalf("Repair = %+v, %d children left; want them kept and reported", rep, left)
				}
			}
		})
	}
}

// TestWindowDeleteParentConcurrent deletes parents while other
// goroutines add, edit and delete their children: whichever way the
// writes interleave, no child is left without its parent (an Add that
// loses the race takes its child back) and every window is exact.
func TestWindowDeleteParentConcurrent(t *testing.T) {
	ctx := context.Background()
	for _, policy := range []Policy{Refuse, Cascade} {
		t.Run(policy.String(), func(t *testing.T) {
			f := newFixture(t, policyConfig(policy))
			const parents, workers, each = 4, 6, 12
			for p := range parents {
				f.product(t, fmt.Sprint("p", p))
			}
			var wg sync.WaitGroup
			errs := make(chan error, workers+1)
			for g := range workers {
				wg.Add(1)
				go func() {
					defer wg.Done()
					for i := range each {
						p := fmt.Sprint("p", (g+i)%parents)
						id := fmt.Sprintf("g%d-%02d", g, i)
						_, err := f.w.Add(ctx, Review{ID: id, ProductID: p, At: t0.Add(time.Duration(i) * time.Minute)})
						if errors.Is(err, ErrParentNotFound) {
							continue
						}
						if err == nil && i%2 == 0 {
							_, err = f.w.Delete(ctx, id)
						}
						if err != nil && !errors.Is(err, ErrNotFound) {
							errs <- err
							return
						}
					}
				}()
			}
			wg.Add(1)
			go func() {
				defer wg.Done()
				for round := 0; round < 200; round++ {
					deleted := 0
					for p := range parents {
						_, err := f.w.DeleteParent(ctx, fmt.Sprint("p", p))
						switch {
						case err == nil, errors.Is(err, ErrParentNotFound):
							deleted++
						case errors.Is(err, ErrHasChildren):
							// Refuse: empty the parent, then try again.
							f.reviews.DeleteMany(ctx, bson.D{{Key: "productId", Value: fmt.Sprint("p", p)}})
						default:
							errs <- err
							return
						}
					}
					if deleted == parents {
						return
					}
				}
				errs <- errors.New("parents never all deleted")
			}()
			wg.Wait()
			close(errs)
			for err := range errs {
				t.Fatal(err)
			}
			if n, _ := f.reviews.CountDocuments(ctx, bson.D{}); n != 0 {
				t.Fatalf("%d children outlived their parents", n)
			}
			f.verifyOK(t)
		})
	}
}
