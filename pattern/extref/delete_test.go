package extref

import (
	"context"
	"errors"
	"testing"
	"time"

	"go.mongodb.org/mongo-driver/v2/bson"

	"github.com/formworkdb/formwork/pattern"
)

// policyFixture is a fixture under policy with customer Ada holding two
// open orders and a delivered one, and Bob holding one open order.
func policyFixture(t *testing.T, policy Policy, mark string) (f *fixture, ada, bob bson.ObjectID, open []bson.ObjectID, delivered bson.ObjectID) {
	t.Helper()
	cfg := orderConfig()
	cfg.OnDelete, cfg.DetachMark = policy, mark
	f = newFixtureConfig(t, cfg)
	ada, bob = f.customer(t, "Ada"), f.customer(t, "Bob")
	now := time.Now()
	open = []bson.ObjectID{f.order(t, ada, "open", now), f.order(t, ada, "shipped", now)}
	delivered = f.order(t, ada, "delivered", now)
	f.order(t, bob, "open", now)
	return f, ada, bob, open, delivered
}

// count counts orders matching filter.
func (f *fixture) count(t *testing.T, filter bson.D) int64 {
	t.Helper()
	n, err := f.orders.CountDocuments(context.Background(), filter)
	if err != nil {
		t.Fatal(err)
	}
	return n
}

// check runs Check and fails unless it reports problems problems.
func (f *fixture) check(t *testing.T, repair bool, problems int) pattern.Result {
	t.Helper()
	res, err := f.ref.Check(context.Background(), repair)
	if err != nil || res.Problems != problems {
		t.Fatalf("Check(repair=%v): %+v, %v; want %d problems", repair, res, err, problems)
	}
	return res
}

func TestReferenceDeleteCascade(t *testing.T) {
	ctx := context.Background()
	f, ada, bob, _, delivered := policyFixture(t, Cascade, "")
	gone, err := f.ref.Delete(ctx, ada)
	if err != nil || gone.Name != "Ada" {
		t.Fatalf("Delete: %+v, %v", gone, err)
	}
	if n := f.count(t, bson.D{{Key: "customer._id", Value: ada}}); n != 1 {
		t.Fatalf("%d orders of Ada left, want the delivered one", n)
	}
	if f.stored(t, delivered).Lookup("name").StringValue() != "Ada" {
		t.Fatal("the delivered snapshot changed")
	}
	if f.count(t, bson.D{{Key: "customer._id", Value: bob}}) != 1 {
		t.Fatal("Bob's order touched")
	}
	if _, err := f.ref.Delete(ctx, ada); !errors.Is(err, ErrNotFound) {
		t.Fatalf("second Delete: %v, want ErrNotFound", err)
	}
	f.check(t, false, 0)
}

func TestReferenceDeleteDetach(t *testing.T) {
	ctx := context.Background()
	t.Run("unset", func(t *testing.T) {
		f, ada, _, open, delivered := policyFixture(t, Detach, "")
		if _, err := f.ref.Delete(ctx, ada); err != nil {
			t.Fatal(err)
		}
		for _, id := range open {
			doc, err := f.orders.FindOne(ctx, bson.D{{Key: "_id", Value: id}}).Raw()
			if err != nil {
				t.Fatal(err)
			}
			if _, err := doc.LookupErr("customer"); err == nil {
				t.Fatalf("detached order still has its reference: %v", doc)
			}
		}
		if f.stored(t, delivered).Lookup("_id").ObjectID() != ada {
			t.Fatal("the delivered snapshot lost its reference")
		}
		f.check(t, false, 0)
	})
	t.Run("mark", func(t *testing.T) {
		f, ada, _, open, _ := policyFixture(t, Detach, "deleted")
		if _, err := f.ref.Delete(ctx, ada); err != nil {
			t.Fatal(err)
		}
		for _, id := range open {
			c := f.stored(t, id)
			if !c.Lookup("deleted").Boolean() || c.Lookup("name").StringValue() != "Ada" {
				t.Fatalf("marked copy %v, want deleted: true and the name kept", c)
			}
		}
		// Marked copies are no longer maintained: not orphans.
		f.check(t, false, 0)
	})
}

func TestReferenceDeleteRefuse(t *testing.T) {
	ctx := context.Background()
	f, ada, bob, _, _ := policyFixture(t, Refuse, "")
	if _, err := f.ref.Delete(ctx, ada); !errors.Is(err, ErrHasChildren) {
		t.Fatalf("Delete of a customer with open orders: %v, want ErrHasChildren", err)
	}
	if ok, _ := f.ref.exists(ctx, ada); !ok {
		t.Fatal("refused delete deleted the customer")
	}
	// Delivered orders are records: they do not hold a customer back.
	if _, err := f.orders.DeleteMany(ctx, bson.D{{Key: "customer._id", Value: ada}, {Key: "status", Value: bson.D{{Key: "$ne", Value: "delivered"}}}}); err != nil {
		t.Fatal(err)
	}
	if _, err := f.ref.Delete(ctx, ada); err != nil {
		t.Fatalf("Delete with delivered orders only: %v", err)
	}
	if f.count(t, bson.D{{Key: "customer._id", Value: bob}}) != 1 {
		t.Fatal("Bob's order touched")
	}
	f.check(t, false, 0)
}

// TestReferenceApplyDelete hands deletes made elsewhere to Apply, and
// checks that Check reports the orphans a policy left and, repairing,
// resolves them by the policy.
func TestReferenceApplyDelete(t *testing.T) {
	ctx := context.Background()
	remove := func(t *testing.T, f *fixture, id bson.ObjectID) pattern.Change {
		t.Helper()
		before, err := f.customers.FindOneAndDelete(ctx, bson.D{{Key: "_id", Value: id}}).Raw()
		if err != nil {
			t.Fatal(err)
		}
		return pattern.Change{Op: pattern.Delete, Before: before}
	}
	t.Run("refuse", func(t *testing.T) {
		f, ada, _, _, _ := policyFixture(t, Refuse, "")
		err := f.ref.Apply(ctx, remove(t, f, ada))
		if !errors.Is(err, ErrHasChildren) {
			t.Fatalf("Apply: %v, want ErrHasChildren for the dangling orders", err)
		}
		f.check(t, false, 2)
		res := f.check(t, true, 2)
		if res.Repaired != 0 {
			t.Fatalf("Refuse repaired %d orphans; it leaves them to the application", res.Repaired)
		}
	})
	t.Run("cascade", func(t *testing.T) {
		f, ada, bob, _, _ := policyFixture(t, Cascade, "")
		if err := f.ref.Apply(ctx, remove(t, f, ada)); err != nil {
			t.Fatal(err)
		}
		if n := f.count(t, bson.D{{Key: "customer._id", Value: ada}}); n != 1 {
			t.Fatalf("%d orders of Ada, want the delivered one", n)
		}
		// A delete whose Apply never ran: Check finds, Repair cascades.
		remove(t, f, bob)
		f.check(t, false, 1)
		if res := f.check(t, true, 1); res.Repaired != 1 {
			t.Fatalf("repair: %+v", res)
		}
		f.check(t, false, 0)
		if n := f.count(t, bson.D{{Key: "customer._id", Value: bob}}); n != 0 {
			t.Fatalf("%d orders of Bob after repair", n)
		}
	})
	t.Run("detach", func(t *testing.T) {
		f, ada, bob, _, _ := policyFixture(t, Detach, "gone")
		if err := f.ref.Apply(ctx, remove(t, f, ada)); err != nil {
			t.Fatal(err)
		}
		if n := f.count(t, bson.D{{Key: "customer.gone", Value: true}}); n != 2 {
			t.Fatalf("%d orders marked, want 2", n)
		}
		remove(t, f, bob)
		if res := f.check(t, true, 1); res.Repaired != 1 {
			t.Fatalf("repair: %+v", res)
		}
		f.check(t, false, 0)
	})
	t.Run("insert and update", func(t *testing.T) {
		f, ada, _, open, _ := policyFixture(t, Refuse, "")
		before, _ := f.customers.FindOne(ctx, bson.D{{Key: "_id", Value: ada}}).Raw()
		if err := f.ref.Apply(ctx, pattern.Change{Op: pattern.Insert, After: before}); err != nil {
			t.Fatal(err)
		}
		if _, err := f.customers.UpdateOne(ctx, bson.D{{Key: "_id", Value: ada}}, set(bson.D{{Key: "email", Value: "ada@new"}})); err != nil {
			t.Fatal(err)
		}
		after, _ := f.customers.FindOne(ctx, bson.D{{Key: "_id", Value: ada}}).Raw()
		if err := f.ref.Apply(ctx, pattern.Change{Op: pattern.Update, Before: before, After: after}); err != nil {
			t.Fatal(err)
		}
		if got := f.stored(t, open[0]).Lookup("email").StringValue(); got != "ada@new" {
			t.Fatalf("email after Apply %q", got)
		}
		if err := f.ref.Apply(ctx, pattern.Change{Op: pattern.Update, After: after}); err == nil {
			t.Fatal("an update without its before image was applied")
		}
	})
}
