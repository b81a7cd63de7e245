package computed_test

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
	"github.com/formworkdb/formwork/pattern/computed"
)

// Product is the parent: its rating is kept by the pattern.
type Product struct {
	ID     string          `bson:"_id"`
	Name   string          `bson:"name"`
	Rating computed.Totals `bson:"rating,omitempty"`
}

// Review is a child: it names its product and holds the stars.
type Review struct {
	ID        any    `bson:"_id,omitempty"`
	ProductID string `bson:"productId"`
	Stars     int    `bson:"stars"`
}

// connect opens an in-memory engine and returns a database on it.
func connect(ctx context.Context) (*mongo.Database, func()) {
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

// rating declares the running totals of the reviews' stars in each
// product's rating.
func rating(ctx context.Context, db *mongo.Database, policy computed.Policy) *computed.Rollup[Product, Review] {
	r, err := computed.New[Product, Review](db.Collection("products"), db.Collection("reviews"), computed.Config{
		Parent: "productId", Value: "stars", Target: "rating",
		Stats:          computed.Sum | computed.Count | computed.Min | computed.Max,
		OnParentDelete: policy,
	})
	if err != nil {
		log.Fatal(err)
	}
	if err := r.EnsureIndexes(ctx); err != nil {
		log.Fatal(err)
	}
	return r
}

// A product keeps the sum, count, min and max of its reviews' stars; the
// product page reads one document, with the average computed from sum and
// count.
func ExampleNew() {
	ctx := context.Background()
	db, done := connect(ctx)
	defer done()
	ratings := rating(ctx, db, computed.Refuse)
	db.Collection("products").InsertOne(ctx, Product{ID: "widget", Name: "Super Widget"})

	for _, stars := range []int{5, 4, 2} {
		if _, err := ratings.Insert(ctx, Review{ProductID: "widget", Stars: stars}); err != nil {
			log.Fatal(err)
		}
	}
	p, err := ratings.Parent(ctx, "widget")
	if err != nil {
		log.Fatal(err)
	}
	avg, _ := p.Rating.Average()
	fmt.Printf("%s: %.2f from %d reviews, %v to %v stars\n", p.Name, avg, p.Rating.Count, p.Rating.Min, p.Rating.Max)
	// Output:
	// Super Widget: 3.67 from 3 reviews, 2 to 5 stars
}

// Editing a review adds the difference to the sum; when the edit raises
// the old minimum, the minimum is recomputed from the reviews.
func ExampleRollup_Edit() {
	ctx := context.Background()
	db, done := connect(ctx)
	defer done()
	ratings := rating(ctx, db, computed.Refuse)
	db.Collection("products").InsertOne(ctx, Product{ID: "widget"})
	var ids []any
	for _, stars := range []int{5, 4, 2} {
		id, _ := ratings.Insert(ctx, Review{ProductID: "widget", Stars: stars})
		ids = append(ids, id)
	}
	if _, err := ratings.Edit(ctx, ids[2], 5); err != nil {
		log.Fatal(err)
	}
	t, _ := ratings.Get(ctx, "widget")
	fmt.Printf("sum %v of %d, min %v, max %v\n", t.Sum, t.Count, t.Min, t.Max)
	// Output:
	// sum 14 of 3, min 4, max 5
}

// Moving a review to another product subtracts it from the first and adds
// it to the second, with one call.
func ExampleRollup_Move() {
	ctx := context.Background()
	db, done := connect(ctx)
	defer done()
	ratings := rating(ctx, db, computed.Refuse)
	db.Collection("products").InsertMany(ctx, []any{Product{ID: "widget"}, Product{ID: "gadget"}})
	id, _ := ratings.Insert(ctx, Review{ProductID: "widget", Stars: 4})
	ratings.Insert(ctx, Review{ProductID: "gadget", Stars: 2})
	if _, err := ratings.Move(ctx, id, "gadget"); err != nil {
		log.Fatal(err)
	}
	for _, p := range []string{"widget", "gadget"} {
		t, _ := ratings.Get(ctx, p)
		avg, ok := t.Average()
		fmt.Printf("%s: %d reviews, average %.1f (%v)\n", p, t.Count, avg, ok)
	}
	// Output:
	// widget: 0 reviews, average 0.0 (false)
	// gadget: 2 reviews, average 3.0 (true)
}

// The average is derived from the stored sum and count, never stored.
func ExampleTotals_Average() {
	t := computed.Totals{Sum: 11, Count: 3, Min: 2, Max: 5}
	avg, ok := t.Average()
	fmt.Printf("%.3f %v\n", avg, ok)
	_, ok = computed.Totals{}.Average()
	fmt.Println(ok)
	// Output:
	// 3.667 true
	// false
}

// DeleteParent follows Config.OnParentDelete: Refuse keeps a product
// that still has reviews, Cascade deletes the reviews with it.
func ExampleRollup_DeleteParent() {
	ctx := context.Background()
	db, done := connect(ctx)
	defer done()
	for _, policy := range []computed.Policy{computed.Refuse, computed.Cascade} {
		ratings := rating(ctx, db, policy)
		id := policy.String() + "-widget"
		db.Collection("products").InsertOne(ctx, Product{ID: id})
		ratings.Insert(ctx, Review{ProductID: id, Stars: 4})
		ratings.Insert(ctx, Review{ProductID: id, Stars: 2})
		n, err := ratings.DeleteParent(ctx, id)
		left, _ := db.Collection("reviews").CountDocuments(ctx, bson.D{{Key: "productId", Value: id}})
		fmt.Printf("%v: %d deleted, %d left, has children: %v\n", policy, n, left, errors.Is(err, computed.ErrHasChildren))
	}
	// Output:
	// refuse: 0 deleted, 2 left, has children: true
	// cascade: 2 deleted, 0 left, has children: false
}

// Check compares every product's totals with its reviews; with repair it
// recomputes the ones that drifted (here, after a review was written
// without the pattern).
func ExampleRollup_Check() {
	ctx := context.Background()
	db, done := connect(ctx)
	defer done()
	ratings := rating(ctx, db, computed.Refuse)
	db.Collection("products").InsertOne(ctx, Product{ID: "widget"})
	ratings.Insert(ctx, Review{ProductID: "widget", Stars: 4})
	db.Collection("reviews").InsertOne(ctx, Review{ProductID: "widget", Stars: 1}) // bypasses the pattern

	res, _ := ratings.Check(ctx, false)
	fmt.Println(res.Problems, res.Details)
	res, _ = ratings.Check(ctx, true)
	fmt.Println("repaired", res.Repaired)
	t, _ := ratings.Get(ctx, "widget")
	fmt.Printf("sum %v of %d, min %v\n", t.Sum, t.Count, t.Min)
	// Output:
	// 1 [parent "widget": sum 4 want 5; count 1 want 2; min 4 want 1]
	// repaired 1
	// sum 5 of 2, min 1
}

// A Rollup is a pattern.Dependent: declared on one Source with other
// copies of the reviews, each write is one call that maintains them all.
// InsertMany (the bulk load) writes one update per product.
func ExampleRollup_Apply() {
	ctx := context.Background()
	db, done := connect(ctx)
	defer done()
	ratings := rating(ctx, db, computed.Refuse)
	db.Collection("products").InsertMany(ctx, []any{Product{ID: "widget"}, Product{ID: "gadget"}})

	reviews := pattern.NewSource[Review](db.Collection("reviews"), ratings /*, window, … */)
	ids, err := reviews.InsertMany(ctx, []Review{
		{ProductID: "widget", Stars: 5}, {ProductID: "widget", Stars: 3}, {ProductID: "gadget", Stars: 4},
	})
	if err != nil {
		log.Fatal(err)
	}
	reviews.Update(ctx, ids[1], bson.D{{Key: "$set", Value: bson.D{{Key: "productId", Value: "gadget"}}}})
	reviews.Delete(ctx, ids[0])
	for _, p := range []string{"widget", "gadget"} {
		t, _ := ratings.Get(ctx, p)
		fmt.Printf("%s: sum %v of %d\n", p, t.Sum, t.Count)
	}
	// Output:
	// widget: sum 0 of 0
	// gadget: sum 7 of 2
}

// ExampleRollup_RecomputeAll recomputes every product's rating on the
// server: $group of the reviews $merge'd into the products, a product
// whose reviews all disappeared reset to the empty rollup.
func ExampleRollup_RecomputeAll() {
	ctx := context.Background()
	db, done := connect(ctx)
	defer done()
	products, reviews := db.Collection("products"), db.Collection("reviews")
	r, _ := computed.New[Product, Review](products, reviews, computed.Config{Parent: "productId", Value: "stars", Target: "rating"})
	products.InsertMany(ctx, []any{
		Product{ID: "p1", Name: "Widget"},
		Product{ID: "p2", Name: "Gadget", Rating: computed.Totals{Sum: 9, Count: 2}}, // stale: no reviews left
	})
	reviews.InsertMany(ctx, []any{Review{ProductID: "p1", Stars: 4}, Review{ProductID: "p1", Stars: 5}})
	rep, err := r.RecomputeAll(ctx, computed.RecomputeOptions{})
	if err != nil {
		panic(err)
	}
	fmt.Println("parents:", rep.Parents)
	for _, id := range []string{"p1", "p2"} {
		t, _ := r.Get(ctx, id)
		fmt.Println(id, t.Sum, t.Count)
	}
	// Output:
	// parents: 2
	// p1 9 2
	// p2 0 0
}
