package extref_test

import (
	"context"
	"fmt"
	"log"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo"
	"go.mongodb.org/mongo-driver/v2/mongo/options"

	"github.com/formworkdb/formwork/engine"
	"github.com/formworkdb/formwork/pattern/extref"
)

// Orders carry their customer's name; renaming the customer renames open
// orders and leaves delivered ones as they were delivered.
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

	ref, err := extref.New(db.Collection("customers"), db.Collection("orders"), extref.Config{
		Field:    "customer",
		Fields:   []string{"name"},
		Volatile: []string{"balance"},
		Frozen:   bson.D{{Key: "status", Value: "delivered"}},
	})
	if err != nil {
		log.Fatal(err)
	}
	if err := ref.EnsureIndexes(ctx); err != nil {
		log.Fatal(err)
	}
	db.Collection("customers").InsertOne(ctx, bson.D{{Key: "_id", Value: 1}, {Key: "name", Value: "Ada"}, {Key: "balance", Value: 40}})
	ref.Insert(ctx, 1, bson.D{{Key: "_id", Value: "o1"}, {Key: "status", Value: "delivered"}})
	ref.Insert(ctx, 1, bson.D{{Key: "_id", Value: "o2"}, {Key: "status", Value: "open"}})

	fo, err := ref.Update(ctx, 1, bson.D{{Key: "name", Value: "Ada King"}})
	if err != nil {
		log.Fatal(err)
	}
	fmt.Printf("fan-out matched %d, modified %d\n", fo.Matched, fo.Modified)
	for _, id := range []string{"o1", "o2"} {
		var order struct {
			Status   string
			Customer struct {
				ID   int `bson:"_id"`
				Name string
			}
		}
		db.Collection("orders").FindOne(ctx, bson.D{{Key: "_id", Value: id}}).Decode(&order)
		fmt.Printf("%s %-9s customer %d %q\n", id, order.Status, order.Customer.ID, order.Customer.Name)
	}

	_, err = extref.New(db.Collection("customers"), db.Collection("orders"), extref.Config{
		Field: "customer", Fields: []string{"name", "balance"}, Volatile: []string{"balance"}})
	fmt.Println(err)
	// Output:
	// fan-out matched 1, modified 1
	// o1 delivered customer 1 "Ada"
	// o2 open      customer 1 "Ada King"
	// extref: config: Fields: "balance": field is marked volatile
}
