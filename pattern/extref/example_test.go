package extref_test

import (
	"context"
	"errors"
	"fmt"
	"log"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo"
	"go.mongodb.org/mongo-driver/v2/mongo/options"

	"github.com/formworkdb/formwork/engine"
	"github.com/formworkdb/formwork/pattern"
	"github.com/formworkdb/formwork/pattern/extref"
)

// Customer is the source document: the customers collection.
type Customer struct {
	ID      int    `bson:"_id"`
	Name    string `bson:"name"`
	Balance int    `bson:"balance"`
}

// CustomerRef is the copy of a customer embedded in each order.
type CustomerRef struct {
	ID   int    `bson:"_id"`
	Name string `bson:"name"`
}

// Order is the referencing document: the orders collection.
type Order struct {
	ID       string      `bson:"_id"`
	Customer CustomerRef `bson:"customer"`
	Status   string      `bson:"status"`
}

// shop opens an in-memory engine and returns its "shop" database and a
// function that closes both.
func shop(ctx context.Context) (*mongo.Database, func()) {
	eng, err := engine.Open(ctx, engine.Options{})
	if err != nil {
		log.Fatal(err)
	}
	client, err := mongo.Connect(options.Client().ApplyURI("mongodb://localhost").SetDialer(eng.Dialer()))
	if err != nil {
		log.Fatal(err)
	}
	return client.Database("shop"), func() { client.Disconnect(ctx); eng.Close() }
}

// orders declares the reference every example uses: orders carry their
// customer's name; delivered orders are snapshots.
func orders(ctx context.Context, db *mongo.Database, policy extref.Policy) *extref.Reference[Customer, Order, CustomerRef] {
	ref, err := extref.New[Customer, Order, CustomerRef](db.Collection("customers"), db.Collection("orders"), extref.Config{
		Field:    "customer",
		Fields:   []string{"name"},
		Volatile: []string{"balance"},
		Frozen:   bson.D{{Key: "status", Value: "delivered"}},
		OnDelete: policy,
	})
	if err != nil {
		log.Fatal(err)
	}
	if err := ref.EnsureIndexes(ctx); err != nil {
		log.Fatal(err)
	}
	return ref
}

// New declares the reference and Insert fills each order's copy from its
// customer; a Config that copies a volatile field, or whose Frozen filter
// the server would refuse, is refused.
func ExampleNew() {
	ctx := context.Background()
	db, done := shop(ctx)
	defer done()
	ref := orders(ctx, db, extref.Refuse)

	db.Collection("customers").InsertOne(ctx, Customer{ID: 1, Name: "Ada", Balance: 40})
	o, err := ref.Insert(ctx, 1, Order{ID: "o1", Status: "open"})
	if err != nil {
		log.Fatal(err)
	}
	fmt.Printf("%s: customer %d %q\n", o.ID, o.Customer.ID, o.Customer.Name)

	_, err = extref.New[Customer, Order, CustomerRef](db.Collection("customers"), db.Collection("orders"), extref.Config{
		Field: "customer", Fields: []string{"name", "balance"}, Volatile: []string{"balance"}})
	fmt.Println(err)
	_, err = extref.New[Customer, Order, CustomerRef](db.Collection("customers"), db.Collection("orders"), extref.Config{
		Field: "customer", Fields: []string{"name"},
		Frozen: bson.D{{Key: "status", Value: bson.D{{Key: "$inn", Value: bson.A{"delivered"}}}}}})
	fmt.Println(err)
	// Output:
	// o1: customer 1 "Ada"
	// extref: config: Fields: "balance": field is marked volatile: invalid config
	// extref: config: Frozen: field "status": unknown operator $inn: invalid config
}

// Update renames a customer and fans the new name out to the open orders;
// the delivered order keeps the name it was delivered to, and a change of
// an uncopied field writes no order.
func ExampleReference_Update() {
	ctx := context.Background()
	db, done := shop(ctx)
	defer done()
	ref := orders(ctx, db, extref.Refuse)
	db.Collection("customers").InsertOne(ctx, Customer{ID: 1, Name: "Ada", Balance: 40})
	ref.Insert(ctx, 1, Order{ID: "o1", Status: "delivered"})
	ref.Insert(ctx, 1, Order{ID: "o2", Status: "open"})

	c, fo, err := ref.Update(ctx, 1, bson.D{{Key: "$set", Value: bson.D{{Key: "name", Value: "Ada King"}}}})
	if err != nil {
		log.Fatal(err)
	}
	fmt.Printf("%s: fan-out matched %d, modified %d\n", c.Name, fo.Matched, fo.Modified)
	c, fo, _ = ref.Update(ctx, 1, bson.D{{Key: "$inc", Value: bson.D{{Key: "balance", Value: 5}}}})
	fmt.Printf("balance %d: fan-out matched %d\n", c.Balance, fo.Matched)

	list, _ := ref.List(ctx, 1, 0)
	for _, o := range list {
		fmt.Printf("%s %-9s %q\n", o.ID, o.Status, o.Customer.Name)
	}
	// Output:
	// Ada King: fan-out matched 1, modified 1
	// balance 45: fan-out matched 0
	// o1 delivered "Ada"
	// o2 open      "Ada King"
}

// Delete applies Config.OnDelete: Refuse keeps a customer with open
// orders, Cascade deletes the open orders with the customer; delivered
// orders are records that outlive it.
func ExampleReference_Delete() {
	ctx := context.Background()
	db, done := shop(ctx)
	defer done()
	db.Collection("customers").InsertOne(ctx, Customer{ID: 1, Name: "Ada"})
	refuse := orders(ctx, db, extref.Refuse)
	refuse.Insert(ctx, 1, Order{ID: "o1", Status: "delivered"})
	refuse.Insert(ctx, 1, Order{ID: "o2", Status: "open"})

	_, err := refuse.Delete(ctx, 1)
	fmt.Println(errors.Is(err, extref.ErrHasChildren), err)

	cascade := orders(ctx, db, extref.Cascade)
	gone, err := cascade.Delete(ctx, 1)
	if err != nil {
		log.Fatal(err)
	}
	left, _ := cascade.List(ctx, 1, 0)
	fmt.Printf("deleted %s; orders left: %d (%s, %s)\n", gone.Name, len(left), left[0].ID, left[0].Status)
	// Output:
	// true extref: delete: source 1: 1 live referencing documents: parent still has children
	// deleted Ada; orders left: 1 (o1, delivered)
}

// InsertMany loads orders in bulk: one read of their distinct customers,
// one insertMany.
func ExampleReference_InsertMany() {
	ctx := context.Background()
	db, done := shop(ctx)
	defer done()
	ref := orders(ctx, db, extref.Refuse)
	db.Collection("customers").InsertMany(ctx, []Customer{{ID: 1, Name: "Ada"}, {ID: 2, Name: "Bob"}})

	loaded, err := ref.InsertMany(ctx, []any{1, 2, 1}, []Order{
		{ID: "o1", Status: "open"}, {ID: "o2", Status: "open"}, {ID: "o3", Status: "delivered"}})
	if err != nil {
		log.Fatal(err)
	}
	for _, o := range loaded {
		fmt.Printf("%s %q\n", o.ID, o.Customer.Name)
	}
	_, err = ref.InsertMany(ctx, []any{3}, []Order{{ID: "o4"}})
	fmt.Println(errors.Is(err, extref.ErrParentNotFound))
	// Output:
	// o1 "Ada"
	// o2 "Bob"
	// o3 "Ada"
	// true
}

// Apply makes the Reference a pattern.Dependent of the customers
// collection: a pattern.Source performs each write on a customer and
// maintains the orders' copies (and any other copy declared with it);
// Applied takes a write the application made itself.
func ExampleReference_Apply() {
	ctx := context.Background()
	db, done := shop(ctx)
	defer done()
	ref := orders(ctx, db, extref.Detach)
	customers := pattern.NewSource[Customer](db.Collection("customers"), ref)
	customers.Insert(ctx, Customer{ID: 1, Name: "Ada"})
	ref.Insert(ctx, 1, Order{ID: "o1", Status: "open"})

	customers.Update(ctx, 1, bson.D{{Key: "$set", Value: bson.D{{Key: "name", Value: "Ada King"}}}})
	o, _ := ref.List(ctx, 1, 0)
	fmt.Println("after rename:", o[0].Customer.Name)

	// A write made elsewhere, then handed over with its images.
	before, _ := db.Collection("customers").FindOne(ctx, bson.D{{Key: "_id", Value: 1}}).Raw()
	db.Collection("customers").DeleteOne(ctx, bson.D{{Key: "_id", Value: 1}})
	if err := customers.Applied(ctx, pattern.Change{Op: pattern.Delete, Before: before}); err != nil {
		log.Fatal(err)
	}
	var detached bson.D
	db.Collection("orders").FindOne(ctx, bson.D{{Key: "_id", Value: "o1"}}).Decode(&detached)
	fmt.Println("after delete:", detached)

	res, _ := customers.Check(ctx, false)
	fmt.Printf("%s: %d checked, ok %v\n", res[0].Name, res[0].Checked, res[0].OK())
	// Output:
	// after rename: Ada King
	// after delete: {"_id":"o1","status":"open"}
	// extref orders.customer: 0 checked, ok true
}
