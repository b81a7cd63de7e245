package subset_test

import (
	"context"
	"fmt"
	"log"
	"time"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo"
	"go.mongodb.org/mongo-driver/v2/mongo/options"

	"github.com/formworkdb/formwork/engine"
	"github.com/formworkdb/formwork/pattern/subset"
)

// A product embeds its three newest reviews; all reviews stay in the
// reviews collection and page through it newest first.
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

	w, err := subset.New(db.Collection("products"), db.Collection("reviews"), subset.Config{
		Parent: "productId", Time: "at", Array: "recentReviews", Size: 3,
	})
	if err != nil {
		log.Fatal(err)
	}
	if err := w.EnsureIndexes(ctx); err != nil {
		log.Fatal(err)
	}
	db.Collection("products").InsertOne(ctx, bson.D{{Key: "_id", Value: "widget"}})
	day := time.Date(2025, 3, 1, 0, 0, 0, 0, time.UTC)
	for i, text := range []string{"great", "broke", "fine", "love it", "meh"} {
		w.Add(ctx, bson.D{{Key: "_id", Value: fmt.Sprint("r", i+1)}, {Key: "productId", Value: "widget"},
			{Key: "at", Value: day.AddDate(0, 0, i)}, {Key: "text", Value: text}})
	}
	show := func(label string) {
		recent, _ := w.Recent(ctx, "widget")
		fmt.Print(label, ":")
		for _, r := range recent {
			fmt.Printf(" %s(%s)", r.Lookup("_id").StringValue(), r.Lookup("text").StringValue())
		}
		fmt.Println()
	}
	show("product page")

	w.Delete(ctx, "r4")
	show("after deleting r4")

	var after subset.Cursor
	for {
		page, _ := w.Page(ctx, "widget", after, 2)
		fmt.Print("page:")
		for _, r := range page.Children {
			fmt.Print(" ", r.Lookup("_id").StringValue())
		}
		fmt.Println()
		if page.Next == nil {
			break
		}
		after = *page.Next
	}
	// Output:
	// product page: r5(meh) r4(love it) r3(fine)
	// after deleting r4: r5(meh) r3(fine) r2(broke)
	// page: r5 r3
	// page: r2 r1
}
