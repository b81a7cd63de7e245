package extref

import (
	"context"
	"errors"
	"testing"
	"time"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo"

	"github.com/formworkdb/formwork/internal/testenv"
	"github.com/formworkdb/formwork/pattern"
)

// monitoredFixture is a fixture on a client whose commands are counted.
func monitoredFixture(t *testing.T, cfg Config) (*fixture, *testenv.Counter) {
	t.Helper()
	db, count := testenv.Monitored(t)
	f := &fixture{db: db, customers: db.Collection("customers"), orders: db.Collection("orders")}
	r, err := New[Customer, Order, CustomerRef](f.customers, f.orders, cfg)
	if err != nil {
		t.Fatal(err)
	}
	if err := r.EnsureIndexes(context.Background()); err != nil {
		t.Fatal(err)
	}
	f.ref = r
	// Atomic asks the deployment once whether it has transactions.
	if _, err := pattern.Transactions(context.Background(), db.Client()); err != nil {
		t.Fatal(err)
	}
	return f, count
}

// TestReferenceAsDependent drives the Reference through a pattern.Source
// of customers: a change of a copied field fans out, a change of an
// uncopied one sends no write to orders, a replace and a delete apply.
func TestReferenceAsDependent(t *testing.T) {
	ctx := context.Background()
	cfg := orderConfig()
	cfg.OnDelete = Cascade
	f, count := monitoredFixture(t, cfg)
	customers := pattern.NewSource[Customer](f.customers, f.ref)
	id, err := customers.Insert(ctx, Customer{Name: "Ada", Email: "ada@x"})
	if err != nil {
		t.Fatal(err)
	}
	ada := id.(bson.ObjectID)
	o1 := f.order(t, ada, "open", time.Now())
	o2 := f.order(t, ada, "delivered", time.Now())

	count.Reset()
	if _, err := customers.Update(ctx, ada, bson.D{{Key: "$inc", Value: bson.D{{Key: "balance", Value: 3}}}}); err != nil {
		t.Fatal(err)
	}
	if n := count.Commands("update", "delete", "insert"); n != 0 {
		t.Fatalf("a change of an uncopied field sent %d writes besides the source's", n)
	}
	if _, err := customers.Update(ctx, ada, set(bson.D{{Key: "name", Value: "Ada King"}})); err != nil {
		t.Fatal(err)
	}
	if got := f.stored(t, o1).Lookup("name").StringValue(); got != "Ada King" {
		t.Fatalf("open order name %q after the source's rename", got)
	}
	if got := f.stored(t, o2).Lookup("name").StringValue(); got != "Ada" {
		t.Fatalf("delivered order name %q", got)
	}
	if err := customers.Replace(ctx, ada, Customer{ID: ada, Name: "Ada L"}); err != nil {
		t.Fatal(err)
	}
	c := f.stored(t, o1)
	if _, err := c.LookupErr("email"); err == nil || c.Lookup("name").StringValue() != "Ada L" {
		t.Fatalf("copy after a replace without email: %v", c)
	}
	if res, err := customers.Check(ctx, false); err != nil || !res[0].OK() || res[0].Checked != 1 {
		t.Fatalf("Check: %+v, %v", res, err)
	}
	if _, err := customers.Delete(ctx, ada); err != nil {
		t.Fatal(err)
	}
	if n := f.count(t, bson.D{}); n != 1 {
		t.Fatalf("%d orders after the cascade, want the delivered one", n)
	}
}

// TestReferenceUpdateForms runs Update with every kind of update: only
// one that changes a copied field fans out, whatever its operator.
func TestReferenceUpdateForms(t *testing.T) {
	ctx := context.Background()
	f, count := monitoredFixture(t, orderConfig())
	c := f.customer(t, "Ada")
	o := f.order(t, c, "open", time.Now())
	cases := []struct {
		name   string
		update any
		fanOut bool
		check  func(copy bson.Raw) bool
	}{
		{"uncopied $set", set(bson.D{{Key: "tier", Value: "gold"}}), false, nil},
		{"uncopied $inc", bson.D{{Key: "$inc", Value: bson.D{{Key: "balance", Value: 1}}}}, false, nil},
		{"same value", set(bson.D{{Key: "name", Value: "Ada"}}), false, nil},
		{"$unset", bson.D{{Key: "$unset", Value: bson.D{{Key: "email", Value: ""}}}}, true,
			func(c bson.Raw) bool { _, err := c.LookupErr("email"); return err != nil }},
		{"$rename into", bson.D{{Key: "$rename", Value: bson.D{{Key: "tier", Value: "email"}}}}, true,
			func(c bson.Raw) bool { return c.Lookup("email").StringValue() == "gold" }},
		{"pipeline", mongo.Pipeline{{{Key: "$set", Value: bson.D{{Key: "name", Value: bson.D{{Key: "$toUpper", Value: "$name"}}}}}}}, true,
			func(c bson.Raw) bool { return c.Lookup("name").StringValue() == "ADA" }},
		{"pipeline uncopied", mongo.Pipeline{{{Key: "$set", Value: bson.D{{Key: "balance", Value: 0}}}}}, false, nil},
	}
	for _, tc := range cases {
		count.Reset()
		_, fo, err := f.ref.Update(ctx, c, tc.update)
		if err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
		writes := count.Commands("update")
		if tc.fanOut && (fo.Matched != 1 || writes != 1) || !tc.fanOut && (fo != FanOut{} || writes != 0) {
			t.Errorf("%s: fan-out %+v, %d updateMany; want fan-out %v", tc.name, fo, writes, tc.fanOut)
		}
		if tc.check != nil && !tc.check(f.stored(t, o)) {
			t.Errorf("%s: copy %v", tc.name, f.stored(t, o))
		}
	}
	// An update of uncopied fields is one round trip.
	count.Reset()
	if _, _, err := f.ref.Update(ctx, c, bson.D{{Key: "$inc", Value: bson.D{{Key: "balance", Value: 1}}}}); err != nil {
		t.Fatal(err)
	}
	if n := count.Commands(); n != 1 {
		t.Errorf("uncopied update: %d round trips, want 1", n)
	}
	if _, _, err := f.ref.Update(ctx, c, bson.D{{Key: "name", Value: "replacement"}}); err == nil {
		t.Error("a replacement document was accepted as an update")
	}
	if res := f.check(t, false, 0); res.Checked != 1 {
		t.Fatalf("Check: %+v", res)
	}
}

// TestReferenceInsertMany loads orders in bulk with one read of the
// distinct customers and one insertMany.
func TestReferenceInsertMany(t *testing.T) {
	ctx := context.Background()
	f, count := monitoredFixture(t, orderConfig())
	ada, bob := f.customer(t, "Ada"), f.customer(t, "Bob")
	var ids []any
	var docs []Order
	for i := range 50 {
		ids = append(ids, []bson.ObjectID{ada, bob}[i%2])
		docs = append(docs, Order{Status: "open", CreatedAt: time.Unix(int64(i), 0)})
	}
	count.Reset()
	got, err := f.ref.InsertMany(ctx, ids, docs)
	if err != nil {
		t.Fatal(err)
	}
	if n := count.Commands("insert"); n != 1 {
		t.Errorf("%d insert commands, want 1", n)
	}
	if n := count.Commands("find"); n != 2 {
		t.Errorf("%d finds, want 2 (the sources, and the re-read that settles the copies)", n)
	}
	if len(got) != 50 || got[1].Customer.Name != "Bob" || got[0].Customer.Email != "ada@example.com" || got[7].ID.IsZero() {
		t.Fatalf("InsertMany returned %d: %+v", len(got), got[:2])
	}
	if res := f.check(t, false, 0); res.Checked != 50 {
		t.Fatalf("Check: %+v", res)
	}

	missing := bson.NewObjectID()
	if _, err := f.ref.InsertMany(ctx, []any{ada, missing}, []Order{{}, {}}); !errors.Is(err, ErrParentNotFound) {
		t.Fatalf("InsertMany with a missing source: %v, want ErrParentNotFound", err)
	}
	if _, err := f.ref.InsertMany(ctx, []any{ada}, []Order{{}, {}}); err == nil {
		t.Fatal("InsertMany accepted 1 source id for 2 documents")
	}
	if n := f.count(t, bson.D{}); n != 50 {
		t.Fatalf("%d orders after refused loads, want 50", n)
	}
	if got, err := f.ref.InsertMany(ctx, nil, nil); err != nil || len(got) != 0 {
		t.Fatalf("empty load: %v, %v", got, err)
	}
}

// TestReferenceInsertManyBatches reads the sources in $in batches.
func TestReferenceInsertManyBatches(t *testing.T) {
	ctx := context.Background()
	f, count := monitoredFixture(t, orderConfig())
	defer func(n int) { loadBatch = n }(loadBatch)
	loadBatch = 3
	var ids []any
	var docs []Order
	for i := range 7 {
		c := f.customer(t, string(rune('A'+i)))
		ids = append(ids, c, c)
		docs = append(docs, Order{Status: "open"}, Order{Status: "delivered"})
	}
	count.Reset()
	got, err := f.ref.InsertMany(ctx, ids, docs)
	if err != nil || len(got) != 14 {
		t.Fatalf("InsertMany: %d, %v", len(got), err)
	}
	if n := count.Commands("find"); n != 6 {
		t.Errorf("%d finds for 7 sources in batches of 3, want 3 twice", n)
	}
	for i, o := range got {
		if o.Customer.ID != ids[i] || o.Customer.Name != string(rune('A'+i/2)) {
			t.Fatalf("order %d: %+v", i, o)
		}
	}
}
