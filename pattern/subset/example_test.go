package subset_test

import (
	"context"
	"errors"
	"fmt"
	"log"
	"time"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo"
	"go.mongodb.org/mongo-driver/v2/mongo/options"

	"github.com/formworkdb/formwork/engine"
	"github.com/formworkdb/formwork/pattern"
	"github.com/formworkdb/formwork/pattern/subset"
)

// Review is a child: one review of a product.
type Review struct {
	ID        string    `bson:"_id"`
	ProductID string    `bson:"productId,omitempty"` // the parent link; not copied into the window
	At        time.Time `bson:"at"`
	Stars     int       `bson:"stars"`
	Text      string    `bson:"text"`
}

// Product is a parent, with its newest reviews embedded.
type Product struct {
	ID            string   `bson:"_id"`
	Name          string   `bson:"name"`
	RecentReviews []Review `bson:"recentReviews"`
}

// day is the day of the first review.
var day = time.Date(2025, 3, 1, 0, 0, 0, 0, time.UTC)

// openShop opens an in-memory engine and returns its "shop" database
// and a function that closes both.
func openShop() (*mongo.Database, func()) {
	ctx := context.Background()
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

// newShop returns a window of each product's 3 newest reviews, with one
// product, "widget", and the policy given for deleting products.
func newShop(policy subset.Policy) (*subset.Window[Product, Review], func()) {
	ctx := context.Background()
	db, done := openShop()
	w, err := subset.New[Product, Review](db.Collection("products"), db.Collection("reviews"), subset.Config{
		Parent: "productId", Time: "at", Array: "recentReviews", Size: 3, OnParentDelete: policy,
	})
	if err != nil {
		log.Fatal(err)
	}
	if err := w.EnsureIndexes(ctx); err != nil {
		log.Fatal(err)
	}
	if _, err := w.Parents().InsertOne(ctx, Product{ID: "widget", Name: "Super Widget"}); err != nil {
		log.Fatal(err)
	}
	return w, done
}

// review returns review number i of product p, i days after day.
func review(p string, i int, text string) Review {
	return Review{ID: fmt.Sprint("r", i), ProductID: p, At: day.AddDate(0, 0, i), Stars: i%5 + 1, Text: text}
}

// show prints the product page: the product and its window.
func show(w *subset.Window[Product, Review], label string) {
	p, err := w.Parent(context.Background(), "widget")
	if err != nil {
		log.Fatal(err)
	}
	fmt.Printf("%s: %s", label, p.Name)
	for _, r := range p.RecentReviews {
		fmt.Printf(" %s(%d★ %s)", r.ID, r.Stars, r.Text)
	}
	fmt.Println()
}

// A product embeds its three newest reviews; all reviews stay in the
// reviews collection. The product page is one read.
func ExampleNew() {
	ctx := context.Background()
	db, done := openShop()
	defer done()
	w, err := subset.New[Product, Review](db.Collection("products"), db.Collection("reviews"), subset.Config{
		Parent: "productId", Time: "at", Array: "recentReviews", Size: 3,
	})
	if err != nil {
		log.Fatal(err)
	}
	if err := w.EnsureIndexes(ctx); err != nil {
		log.Fatal(err)
	}
	db.Collection("products").InsertOne(ctx, Product{ID: "widget", Name: "Super Widget"})
	for i, text := range []string{"great", "broke", "fine", "love it", "meh"} {
		if _, err := w.Add(ctx, review("widget", i+1, text)); err != nil {
			log.Fatal(err)
		}
	}
	page, err := w.Parent(ctx, "widget")
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(page.Name)
	for _, r := range page.RecentReviews {
		fmt.Println(r.At.Format("Jan 2"), r.Stars, r.Text)
	}
	// Output:
	// Super Widget
	// Mar 6 1 meh
	// Mar 5 5 love it
	// Mar 4 4 fine
}

// Add inserts the review and pushes its copy into the product's window;
// a review of an unknown product, or whose time is not a date, is
// refused and not stored.
func ExampleWindow_Add() {
	ctx := context.Background()
	w, done := newShop(subset.Refuse)
	defer done()
	for i, text := range []string{"great", "broke", "fine", "love it"} {
		w.Add(ctx, review("widget", i+1, text))
	}
	show(w, "page")

	_, err := w.Add(ctx, review("gadget", 9, "?"))
	fmt.Println(errors.Is(err, subset.ErrParentNotFound))
	// Output:
	// page: Super Widget r4(5★ love it) r3(4★ fine) r2(3★ broke)
	// true
}

// Every child's time has the window's time type (dates unless
// Config.TimeType says otherwise): a string date would sort below every
// date and never show, so it is refused. bson.D works as the type
// arguments.
func Example_timeRule() {
	ctx := context.Background()
	db, done := openShop()
	defer done()
	w, err := subset.New[bson.D, bson.D](db.Collection("products"), db.Collection("reviews"), subset.Config{
		Parent: "productId", Time: "at", Array: "recentReviews", Size: 3,
	})
	if err != nil {
		log.Fatal(err)
	}
	db.Collection("products").InsertOne(ctx, bson.D{{Key: "_id", Value: "widget"}})
	_, err = w.Add(ctx, bson.D{{Key: "productId", Value: "widget"}, {Key: "at", Value: "2025-03-01"}})
	fmt.Println(errors.Is(err, subset.ErrTimeType))
	_, err = w.Add(ctx, bson.D{{Key: "productId", Value: "widget"}, {Key: "at", Value: day}})
	fmt.Println(err)
	n, _ := w.Children().CountDocuments(ctx, bson.D{})
	fmt.Println(n, "review stored")
	// Output:
	// true
	// <nil>
	// 1 review stored
}

// AddMany loads many reviews at once: one insertMany, then one window
// write per product.
func ExampleWindow_AddMany() {
	ctx := context.Background()
	w, done := newShop(subset.Refuse)
	defer done()
	var rs []Review
	for i := range 100 {
		rs = append(rs, review("widget", i, fmt.Sprint("review ", i)))
	}
	ids, err := w.AddMany(ctx, rs)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(len(ids), "reviews")
	show(w, "page")
	// Output:
	// 100 reviews
	// page: Super Widget r99(5★ review 99) r98(4★ review 98) r97(3★ review 97)
}

// Edit changes a review and its copy; a new time refills the window.
func ExampleWindow_Edit() {
	ctx := context.Background()
	w, done := newShop(subset.Refuse)
	defer done()
	for i, text := range []string{"great", "broke", "fine", "love it"} {
		w.Add(ctx, review("widget", i+1, text))
	}
	w.Edit(ctx, "r3", bson.D{{Key: "$set", Value: bson.D{{Key: "text", Value: "fine, after all"}}}})
	show(w, "edited")
	w.Edit(ctx, "r1", bson.D{{Key: "$set", Value: bson.D{{Key: "at", Value: day.AddDate(0, 0, 10)}}}})
	show(w, "retimed")
	// Output:
	// edited: Super Widget r4(5★ love it) r3(4★ fine, after all) r2(3★ broke)
	// retimed: Super Widget r1(2★ great) r4(5★ love it) r3(4★ fine, after all)
}

// Move gives a review another product: it leaves one window and enters
// the other.
func ExampleWindow_Move() {
	ctx := context.Background()
	w, done := newShop(subset.Refuse)
	defer done()
	w.Parents().InsertOne(ctx, Product{ID: "gadget", Name: "Gadget"})
	for i, text := range []string{"great", "broke", "fine", "love it"} {
		w.Add(ctx, review("widget", i+1, text))
	}
	if _, err := w.Move(ctx, "r4", "gadget"); err != nil {
		log.Fatal(err)
	}
	show(w, "widget")
	recent, _ := w.Recent(ctx, "gadget")
	fmt.Println("gadget:", recent[0].ID)
	// Output:
	// widget: Super Widget r3(4★ fine) r2(3★ broke) r1(2★ great)
	// gadget: r4
}

// Delete removes a review and refills the window from the reviews
// collection, so it keeps three copies.
func ExampleWindow_Delete() {
	ctx := context.Background()
	w, done := newShop(subset.Refuse)
	defer done()
	for i, text := range []string{"great", "broke", "fine", "love it"} {
		w.Add(ctx, review("widget", i+1, text))
	}
	gone, err := w.Delete(ctx, "r3")
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println("deleted", gone.ID, gone.Text)
	show(w, "page")
	// Output:
	// deleted r3 fine
	// page: Super Widget r4(5★ love it) r2(3★ broke) r1(2★ great)
}

// DeleteParent deletes a product; under Cascade its reviews go too.
func ExampleWindow_DeleteParent() {
	ctx := context.Background()
	w, done := newShop(subset.Cascade)
	defer done()
	for i, text := range []string{"great", "broke", "fine", "love it"} {
		w.Add(ctx, review("widget", i+1, text))
	}
	n, err := w.DeleteParent(ctx, "widget")
	fmt.Println(n, "reviews deleted", err)
	_, err = w.Parent(ctx, "widget")
	fmt.Println(errors.Is(err, subset.ErrParentNotFound))
	// Output:
	// 4 reviews deleted <nil>
	// true
}

// Page walks all reviews newest first, two at a time, from the reviews
// collection.
func ExampleWindow_Page() {
	ctx := context.Background()
	w, done := newShop(subset.Refuse)
	defer done()
	for i, text := range []string{"great", "broke", "fine", "love it", "meh"} {
		w.Add(ctx, review("widget", i+1, text))
	}
	var after subset.Cursor
	for {
		page, err := w.Page(ctx, "widget", after, 2)
		if err != nil {
			log.Fatal(err)
		}
		fmt.Print("page:")
		for _, r := range page.Children {
			fmt.Print(" ", r.ID)
		}
		fmt.Println()
		if page.Next == nil {
			break
		}
		after = *page.Next
	}
	// Output:
	// page: r5 r4
	// page: r3 r2
	// page: r1
}

// Verify finds what writes made behind the window's back left wrong: here
// a review inserted directly, and reviews of a product deleted directly.
// Repair refills the window; under Refuse the orphans stay reported.
func ExampleWindow_Verify() {
	ctx := context.Background()
	w, done := newShop(subset.Refuse)
	defer done()
	w.Parents().InsertOne(ctx, Product{ID: "gadget", Name: "Gadget"})
	w.Add(ctx, review("widget", 1, "great"))
	w.Add(ctx, review("gadget", 2, "broke"))
	w.Children().InsertOne(ctx, review("widget", 3, "fine"))
	w.Parents().DeleteOne(ctx, bson.D{{Key: "_id", Value: "gadget"}})

	rep, _ := w.Verify(ctx)
	for _, p := range rep.Problems {
		fmt.Println(p)
	}
	rep, _ = w.Repair(ctx)
	fmt.Println("repaired", rep.Repaired, "of", rep.Found)
	// Output:
	// parent "widget": window differs from its newest children
	// parent "gadget" does not exist; 1 children reference it
	// repaired 1 of 2
}

// A window is a pattern.Dependent: a pattern.Source on the reviews
// collection keeps it (and any other copy declared with it, such as a
// rating) with one call per write.
func ExampleWindow_Apply() {
	ctx := context.Background()
	w, done := newShop(subset.Refuse)
	defer done()
	reviews := pattern.NewSource[Review](w.Children(), w)
	for i, text := range []string{"great", "broke", "fine"} {
		reviews.Insert(ctx, review("widget", i+1, text))
	}
	reviews.Update(ctx, "r2", bson.D{{Key: "$set", Value: bson.D{{Key: "stars", Value: 5}}}})
	reviews.Delete(ctx, "r3")
	show(w, "page")
	results, _ := reviews.Check(ctx, false)
	fmt.Println(results[0].Name, results[0].OK())
	// Output:
	// page: Super Widget r2(5★ broke) r1(2★ great)
	// subset products.recentReviews true
}
