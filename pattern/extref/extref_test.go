package extref

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo"

	"github.com/formworkdb/formwork/internal/explaintest"
	"github.com/formworkdb/formwork/internal/testenv"
)

// orderConfig is the catalogue's customer/order reference.
func orderConfig() Config {
	return Config{
		Field:    "customer",
		Fields:   []string{"name", "email"},
		Volatile: []string{"balance"},
		Frozen:   bson.D{{Key: "status", Value: bson.D{{Key: "$in", Value: bson.A{"delivered", "cancelled"}}}}},
		OrderBy:  bson.D{{Key: "createdAt", Value: -1}},
	}
}

// Customer is the source document of the tests.
type Customer struct {
	ID      bson.ObjectID `bson:"_id,omitempty"`
	Name    string        `bson:"name"`
	Email   string        `bson:"email,omitempty"`
	Balance int64         `bson:"balance"`
	Tier    string        `bson:"tier,omitempty"`
}

// CustomerRef is the copy of a Customer an Order embeds.
type CustomerRef struct {
	ID    bson.ObjectID `bson:"_id"`
	Name  string        `bson:"name,omitempty"`
	Email string        `bson:"email,omitempty"`
}

// Order is the referencing document of the tests.
type Order struct {
	ID        bson.ObjectID `bson:"_id,omitempty"`
	Customer  CustomerRef   `bson:"customer"`
	Status    string        `bson:"status"`
	CreatedAt time.Time     `bson:"createdAt"`
}

// ref is the Reference type of the tests.
type ref = Reference[Customer, Order, CustomerRef]

// fixture is a database with a customers and an orders collection.
type fixture struct {
	db        *mongo.Database
	customers *mongo.Collection
	orders    *mongo.Collection
	ref       *ref
}

func newFixture(t *testing.T) *fixture {
	t.Helper()
	return newFixtureConfig(t, orderConfig())
}

// newFixtureConfig is newFixture with another Config.
func newFixtureConfig(t *testing.T, cfg Config) *fixture {
	t.Helper()
	db := testenv.Database(t)
	f := &fixture{db: db, customers: db.Collection("customers"), orders: db.Collection("orders")}
	ref, err := New[Customer, Order, CustomerRef](f.customers, f.orders, cfg)
	if err != nil {
		t.Fatal(err)
	}
	if err := ref.EnsureIndexes(context.Background()); err != nil {
		t.Fatal(err)
	}
	f.ref = ref
	return f
}

// customer inserts a customer and returns its _id.
func (f *fixture) customer(t *testing.T, name string) bson.ObjectID {
	t.Helper()
	id := bson.NewObjectID()
	_, err := f.customers.InsertOne(context.Background(), bson.D{
		{Key: "_id", Value: id}, {Key: "name", Value: name},
		{Key: "email", Value: strings.ToLower(name) + "@example.com"},
		{Key: "balance", Value: int64(120)}})
	if err != nil {
		t.Fatal(err)
	}
	return id
}

// order inserts an order of customer c through Insert.
func (f *fixture) order(t *testing.T, c bson.ObjectID, status string, at time.Time) bson.ObjectID {
	t.Helper()
	o, err := f.ref.Insert(context.Background(), c, Order{Status: status, CreatedAt: at})
	if err != nil {
		t.Fatal(err)
	}
	return o.ID
}

// stored reads the customer copy of order id as stored.
func (f *fixture) stored(t *testing.T, id any) bson.Raw {
	t.Helper()
	doc, err := f.orders.FindOne(context.Background(), bson.D{{Key: "_id", Value: id}}).Raw()
	if err != nil {
		t.Fatal(err)
	}
	return doc.Lookup("customer").Document()
}

func TestConfigValidate(t *testing.T) {
	db := testenv.Database(t)
	good := orderConfig()
	if err := good.Validate(); err != nil {
		t.Fatalf("valid config: %v", err)
	}
	cases := []struct {
		name   string
		change func(*Config)
		want   string
	}{
		{"volatile", func(c *Config) { c.Fields = append(c.Fields, "balance") }, "volatile"},
		{"no field", func(c *Config) { c.Field = "" }, "empty field"},
		{"dotted field", func(c *Config) { c.Field = "a.b" }, "top-level"},
		{"id field", func(c *Config) { c.Field = "_id" }, "_id"},
		{"no fields", func(c *Config) { c.Fields = nil }, "at least one"},
		{"id copied", func(c *Config) { c.Fields = []string{"_id"} }, "always copied"},
		{"dollar", func(c *Config) { c.Fields = []string{"$x"} }, "top-level"},
		{"duplicate", func(c *Config) { c.Fields = []string{"name", "name"} }, "twice"},
		{"order direction", func(c *Config) { c.OrderBy = bson.D{{Key: "createdAt", Value: "desc"}} }, "direction"},
		{"order zero", func(c *Config) { c.OrderBy = bson.D{{Key: "createdAt", Value: 0}} }, "direction"},
		{"policy", func(c *Config) { c.OnDelete = 7 }, "unknown policy"},
		{"mark copied", func(c *Config) { c.OnDelete, c.DetachMark = Detach, "name" }, "copied field"},
		{"mark dotted", func(c *Config) { c.OnDelete, c.DetachMark = Detach, "a.b" }, "top-level"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			c := orderConfig()
			tc.change(&c)
			err := c.Validate()
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("Validate = %v, want an error containing %q", err, tc.want)
			}
			if !errors.Is(err, ErrInvalidConfig) {
				t.Fatalf("Validate = %v, want ErrInvalidConfig", err)
			}
			if _, nerr := New[bson.D, bson.D, bson.D](db.Collection("a"), db.Collection("b"), c); nerr == nil {
				t.Fatal("New accepted an invalid config")
			}
		})
	}
	c := orderConfig()
	c.Fields = []string{"name", "balance"}
	if err := c.Validate(); !errors.Is(err, ErrVolatile) || !errors.Is(err, ErrInvalidConfig) {
		t.Fatalf("Validate = %v, want ErrVolatile and ErrInvalidConfig", err)
	}
}

func TestReferenceInsertStoresCopy(t *testing.T) {
	f := newFixture(t)
	c := f.customer(t, "Ada")
	o := f.order(t, c, "open", time.Now())
	want := bson.D{{Key: "_id", Value: c}, {Key: "name", Value: "Ada"}, {Key: "email", Value: "ada@example.com"}}
	wantRaw, _ := bson.Marshal(want)
	if got := f.stored(t, o); !bytesEqual(got, wantRaw) {
		t.Fatalf("stored copy %v, want %v (no volatile balance, _id first)", got, bson.Raw(wantRaw))
	}
	if _, err := f.ref.Insert(context.Background(), bson.NewObjectID(), Order{}); !errors.Is(err, ErrParentNotFound) {
		t.Fatalf("Insert for a missing customer = %v, want ErrParentNotFound", err)
	}
	// Whatever the document holds in the reference field is replaced.
	got, err := f.ref.Insert(context.Background(), c, Order{Customer: CustomerRef{Name: "stale"}, Status: "open"})
	if err != nil {
		t.Fatal(err)
	}
	if got.ID.IsZero() || got.Customer != (CustomerRef{ID: c, Name: "Ada", Email: "ada@example.com"}) {
		t.Fatalf("Insert returned %+v, want the stored order with its copy", got)
	}
	if n, _ := f.orders.CountDocuments(context.Background(), bson.D{}); n != 2 {
		t.Fatalf("%d orders stored, want 2", n)
	}
	// bson.D works as every type argument.
	plain, err := New[bson.D, bson.D, bson.D](f.customers, f.orders, orderConfig())
	if err != nil {
		t.Fatal(err)
	}
	d, err := plain.Insert(context.Background(), c, bson.D{{Key: "_id", Value: "p1"}, {Key: "status", Value: "open"}})
	if err != nil {
		t.Fatal(err)
	}
	if len(d) != 3 || d[2].Key != "customer" {
		t.Fatalf("bson.D insert returned %v", d)
	}
	cp, err := plain.Copy(context.Background(), c)
	if err != nil || len(cp) != 3 || cp[1].Value != "Ada" {
		t.Fatalf("bson.D copy %v, %v", cp, err)
	}
}

func bytesEqual(a, b []byte) bool { return string(a) == string(b) }

// set is the update {$set: fields}.
func set(fields bson.D) bson.D { return bson.D{{Key: "$set", Value: fields}} }

func TestReferenceUpdateFanOutSkipsFrozen(t *testing.T) {
	ctx := context.Background()
	f := newFixture(t)
	ada, bob := f.customer(t, "Ada"), f.customer(t, "Bob")
	now := time.Now()
	var open, frozen []bson.ObjectID
	for i, st := range []string{"open", "delivered", "open", "cancelled", "shipped"} {
		id := f.order(t, ada, st, now.Add(time.Duration(i)*time.Minute))
		if st == "delivered" || st == "cancelled" {
			frozen = append(frozen, id)
		} else {
			open = append(open, id)
		}
	}
	other := f.order(t, bob, "open", now)

	after, fo, err := f.ref.Update(ctx, ada, set(bson.D{{Key: "name", Value: "Ada King"}, {Key: "tier", Value: "gold"}}))
	if err != nil {
		t.Fatal(err)
	}
	if after.Name != "Ada King" || after.Tier != "gold" {
		t.Fatalf("Update returned %+v", after)
	}
	if fo != (FanOut{Matched: 3, Modified: 3}) {
		t.Fatalf("fan-out %+v, want 3 matched and modified (the live orders only)", fo)
	}
	for _, id := range open {
		if got := f.stored(t, id).Lookup("name").StringValue(); got != "Ada King" {
			t.Errorf("live order %v has name %q, want Ada King", id, got)
		}
	}
	for _, id := range frozen {
		if got := f.stored(t, id).Lookup("name").StringValue(); got != "Ada" {
			t.Errorf("frozen order %v has name %q, want the snapshot Ada", id, got)
		}
	}
	if got := f.stored(t, other).Lookup("name").StringValue(); got != "Bob" {
		t.Errorf("Bob's order renamed to %q", got)
	}
	src, _ := f.customers.FindOne(ctx, bson.D{{Key: "_id", Value: ada}}).Raw()
	if src.Lookup("name").StringValue() != "Ada King" || src.Lookup("tier").StringValue() != "gold" {
		t.Fatalf("source after update: %v", src)
	}
	if f.stored(t, open[0]).Lookup("tier").Type != 0 {
		t.Fatal("an uncopied field reached the copy")
	}

	// Re-running is idempotent: matched again, nothing modified.
	// Setting the same name again changes no copied field: no fan-out.
	_, fo, err = f.ref.Update(ctx, ada, set(bson.D{{Key: "name", Value: "Ada King"}}))
	if err != nil || fo != (FanOut{}) {
		t.Fatalf("second update: %+v, %v", fo, err)
	}
	// Sync is idempotent: matched again, nothing modified.
	fo, err = f.ref.Sync(ctx, ada)
	if err != nil || fo != (FanOut{Matched: 3, Modified: 0}) {
		t.Fatalf("sync: %+v, %v", fo, err)
	}
}

func TestReferenceUpdateUncopiedFieldWritesOnce(t *testing.T) {
	ctx := context.Background()
	f := newFixture(t)
	c := f.customer(t, "Ada")
	o := f.order(t, c, "open", time.Now())
	before := f.stored(t, o)
	after, fo, err := f.ref.Update(ctx, c, bson.D{{Key: "$inc", Value: bson.D{{Key: "balance", Value: int64(7)}}}})
	if err != nil || fo != (FanOut{}) || after.Balance != 127 {
		t.Fatalf("update of a volatile field: %+v %+v, %v; want no fan-out", after, fo, err)
	}
	if !bytesEqual(before, f.stored(t, o)) {
		t.Fatal("copy changed on an uncopied field's update")
	}
	for _, missing := range []bson.D{set(bson.D{{Key: "name", Value: "x"}}), set(bson.D{{Key: "tier", Value: "x"}})} {
		if _, _, err := f.ref.Update(ctx, bson.NewObjectID(), missing); !errors.Is(err, ErrNotFound) {
			t.Fatalf("update of a missing source = %v, want ErrNotFound", err)
		}
	}
	if _, _, err := f.ref.Update(ctx, c, bson.D{}); err == nil {
		t.Fatal("empty update accepted")
	}
}

func TestReferenceSyncUnsetsRemovedField(t *testing.T) {
	ctx := context.Background()
	f := newFixture(t)
	c := f.customer(t, "Ada")
	o := f.order(t, c, "open", time.Now())
	// Another application removes the email and renames, bypassing the fan-out.
	_, err := f.customers.UpdateOne(ctx, bson.D{{Key: "_id", Value: c}},
		bson.D{{Key: "$unset", Value: bson.D{{Key: "email", Value: ""}}}, {Key: "$set", Value: bson.D{{Key: "name", Value: "Ada K"}}}})
	if err != nil {
		t.Fatal(err)
	}
	fo, err := f.ref.Sync(ctx, c)
	if err != nil || fo.Modified != 1 {
		t.Fatalf("sync: %+v, %v", fo, err)
	}
	got := f.stored(t, o)
	if _, err := got.LookupErr("email"); err == nil || got.Lookup("name").StringValue() != "Ada K" {
		t.Fatalf("copy after sync %v, want name Ada K and no email", got)
	}
	if _, err := f.ref.Sync(ctx, bson.NewObjectID()); !errors.Is(err, ErrNotFound) {
		t.Fatalf("sync of a missing source = %v", err)
	}
}

func TestReferenceVerifyRepair(t *testing.T) {
	ctx := context.Background()
	f := newFixture(t)
	ada, bob := f.customer(t, "Ada"), f.customer(t, "Bob")
	now := time.Now()
	stale := f.order(t, ada, "open", now)
	f.order(t, ada, "open", now)
	delivered := f.order(t, ada, "delivered", now)
	f.order(t, bob, "open", now)
	staleBob := f.order(t, bob, "shipped", now)
	gone := f.customer(t, "Gone")
	orphan := f.order(t, gone, "open", now)
	if _, err := f.customers.DeleteOne(ctx, bson.D{{Key: "_id", Value: gone}}); err != nil {
		t.Fatal(err)
	}
	setOrder := func(id any, upd bson.D) {
		if _, err := f.orders.UpdateOne(ctx, bson.D{{Key: "_id", Value: id}}, bson.D{{Key: "$set", Value: upd}}); err != nil {
			t.Fatal(err)
		}
	}
	setOrder(stale, bson.D{{Key: "customer.name", Value: "Wrong"}})
	setOrder(delivered, bson.D{{Key: "customer.name", Value: "Old name"}})
	setOrder(staleBob, bson.D{{Key: "customer.email", Value: int32(3)}}) // type differs

	rep, err := f.ref.Verify(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if rep.Checked != 5 || len(rep.Stale) != 2 || len(rep.Orphans) != 1 {
		t.Fatalf("verify: %+v; want 5 live orders checked, 2 stale, 1 orphan", rep)
	}
	staleIDs := map[bson.ObjectID][]string{}
	for _, s := range rep.Stale {
		staleIDs[s.ID.ObjectID()] = s.Fields
	}
	if got := staleIDs[stale]; len(got) != 1 || got[0] != "name" {
		t.Errorf("stale order fields %v, want [name]", got)
	}
	if got := staleIDs[staleBob]; len(got) != 1 || got[0] != "email" {
		t.Errorf("stale Bob order fields %v, want [email]", got)
	}
	if rep.Orphans[0].ID.ObjectID() != orphan || rep.Orphans[0].SourceID.ObjectID() != gone {
		t.Errorf("orphan %v, want %v", rep.Orphans[0], orphan)
	}

	res, err := f.ref.Check(ctx, false)
	if err != nil || res.Problems != 3 || res.Checked != 5 || res.Repaired != 0 || len(res.Details) != 3 || res.Name != "extref orders.customer" {
		t.Fatalf("Check: %+v, %v", res, err)
	}
	// Under Refuse, Repair leaves the orphan for the application.
	rep, err = f.ref.Repair(ctx)
	if err != nil || rep.Repaired != 2 {
		t.Fatalf("repair: %+v, %v; want 2 repaired", rep, err)
	}
	if got := f.stored(t, stale).Lookup("name").StringValue(); got != "Ada" {
		t.Fatalf("repaired name %q", got)
	}
	if got := f.stored(t, staleBob).Lookup("email").StringValue(); got != "bob@example.com" {
		t.Fatalf("repaired email %q", got)
	}
	if got := f.stored(t, delivered).Lookup("name").StringValue(); got != "Old name" {
		t.Fatalf("repair touched a frozen order: name %q", got)
	}
	rep, err = f.ref.Verify(ctx)
	if err != nil || len(rep.Stale) != 0 || len(rep.Orphans) != 1 {
		t.Fatalf("verify after repair: %+v, %v", rep, err)
	}
}

func TestReferenceVerifyManyBatches(t *testing.T) {
	ctx := context.Background()
	f := newFixture(t)
	var docs []any
	var ids []bson.ObjectID
	for i := 0; i < 40; i++ {
		ids = append(ids, f.customer(t, "C"+string(rune('a'+i%26))))
	}
	for i := 0; i < 3*verifyBatch+7; i++ {
		c := ids[i%len(ids)]
		ref, err := f.ref.Copy(ctx, c)
		if err != nil {
			t.Fatal(err)
		}
		if i%100 == 0 {
			ref.Name = "stale"
		}
		docs = append(docs, Order{Status: "open", Customer: ref})
	}
	if _, err := f.orders.InsertMany(ctx, docs); err != nil {
		t.Fatal(err)
	}
	rep, err := f.ref.Verify(ctx)
	if err != nil || rep.Checked != int64(len(docs)) || len(rep.Stale) != 8 || len(rep.Orphans) != 0 {
		t.Fatalf("verify: checked %d stale %d orphans %d err %v; want %d, 8, 0",
			rep.Checked, len(rep.Stale), len(rep.Orphans), err, len(docs))
	}
}

func TestReferenceIndexUsed(t *testing.T) {
	ctx := context.Background()
	f := newFixture(t)
	var cs []bson.ObjectID
	for i := 0; i < 20; i++ {
		c := f.customer(t, "C")
		cs = append(cs, c)
		for j := 0; j < 5; j++ {
			f.order(t, c, []string{"open", "delivered"}[j%2], time.Now().Add(time.Duration(j)*time.Hour))
		}
	}
	const index = "customer._id_1_createdAt_-1"
	specs, err := f.orders.Indexes().ListSpecifications(ctx)
	if err != nil {
		t.Fatal(err)
	}
	names := []string{}
	for _, s := range specs {
		names = append(names, s.Name)
	}
	if len(specs) != 2 || specs[1].Name != index {
		t.Fatalf("indexes %v, want _id_ and %s", names, index)
	}
	if err := f.ref.EnsureIndexes(ctx); err != nil {
		t.Fatalf("EnsureIndexes is not idempotent: %v", err)
	}

	list := bson.D{{Key: "find", Value: "orders"},
		{Key: "filter", Value: bson.D{{Key: "customer._id", Value: cs[3]}}},
		{Key: "sort", Value: bson.D{{Key: "createdAt", Value: -1}}}}
	if res := explaintest.Run(t, f.db, list); res.HasStage("COLLSCAN") || res.HasStage("SORT") || !res.Uses(index) {
		t.Fatalf("listing plan %v: want a scan of %s, no COLLSCAN, no SORT", res, index)
	}

	fan := explainUpdate("orders", f.ref.tracked(cs[3]),
		bson.D{{Key: "$set", Value: bson.D{{Key: "customer.name", Value: "x"}}}})
	if res := explaintest.Run(t, f.db, fan); res.HasStage("COLLSCAN") || !res.Uses(index) {
		t.Fatalf("fan-out plan %v: want a scan of %s and no COLLSCAN", res, index)
	}

	// The delete policies select the same documents through the index:
	// Refuse counts them, Cascade deletes them, Detach updates them (with
	// a DetachMark, one more residual condition).
	marked := *f.ref
	marked.cfg.DetachMark = "deleted"
	policies := map[string]bson.D{
		"refuse": {{Key: "aggregate", Value: "orders"}, {Key: "pipeline", Value: bson.A{
			bson.D{{Key: "$match", Value: f.ref.tracked(cs[3])}},
			bson.D{{Key: "$group", Value: bson.D{{Key: "_id", Value: 1}, {Key: "n", Value: bson.D{{Key: "$sum", Value: 1}}}}}}}},
			{Key: "cursor", Value: bson.D{}}},
		"cascade": {{Key: "delete", Value: "orders"}, {Key: "deletes", Value: bson.A{bson.D{
			{Key: "q", Value: f.ref.tracked(cs[3])}, {Key: "limit", Value: 0}}}}},
		"detach": explainUpdate("orders", marked.tracked(cs[3]),
			bson.D{{Key: "$set", Value: bson.D{{Key: "customer.deleted", Value: true}}}}),
	}
	for name, cmd := range policies {
		if res := explaintest.Run(t, f.db, cmd); res.HasStage("COLLSCAN") || !res.Uses(index) {
			t.Fatalf("%s plan %v: want a scan of %s and no COLLSCAN", name, res, index)
		}
	}

	// Without the index the same fan-out scans the collection: the
	// assertion above has teeth.
	if err := f.orders.Indexes().DropOne(ctx, index); err != nil {
		t.Fatal(err)
	}
	if res := explaintest.Run(t, f.db, fan); !res.HasStage("COLLSCAN") {
		t.Fatalf("plan without the index: %v, want a COLLSCAN", res)
	}

	got, err := f.ref.List(ctx, cs[3], 3)
	if err != nil || len(got) != 3 {
		t.Fatalf("List: %d, %v", len(got), err)
	}
	for i := 1; i < len(got); i++ {
		if !got[i-1].CreatedAt.After(got[i].CreatedAt) {
			t.Fatal("List is not newest first")
		}
	}
}

// An empty Frozen filter freezes nothing ({$nor: [{}]} would freeze all).
func TestReferenceEmptyFrozen(t *testing.T) {
	ctx := context.Background()
	db := testenv.Database(t)
	cfg := orderConfig()
	cfg.Frozen = bson.D{}
	ref, err := New[Customer, Order, CustomerRef](db.Collection("customers"), db.Collection("orders"), cfg)
	if err != nil {
		t.Fatal(err)
	}
	f := &fixture{db: db, customers: db.Collection("customers"), orders: db.Collection("orders"), ref: ref}
	c := f.customer(t, "Ada")
	o := f.order(t, c, "delivered", time.Now())
	if _, fo, err := ref.Update(ctx, c, set(bson.D{{Key: "name", Value: "Ada King"}})); err != nil || fo.Modified != 1 {
		t.Fatalf("fan-out with an empty Frozen: %+v, %v", fo, err)
	}
	if got := f.stored(t, o).Lookup("name").StringValue(); got != "Ada King" {
		t.Fatalf("name %q", got)
	}
}
