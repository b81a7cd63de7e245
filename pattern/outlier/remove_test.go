package outlier

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"
	"testing"

	"go.mongodb.org/mongo-driver/v2/bson"

	"github.com/formworkdb/formwork/internal/testenv"
	"github.com/formworkdb/formwork/pattern/bucket"
)

// buyer is the document element of the removal and feed tests.
type buyer struct {
	ID   string `bson:"id"`
	User string `bson:"user"`
	Qty  int    `bson:"qty"`
}

// newBuyers returns a Store of buyers with ElementID "id" over fresh
// collections, indexes made.
func newBuyers(t testing.TB, threshold, size int) *Store[bson.D, buyer] {
	t.Helper()
	db := testenv.Database(t)
	s, err := New[bson.D, buyer](db.Collection("books"), db.Collection("bookBuyersOverflow"), Config{
		Threshold: threshold, ElementID: "id", Overflow: bucket.Config{Size: size, Clock: tickClock()},
	})
	if err != nil {
		t.Fatal(err)
	}
	if err := s.EnsureIndexes(context.Background()); err != nil {
		t.Fatal(err)
	}
	return s
}

// ids returns the ids of bs.
func ids(bs []buyer) []string {
	out := []string{}
	for _, b := range bs {
		out = append(out, b.ID)
	}
	return out
}

// TestRemove removes embedded and overflow elements and checks counter,
// placement and errors.
func TestRemove(t *testing.T) {
	ctx := context.Background()
	s := newBuyers(t, 3, 2)
	if err := mk(ctx, s, 7, nil); err != nil {
		t.Fatal(err)
	}
	for i := range 6 { // p0 p1 p2 embedded, p3 p4 p5 overflow
		if _, err := s.Append(ctx, 7, buyer{ID: fmt.Sprintf("p%d", i), User: "u"}); err != nil {
			t.Fatal(err)
		}
	}
	for _, c := range []struct {
		id    string
		where Placement
	}{{"p1", Embedded}, {"p4", Overflowed}} {
		where, err := s.Remove(ctx, 7, c.id)
		if err != nil || where != c.where {
			t.Errorf("Remove %s: %v, %v; want %v", c.id, where, err, c.where)
		}
	}
	p, err := s.GetAll(ctx, 7)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(ids(p.Elements), []string{"p0", "p2", "p3", "p5"}) || p.Count != 4 || !p.HasOverflow {
		t.Errorf("after removals: %v count %d flag %v", ids(p.Elements), p.Count, p.HasOverflow)
	}
	if _, err := s.Remove(ctx, 7, "p1"); !errors.Is(err, ErrNotFound) {
		t.Errorf("second Remove: %v", err)
	}
	if _, err := s.Remove(ctx, 404, "p1"); !errors.Is(err, ErrParentNotFound) {
		t.Errorf("Remove under a missing parent: %v", err)
	}
	// A freed embedded slot takes the next append while the counter is
	// below Threshold.
	for _, id := range []string{"p0", "p2"} {
		if _, err := s.Remove(ctx, 7, id); err != nil {
			t.Fatal(err)
		}
	}
	if where, err := s.Append(ctx, 7, buyer{ID: "p6"}); err != nil || where != Embedded {
		t.Errorf("append after removals: %v, %v", where, err)
	}
	// Replace in the list and in the overflow.
	if where, err := s.Replace(ctx, 7, "p6", buyer{ID: "p6", Qty: 9}); err != nil || where != Embedded {
		t.Errorf("Replace embedded: %v, %v", where, err)
	}
	if where, err := s.Replace(ctx, 7, "p5", buyer{ID: "p5", Qty: 8}); err != nil || where != Overflowed {
		t.Errorf("Replace overflow: %v, %v", where, err)
	}
	if _, err := s.Replace(ctx, 7, "p5", buyer{ID: "other"}); err == nil {
		t.Error("Replace changing the id succeeded")
	}
	if _, err := s.Replace(ctx, 7, "zz", buyer{ID: "zz"}); !errors.Is(err, ErrNotFound) {
		t.Errorf("Replace of a missing element: %v", err)
	}
	if r, err := s.Verify(ctx); err != nil || len(r.Problems) != 0 || len(r.Overflow.Problems) != 0 {
		t.Errorf("Verify: %+v, %v", r, err)
	}
	plain, _, _ := newStore(t, Config{Threshold: 1})
	if _, err := plain.Remove(ctx, 1, "x"); !errors.Is(err, ErrInvalidConfig) {
		t.Errorf("Remove without ElementID: %v", err)
	}
}

// TestRemoveConcurrent appends and removes on one parent from many
// goroutines across the threshold and checks that survivors are stored
// once each, the counter is their number, the list within Threshold, and
// Verify is clean.
func TestRemoveConcurrent(t *testing.T) {
	ctx := context.Background()
	const (
		writers   = 6
		each      = 30
		threshold = 20
	)
	s := newBuyers(t, threshold, 7)
	if err := mk(ctx, s, 1, nil); err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	errs := make(chan error, writers)
	for w := range writers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range each {
				id := fmt.Sprintf("w%d-%d", w, i)
				if _, err := s.Append(ctx, 1, buyer{ID: id}); err != nil {
					errs <- err
					return
				}
				if i%3 == 2 { // remove the one before, wherever it went
					if _, err := s.Remove(ctx, 1, fmt.Sprintf("w%d-%d", w, i-1)); err != nil {
						errs <- err
						return
					}
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	p, err := s.GetAll(ctx, 1)
	if err != nil {
		t.Fatal(err)
	}
	want := writers * each * 2 / 3
	seen := map[string]int{}
	for _, b := range p.Elements {
		seen[b.ID]++
	}
	if len(seen) != want || p.Count != want {
		t.Errorf("%d distinct survivors, count %d, want %d", len(seen), p.Count, want)
	}
	for id, n := range seen {
		if n != 1 {
			t.Errorf("%s stored %d times", id, n)
		}
	}
	head, err := s.Get(ctx, 1)
	if err != nil || len(head.Elements) > threshold {
		t.Errorf("embedded %d, %v", len(head.Elements), err)
	}
	if r, err := s.Verify(ctx); err != nil || len(r.Problems) != 0 || len(r.Overflow.Problems) != 0 {
		t.Errorf("Verify: %+v, %v", r, err)
	}
}
