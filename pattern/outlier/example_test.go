package outlier_test

import (
	"context"
	"fmt"
	"log"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo"
	"go.mongodb.org/mongo-driver/v2/mongo/options"

	"github.com/formworkdb/formwork/engine"
	"github.com/formworkdb/formwork/pattern"
	"github.com/formworkdb/formwork/pattern/bucket"
	"github.com/formworkdb/formwork/pattern/outlier"
)

// connect opens an in-memory engine and returns a database on it.
func connect(ctx context.Context) (*mongo.Database, func()) {
	db, err := engine.Open(ctx, engine.Options{})
	if err != nil {
		log.Fatal(err)
	}
	client, err := mongo.Connect(options.Client().ApplyURI("mongodb://localhost").SetDialer(db.Dialer()))
	if err != nil {
		log.Fatal(err)
	}
	return client.Database("shop"), func() { client.Disconnect(ctx); db.Close() }
}

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

// Book is the user's parent type: the Store reads it back typed, its
// buyer list and count included.
type Book struct {
	ID         int      `bson:"_id"`
	Title      string   `bson:"title"`
	Buyers     []string `bson:"buyers"`
	BuyerCount int      `bson:"buyerCount"`
	Overflow   bool     `bson:"hasOverflow"`
}

// A parent inserted by the application, not by Create, works: the first
// Append gives it its counter. Reads come back as the user's own type.
func ExampleStore_Append() {
	ctx := context.Background()
	shop, done := connect(ctx)
	defer done()

	books, err := outlier.New[Book, string](shop.Collection("books"), shop.Collection("bookBuyersOverflow"), outlier.Config{
		Threshold: 2, List: "buyers", Count: "buyerCount",
		Overflow: bucket.Config{Owner: "bookId"},
	})
	if err != nil {
		log.Fatal(err)
	}
	if _, err := shop.Collection("books").InsertOne(ctx, bson.D{{Key: "_id", Value: 7}, {Key: "title", Value: "Invisible Cities"}}); err != nil {
		log.Fatal(err)
	}
	for _, u := range []string{"ann", "bob", "cy"} {
		where, err := books.Append(ctx, 7, u)
		if err != nil {
			log.Fatal(err)
		}
		fmt.Println(u, where)
	}
	p, err := books.Get(ctx, 7)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Printf("%s: %v of %d, overflow %v\n", p.Doc.Title, p.Doc.Buyers, p.Doc.BuyerCount, p.Doc.Overflow)
	// Output:
	// ann embedded
	// bob embedded
	// cy overflowed
	// Invisible Cities: [ann bob] of 3, overflow true
}

// Buyer is one embedded buyer, identified by its purchase.
type Buyer struct {
	Purchase string `bson:"purchase"`
	User     string `bson:"user"`
}

// An unlike, a refund: Remove takes one element out, from the list or the
// overflow, and keeps the counter right.
func ExampleStore_Remove() {
	ctx := context.Background()
	shop, done := connect(ctx)
	defer done()

	books, err := outlier.New[bson.D, Buyer](shop.Collection("books"), shop.Collection("bookBuyersOverflow"), outlier.Config{
		Threshold: 2, List: "buyers", Count: "buyerCount", ElementID: "purchase",
	})
	if err != nil {
		log.Fatal(err)
	}
	if err := books.EnsureIndexes(ctx); err != nil {
		log.Fatal(err)
	}
	if _, err := books.Create(ctx, bson.D{{Key: "_id", Value: 7}}); err != nil {
		log.Fatal(err)
	}
	for i, u := range []string{"ann", "bob", "cy", "dee"} {
		if _, err := books.Append(ctx, 7, Buyer{Purchase: fmt.Sprintf("o%d", i+1), User: u}); err != nil {
			log.Fatal(err)
		}
	}
	for _, refund := range []string{"o2", "o4"} {
		where, err := books.Remove(ctx, 7, refund)
		if err != nil {
			log.Fatal(err)
		}
		fmt.Println("refunded", refund, "from", where)
	}
	all, err := books.GetAll(ctx, 7)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(all.Elements, "count", all.Count)
	// Output:
	// refunded o2 from embedded
	// refunded o4 from overflowed
	// [{o1 ann} {o3 cy}] count 2
}

// Purchase is a source document: one purchase of a book.
type Purchase struct {
	ID     string `bson:"_id"`
	BookID int    `bson:"bookId"`
	User   string `bson:"user"`
}

// The buyers of each book are derived from the purchases collection: one
// pattern.Source write per purchase keeps them, embedded up to the
// threshold and in overflow beyond; a purchase moved to another book moves
// its buyer. Check compares the copy with the purchases.
func ExampleStore_Feed() {
	ctx := context.Background()
	shop, done := connect(ctx)
	defer done()

	type Title struct {
		ID         int    `bson:"_id"`
		Title      string `bson:"title"`
		BuyerCount int    `bson:"buyerCount"`
	}
	books, err := outlier.New[Title, Buyer](shop.Collection("books"), shop.Collection("bookBuyersOverflow"), outlier.Config{
		Threshold: 2, List: "buyers", Count: "buyerCount", ElementID: "purchase",
	})
	if err != nil {
		log.Fatal(err)
	}
	buyers, err := books.Feed(shop.Collection("purchases"), "bookId", func(src bson.Raw) (Buyer, error) {
		var p Purchase
		err := bson.Unmarshal(src, &p)
		return Buyer{Purchase: p.ID, User: p.User}, err
	})
	if err != nil {
		log.Fatal(err)
	}
	purchases := pattern.NewSource[Purchase](shop.Collection("purchases"), buyers)
	if err := purchases.EnsureIndexes(ctx); err != nil {
		log.Fatal(err)
	}
	for _, id := range []int{1, 2} {
		if _, err := books.Create(ctx, Title{ID: id, Title: fmt.Sprint("book ", id)}); err != nil {
			log.Fatal(err)
		}
	}
	for i, u := range []string{"ann", "bob", "cy"} {
		if _, err := purchases.Insert(ctx, Purchase{ID: fmt.Sprintf("o%d", i+1), BookID: 1, User: u}); err != nil {
			log.Fatal(err)
		}
	}
	if _, err := purchases.Update(ctx, "o1", bson.D{{Key: "$set", Value: bson.D{{Key: "bookId", Value: 2}}}}); err != nil {
		log.Fatal(err)
	}
	if _, err := purchases.Delete(ctx, "o3"); err != nil {
		log.Fatal(err)
	}
	for _, id := range []int{1, 2} {
		p, err := books.GetAll(ctx, id)
		if err != nil {
			log.Fatal(err)
		}
		fmt.Println(p.Doc.Title, p.Elements, p.Doc.BuyerCount)
	}
	r, err := buyers.Check(ctx, false)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println("problems:", r.Problems)
	// Output:
	// book 1 [{o2 bob}] 1
	// book 2 [{o1 ann}] 1
	// problems: 0
}

// A bulk load: AppendMany embeds what fits under Threshold and sends the
// rest to overflow buckets, in a few round trips whatever the batch size.
func ExampleStore_AppendMany() {
	ctx := context.Background()
	shop, done := connect(ctx)
	defer done()

	books, err := outlier.New[Book, string](shop.Collection("books"), shop.Collection("bookBuyersOverflow"), outlier.Config{
		Threshold: 2, List: "buyers", Count: "buyerCount",
		Overflow: bucket.Config{Owner: "bookId", Size: 2},
	})
	if err != nil {
		log.Fatal(err)
	}
	if _, err := books.Create(ctx, Book{ID: 7, Title: "Invisible Cities"}); err != nil {
		log.Fatal(err)
	}
	embedded, overflowed, err := books.AppendMany(ctx, 7, []string{"ann", "bob", "cy", "dee", "eve"})
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(embedded, "embedded,", overflowed, "overflowed")
	p, err := books.GetAll(ctx, 7)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Printf("%s: %v of %d\n", p.Doc.Title, p.Elements, p.Count)
	// Output:
	// 2 embedded, 3 overflowed
	// Invisible Cities: [ann bob cy dee eve] of 5
}
