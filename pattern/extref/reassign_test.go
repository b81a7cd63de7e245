package extref

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"

	"go.mongodb.org/mongo-driver/v2/bson"
)

func TestReferenceReassign(t *testing.T) {
	ctx := context.Background()
	f := newFixture(t)
	ada, bob := f.customer(t, "Ada"), f.customer(t, "Bob")
	o := f.order(t, ada, "open", time.Now())
	got, err := f.ref.Reassign(ctx, o, bob)
	if err != nil {
		t.Fatal(err)
	}
	if got.Customer != (CustomerRef{ID: bob, Name: "Bob", Email: "bob@example.com"}) || got.Status != "open" {
		t.Fatalf("Reassign returned %+v", got)
	}
	if _, err := f.ref.Reassign(ctx, o, bson.NewObjectID()); !errors.Is(err, ErrParentNotFound) {
		t.Fatalf("Reassign to a missing customer: %v", err)
	}
	if _, err := f.ref.Reassign(ctx, bson.NewObjectID(), ada); !errors.Is(err, ErrNotFound) {
		t.Fatalf("Reassign of a missing order: %v", err)
	}
	d := f.order(t, ada, "delivered", time.Now())
	if _, err := f.ref.Reassign(ctx, d, bob); !errors.Is(err, ErrFrozen) {
		t.Fatalf("Reassign of a delivered order: %v", err)
	}
	if lst, _ := f.ref.List(ctx, bob, 0); len(lst) != 1 {
		t.Fatalf("Bob has %d orders", len(lst))
	}
	f.check(t, false, 0)
}

// TestConcurrentReassignDelete moves orders to customers that Refuse
// deletes race to remove: no order ends pointing at a deleted customer.
func TestConcurrentReassignDelete(t *testing.T) {
	ctx := context.Background()
	f := newFixture(t)
	home := f.customer(t, "Home")
	var targets []bson.ObjectID
	for range 10 {
		targets = append(targets, f.customer(t, "T"))
	}
	var orders []bson.ObjectID
	for range 10 {
		orders = append(orders, f.order(t, home, "open", time.Now()))
	}
	var wg sync.WaitGroup
	errs := make(chan error, 2)
	wg.Add(2)
	go func() {
		defer wg.Done()
		for i, o := range orders {
			if _, err := f.ref.Reassign(ctx, o, targets[i]); err != nil && !errors.Is(err, ErrParentNotFound) {
				errs <- err
				return
			}
		}
	}()
	go func() {
		defer wg.Done()
		for _, c := range targets {
			if _, err := f.ref.Delete(ctx, c); err != nil && !errors.Is(err, ErrHasChildren) {
				errs <- err
				return
			}
		}
	}()
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	f.check(t, false, 0)
}
