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

func TestWindowMove(t *testing.T) {
	ctx := context.Background()
	f := newFixture(t, reviewConfig())
	f.product(t, "p1")
	f.product(t, "p2")
	for n := range 7 {
		f.add(t, "p1", n)
	}
	f.add(t, "p2", 0)
	// r05 is in p1's window: it leaves it (r01 comes in) and enters p2's.
	moved, err := f.w.Move(ctx, "p1-r05", "p2")
	if err != nil || moved.ProductID != "p2" || moved.Text != "review 5" {
		t.Fatalf("Move = %+v, %v", moved, err)
	}
	if got := ids(f.stored(t, "p1")); !slices.Equal(got, []string{"p1-r06", "p1-r04", "p1-r03", "p1-r02", "p1-r01"}) {
		t.Fatalf("p1 window after the move: %v", got)
	}
	if got := ids(f.stored(t, "p2")); !slices.Equal(got, []string{"p1-r05", "p2-r00"}) {
		t.Fatalf("p2 window after the move: %v", got)
	}
	// r00 is outside p1's window: p1 does not change.
	before, _ := f.products.FindOne(ctx, bson.D{{Key: "_id", Value: "p1"}}).Raw()
	if _, err := f.w.Move(ctx, "p1-r00", "p2"); err != nil {
		t.Fatal(err)
	}
	after, _ := f.products.FindOne(ctx, bson.D{{Key: "_id", Value: "p1"}}).Raw()
	if string(before) != string(after) {
		t.Fatal("moving a child outside the window changed the old parent")
	}
	f.verifyOK(t)

	// To a parent that does not exist: nothing changes.
	if _, err := f.w.Move(ctx, "p1-r06", "nope"); !errors.Is(err, ErrParentNotFound) {
		t.Fatalf("Move to an unknown parent: %v", err)
	}
	// Edit moving it there (the parent check raced away) is undone.
	if _, err := f.w.Edit(ctx, "p1-r06", bson.D{{Key: "$set", Value: bson.D{{Key: "productId", Value: "nope"}}}}); !errors.Is(err, ErrParentNotFound) {
		t.Fatalf("Edit moving to an unknown parent: %v", err)
	}
	var r Review
	if err := f.reviews.FindOne(ctx, bson.D{{Key: "_id", Value: "p1-r06"}}).Decode(&r); err != nil || r.ProductID != "p1" {
		t.Fatalf("child after the refused moves: %+v, %v", r, err)
	}
	if _, err := f.w.Move(ctx, "nope", "p2"); !errors.Is(err, ErrNotFound) {
		t.Fatalf("Move of an unknown child: %v", err)
	}
	// A move that also changes the time.
	if _, err := f.w.Edit(ctx, "p1-r01", bson.D{{Key: "$set", Value: bson.D{{Key: "productId", Value: "p2"}, {Key: "at", Value: t0.Add(-time.Hour)}}}}); err != nil {
		t.Fatal(err)
	}
	if got := ids(f.stored(t, "p2")); !slices.Equal(got, []string{"p1-r05", "p2-r00", "p1-r00", "p1-r01"}) {
		t.Fatalf("p2 window after a move back in time: %v", got)
	}
	f.verifyOK(t)
}

// TestWindowMoveConcurrent moves children back and forth between two
// parents from many goroutines while others add to both; both windows
// end exact.
func TestWindowMoveConcurrent(t *testing.T) {
	ctx := context.Background()
	f := newFixture(t, reviewConfig())
	f.product(t, "p1")
	f.product(t, "p2")
	for n := range 10 {
		f.add(t, "p1", n)
		f.add(t, "p2", n)
	}
	const workers, each = 8, 12
	var wg sync.WaitGroup
	errs := make(chan error, workers)
	for g := range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range each {
				var err error
				if g%4 == 3 {
					_, err = f.w.Add(ctx, Review{ID: fmt.Sprintf("g%d-%d", g, i), ProductID: fmt.Sprint("p", 1+i%2), At: t0.Add(time.Duration(i) * time.Hour)})
				} else {
					id := fmt.Sprintf("p%d-r%02d", 1+g%2, (g+i)%10)
					_, err = f.w.Move(ctx, id, fmt.Sprint("p", 1+(g+i)%2))
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
	f.verifyOK(t)
	if n := len(f.stored(t, "p1")) + len(f.stored(t, "p2")); n != 2*size {
		t.Fatalf("windows hold %d copies", n)
	}
}
