package pattern_test

import (
	"context"
	"fmt"
	"log"
	"time"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo"
	"go.mongodb.org/mongo-driver/v2/mongo/options"

	"github.com/formworkdb/formwork/engine"
	"github.com/formworkdb/formwork/pattern"
	"github.com/formworkdb/formwork/pattern/computed"
	"github.com/formworkdb/formwork/pattern/subset"
)

// Review is one review of a product: the source of both derived copies.
type Review struct {
	ID        string    `bson:"_id"`
	ProductID string    `bson:"productId"`
	At        time.Time `bson:"at"`
	Stars     int       `bson:"stars"`
	Text      string    `bson:"text"`
}

// Product is the product page: its newest reviews (subset) and its rating
// (computed) kept in the document itself.
type Product struct {
	ID            string          `bson:"_id"`
	Name          string          `bson:"name"`
	RecentReviews []Review        `bson:"recentReviews"`
	Rating        computed.Totals `bson:"rating,omitempty"`
}

// ExampleSource is the catalogue's product page: one reviews collection
// feeds the five newest reviews embedded in the product and its average
// rating. Each logical write is one call on the Source, which maintains
// both; the page is one FindOne.
func ExampleSource() {
	ctx := context.Background()
	eng, err := engine.Open(ctx, engine.Options{}) // in memory
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
	products, reviewColl := db.Collection("products"), db.Collection("reviews")

	window, err := subset.New[Product, Review](products, reviewColl, subset.Config{
		Parent: "productId", Time: "at", Array: "recentReviews", Size: 5})
	if err != nil {
		log.Fatal(err)
	}
	rating, err := computed.New[Product, Review](products, reviewColl, computed.Config{
		Parent: "productId", Value: "stars", Target: "rating"})
	if err != nil {
		log.Fatal(err)
	}
	reviews := pattern.NewSource[Review](reviewColl, window, rating)
	if err := reviews.EnsureIndexes(ctx); err != nil {
		log.Fatal(err)
	}
	if _, err := products.InsertOne(ctx, Product{ID: "widget", Name: "Super Widget"}); err != nil {
		log.Fatal(err)
	}

	day := time.Date(2025, 3, 1, 0, 0, 0, 0, time.UTC)
	for i, stars := range []int{5, 3, 4, 2, 5, 4} {
		r := Review{ID: fmt.Sprint("r", i), ProductID: "widget", At: day.AddDate(0, 0, i), Stars: stars}
		if _, err := reviews.Insert(ctx, r); err != nil {
			log.Fatal(err)
		}
	}
	// An edit and a delete: each one call, both copies follow.
	if _, err := reviews.Update(ctx, "r5", bson.D{{Key: "$set", Value: bson.D{{Key: "stars", Value: 1}}}}); err != nil {
		log.Fatal(err)
	}
	if _, err := reviews.Delete(ctx, "r4"); err != nil {
		log.Fatal(err)
	}

	var page Product // the whole product page: one document read
	if err := products.FindOne(ctx, bson.D{{Key: "_id", Value: "widget"}}).Decode(&page); err != nil {
		log.Fatal(err)
	}
	avg, _ := page.Rating.Average()
	fmt.Printf("%s: %.2f from %d reviews\n", page.Name, avg, page.Rating.Count)
	for _, r := range page.RecentReviews {
		fmt.Println(r.ID, r.Stars)
	}
	results, err := reviews.Check(ctx, false)
	if err != nil {
		log.Fatal(err)
	}
	for _, res := range results {
		fmt.Println(res.Name, "ok:", res.OK())
	}
	// Output:
	// Super Widget: 3.00 from 5 reviews
	// r5 1
	// r3 2
	// r2 4
	// r1 3
	// r0 5
	// subset products.recentReviews ok: true
	// computed products.rating ok: true
}
