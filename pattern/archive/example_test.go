package archive_test

import (
	"context"
	"fmt"
	"os"
	"time"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo"

	"github.com/formworkdb/formwork/engine"
	"github.com/formworkdb/formwork/internal/testenv"
	"github.com/formworkdb/formwork/pattern/archive"
)

// Order is the application's document.
type Order struct {
	ID        int       `bson:"_id"`
	Customer  string    `bson:"customerId"`
	CreatedAt time.Time `bson:"createdAt"`
}

// exampleDB opens an in-memory engine for an example.
func exampleDB() (*mongo.Client, func()) {
	ctx := context.Background()
	db, err := engine.Open(ctx, engine.Options{})
	if err != nil {
		panic(err)
	}
	client, err := testenv.Connect(db)
	if err != nil {
		panic(err)
	}
	return client, func() { client.Disconnect(ctx); db.Close() }
}

// ExampleNew archives orders older than a year from shop.orders into
// archive.orders, in another database.
func ExampleNew() {
	client, done := exampleDB()
	defer done()
	ctx := context.Background()
	orders := client.Database("shop").Collection("orders")
	a, err := archive.New[Order](orders, client.Database("archive").Collection("orders"),
		archive.Config{Field: "createdAt", Age: 365 * 24 * time.Hour, Slice: 7 * 24 * time.Hour})
	if err != nil {
		panic(err)
	}
	if err := a.EnsureIndexes(ctx); err != nil {
		panic(err)
	}
	fmt.Println(a.Name())
	// Output: archive shop.orders -> archive.orders
}

// ExampleArchiver_Run moves the orders older than the cutoff, slice by
// slice; a second run finds nothing left to move.
func ExampleArchiver_Run() {
	client, done := exampleDB()
	defer done()
	ctx := context.Background()
	orders := client.Database("shop").Collection("orders")
	a, _ := archive.New[Order](orders, client.Database("archive").Collection("orders"),
		archive.Config{Field: "createdAt", Age: 365 * 24 * time.Hour})
	a.EnsureIndexes(ctx)
	start := time.Date(2023, 1, 1, 0, 0, 0, 0, time.UTC)
	for i := range 10 { // one order every 73 days
		orders.InsertOne(ctx, Order{ID: i, Customer: "c1", CreatedAt: start.Add(time.Duration(i) * 73 * 24 * time.Hour)})
	}
	now := time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC)
	rep, err := a.Run(ctx, archive.RunOptions{Now: now})
	if err != nil {
		panic(err)
	}
	fmt.Println("cutoff", rep.Cutoff.Format(time.DateOnly), "moved", rep.Deleted, "in", rep.Slices, "slices")
	rep, _ = a.Run(ctx, archive.RunOptions{Now: now})
	fmt.Println("rerun moved", rep.Deleted)
	live, _ := orders.CountDocuments(ctx, bson.D{})
	o, archived, _ := a.Get(ctx, 0)
	fmt.Println("live", live, "order 0 archived:", archived, o.CreatedAt.Format(time.DateOnly))
	// Output:
	// cutoff 2024-01-02 moved 6 in 6 slices
	// rerun moved 0
	// live 4 order 0 archived: true 2023-01-01
}

// ExampleArchiver_Export writes an archived month to an object-storage
// layout and restores it.
func ExampleArchiver_Export() {
	client, done := exampleDB()
	defer done()
	ctx := context.Background()
	orders := client.Database("shop").Collection("orders")
	a, _ := archive.New[Order](orders, client.Database("archive").Collection("orders"),
		archive.Config{Field: "createdAt", Age: 30 * 24 * time.Hour})
	for i := range 5 {
		orders.InsertOne(ctx, Order{ID: i, CreatedAt: time.Date(2024, 3, 1+i, 0, 0, 0, 0, time.UTC)})
	}
	a.Run(ctx, archive.RunOptions{Now: time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC)})
	dir, _ := os.MkdirTemp("", "archive")
	defer os.RemoveAll(dir)
	m, err := a.Export(ctx, archive.DirStore(dir), time.Date(2024, 3, 1, 0, 0, 0, 0, time.UTC))
	if err != nil {
		panic(err)
	}
	fmt.Println(m.Count, "orders in", m.Parts[0].Key)
	n, _ := a.Restore(ctx, archive.DirStore(dir), m.From, client.Database("scratch").Collection("orders"))
	fmt.Println("restored", n)
	// Output:
	// 5 orders in archive/orders/2024/03/part-0.bson.zst
	// restored 5
}
