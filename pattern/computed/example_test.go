package computed_test

import (
	"context"
	"fmt"
	"log"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo"
	"go.mongodb.org/mongo-driver/v2/mongo/options"

	"github.com/formworkdb/formwork/engine"
	"github.com/formworkdb/formwork/pattern/computed"
)

// A product keeps the sum and count of its ratings; the average is
// computed on read from one document.
func Example() {
	ctx := context.Background()
	eng, err := engine.Open(ctx, engine.Options{})
	if err != nil {
		log.Fatal(err)
	}
	defer eng.Close()
	client, err := mongo.Connect(options.Client().ApplyURI("mongodb://localhost").SetDialer(eng.Dialer()))
	if err != nil {
		log.Fatal(err)
	}
	defer client.Disconnect(ctx)
	db := client.Database("shop")

	m, err := computed.New(db.Collection("products"), db.Collection("ratings"), computed.Config{
		Parent: "productId", Value: "stars", Target: "rating",
	})
	if err != nil {
		log.Fatal(err)
	}
	if err := m.EnsureIndexes(ctx); err != nil {
		log.Fatal(err)
	}
	db.Collection("products").InsertOne(ctx, bson.D{{Key: "_id", Value: "widget"}})
	show := func(label string) {
		avg, n, _ := m.Average(ctx, "widget")
		var p struct {
			Rating struct{ Sum, Count int64 }
		}
		db.Collection("products").FindOne(ctx, bson.D{{Key: "_id", Value: "widget"}}).Decode(&p)
		fmt.Printf("%-13s stored sum=%d count=%d, average %.2f of %d\n", label, p.Rating.Sum, p.Rating.Count, avg, n)
	}
	var ids []any
	for _, stars := range []int{5, 4, 2} {
		id, _ := m.Insert(ctx, bson.D{{Key: "productId", Value: "widget"}, {Key: "stars", Value: stars}})
		ids = append(ids, id)
	}
	show("three ratings")
	m.Edit(ctx, ids[2], 5)
	show("edit 2 to 5")
	m.Delete(ctx, ids[0])
	show("delete a 5")
	// Output:
	// three ratings stored sum=11 count=3, average 3.67 of 3
	// edit 2 to 5   stored sum=14 count=3, average 4.67 of 3
	// delete a 5    stored sum=9 count=2, average 4.50 of 2
}
