package outlier_test

import (
	"context"
	"fmt"
	"log"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo"
	"go.mongodb.org/mongo-driver/v2/mongo/options"

	"github.com/formworkdb/formwork/engine"
	"github.com/formworkdb/formwork/pattern/bucket"
	"github.com/formworkdb/formwork/pattern/outlier"
)

// Books embed up to three buyers; a bestseller's further buyers go to an
// overflow collection, bucketed by two.
func ExampleNew() {
	ctx := context.Background()
	db, err := engine.Open(ctx, engine.Options{})
	if err != nil {
		log.Fatal(err)
	}
	defer db.Close()
	client, err := mongo.Connect(options.Client().ApplyURI("mongodb://localhost").SetDialer(db.Dialer()))
	if err != nil {
		log.Fatal(err)
	}
	defer client.Disconnect(ctx)
	shop := client.Database("shop")

	books, err := outlier.New[bson.D, string](shop.Collection("books"), shop.Collection("bookBuyersOverflow"), outlier.Config{
		Threshold: 3, List: "buyers", Count: "buyerCount",
		Overflow: bucket.Config{Owner: "bookId", Size: 2},
	})
	if err != nil {
		log.Fatal(err)
	}
	if err := books.EnsureIndexes(ctx); err != nil {
		log.Fatal(err)
	}
	if _, err := books.Create(ctx, bson.D{{Key: "_id", Value: 7}, {Key: "title", Value: "Invisible Cities"}}); err != nil {
		log.Fatal(err)
	}
	for _, u := range []string{"ann", "bob", "cy", "dee", "eve"} {
		where, err := books.Append(ctx, 7, u)
		if err != nil {
			log.Fatal(err)
		}
		fmt.Println(u, where)
	}
	if _, err := books.Append(ctx, 8, "zed"); err != nil {
		fmt.Println(err)
	}

	var doc bson.Raw
	if err := shop.Collection("books").FindOne(ctx, bson.D{{Key: "_id", Value: 7}}).Decode(&doc); err != nil {
		log.Fatal(err)
	}
	fmt.Println("stored:", doc)
	head, err := books.Get(ctx, 7)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println("page:", head.Elements, "of", head.Count)
	all, err := books.GetAll(ctx, 7)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println("all:", all.Elements)
	// Output:
	// ann embedded
	// bob embedded
	// cy embedded
	// dee overflowed
	// eve overflowed
	// outlier: append: parent 8: parent not found
	// stored: {"_id": {"$numberInt":"7"},"title": "Invisible Cities","buyerCount": {"$numberInt":"5"},"hasOverflow": true,"buyers": ["ann","bob","cy"]}
	// page: [ann bob cy] of 5
	// all: [ann bob cy dee eve]
}
