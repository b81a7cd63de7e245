package extref

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"go.mongodb.org/mongo-driver/v2/bson"

	"github.com/formworkdb/formwork/pattern"
)

// TestConcurrentRenamesConverge renames one customer from several
// goroutines, through Update and through a pattern.Source, while others
// insert its orders one by one and in bulk. Whatever order the fan-outs
// land in, every live order ends with the customer's last name.
func TestConcurrentRenamesConverge(t *testing.T) {
	ctx := context.Background()
	f := newFixture(t)
	customers := pattern.NewSource[Customer](f.customers, f.ref)
	c := f.customer(t, "Ada")
	for i := range 10 {
		f.order(t, c, []string{"open", "delivered"}[i%2], time.Now())
	}
	const renamers, renames, inserters = 4, 8, 2
	var wg sync.WaitGroup
	errs := make(chan error, renamers+inserters)
	for w := range renamers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range renames {
				upd := set(bson.D{{Key: "name", Value: fmt.Sprintf("Ada %d-%d", w, i)}, {Key: "email", Value: fmt.Sprintf("%d@x", i)}})
				var err error
				if (w+i)%2 == 0 {
					_, _, err = f.ref.Update(ctx, c, upd)
				} else {
					_, err = customers.Update(ctx, c, upd)
				}
				if err != nil {
					errs <- err
					return
				}
			}
		}()
	}
	for w := range inserters {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range 6 {
				var err error
				if w == 0 {
					_, err = f.ref.Insert(ctx, c, Order{Status: "open", CreatedAt: time.Now()})
				} else {
					_, err = f.ref.InsertMany(ctx, []any{c, c}, []Order{{Status: "open"}, {Status: fmt.Sprint("s", i)}})
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
	src, err := f.ref.Copy(ctx, c)
	if err != nil {
		t.Fatal(err)
	}
	orders, err := f.ref.List(ctx, c, 0)
	if err != nil {
		t.Fatal(err)
	}
	live := 0
	for _, o := range orders {
		if o.Status == "delivered" {
			continue
		}
		live++
		if o.Customer != src {
			t.Errorf("order %v has %+v, customer is %+v", o.ID, o.Customer, src)
		}
	}
	if live != 5+6+12 {
		t.Errorf("%d live orders, want 23", live)
	}
	f.check(t, false, 0)
}

// TestConcurrentDeleteInsert races deletes of customers under each policy
// with inserts of their orders: no live order ends without its customer,
// a refused delete leaves the customer, a successful one leaves no live
// order under Refuse and Cascade.
func TestConcurrentDeleteInsert(t *testing.T) {
	for _, policy := range []Policy{Refuse, Cascade, Detach} {
		t.Run(policy.String(), func(t *testing.T) {
			ctx := context.Background()
			cfg := orderConfig()
			cfg.OnDelete = policy
			f := newFixtureConfig(t, cfg)
			const customers = 12
			var cs []bson.ObjectID
			for i := range customers {
				cs = append(cs, f.customer(t, fmt.Sprint("C", i)))
			}
			var wg sync.WaitGroup
			var mu sync.Mutex
			deleted := map[bson.ObjectID]bool{}
			errs := make(chan error, 4)
			for w := range 2 {
				wg.Add(1)
				go func() { // inserters
					defer wg.Done()
					for i := range 3 * customers {
						c := cs[(i+w)%customers]
						var err error
						if i%3 == 0 {
							_, err = f.ref.InsertMany(ctx, []any{c, cs[(i+5)%customers]}, []Order{{Status: "open"}, {Status: "open"}})
						} else {
							_, err = f.ref.Insert(ctx, c, Order{Status: "open"})
						}
						if err != nil && !errors.Is(err, ErrParentNotFound) {
							errs <- err
							return
						}
					}
				}()
			}
			wg.Add(1)
			go func() { // deleter
				defer wg.Done()
				for round := range 3 {
					for i, c := range cs {
						if (i+round)%2 == 1 {
							continue
						}
						_, err := f.ref.Delete(ctx, c)
						switch {
						case err == nil:
							mu.Lock()
							deleted[c] = true
							mu.Unlock()
						case errors.Is(err, ErrHasChildren) && policy == Refuse,
							errors.Is(err, ErrNotFound):
						default:
							errs <- err
							return
						}
					}
				}
			}()
			wg.Wait()
			close(errs)
			for err := range errs {
				t.Fatal(err)
			}
			for _, c := range cs {
				ok, err := f.ref.exists(ctx, c)
				if err != nil {
					t.Fatal(err)
				}
				if ok == deleted[c] {
					t.Errorf("customer %v: exists %v, Delete succeeded %v", c, ok, deleted[c])
				}
				if ok {
					continue
				}
				if n := f.count(t, f.ref.tracked(c)); n != 0 {
					t.Errorf("deleted customer %v still has %d live orders", c, n)
				}
			}
			if len(deleted) == 0 && policy != Refuse {
				t.Error("no delete succeeded")
			}
			f.check(t, false, 0)
		})
	}
}

// TestApplyLateChange hands Apply a change that another, later change of
// the same customer has overtaken (its fan-out landed first): the copies
// end with the customer's current name, not the late change's.
func TestApplyLateChange(t *testing.T) {
	ctx := context.Background()
	f := newFixture(t)
	c := f.customer(t, "Ada")
	o := f.order(t, c, "open", time.Now())
	v1, _ := f.customers.FindOne(ctx, bson.D{{Key: "_id", Value: c}}).Raw()
	if _, _, err := f.ref.Update(ctx, c, set(bson.D{{Key: "name", Value: "Ada B"}})); err != nil {
		t.Fatal(err)
	}
	v2, _ := f.customers.FindOne(ctx, bson.D{{Key: "_id", Value: c}}).Raw()
	if _, _, err := f.ref.Update(ctx, c, set(bson.D{{Key: "name", Value: "Ada C"}})); err != nil {
		t.Fatal(err)
	}
	// The first rename's fan-out arrives last.
	if err := f.ref.Apply(ctx, pattern.Change{Op: pattern.Update, Before: v1, After: v2}); err != nil {
		t.Fatal(err)
	}
	if got := f.stored(t, o).Lookup("name").StringValue(); got != "Ada C" {
		t.Fatalf("copy %q after a late fan-out, want the current Ada C", got)
	}
}
