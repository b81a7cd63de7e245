package attribute_test

import (
	"context"
	"errors"
	"fmt"
	"log"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo"
	"go.mongodb.org/mongo-driver/v2/mongo/options"

	"github.com/formworkdb/formwork/engine"
	"github.com/formworkdb/formwork/pattern/attribute"
)

// Book is a bookshop's product with its specs as attributes.
type Book struct {
	ID    int              `bson:"_id"`
	Title string           `bson:"title"`
	Specs []attribute.Attr `bson:"specs"`
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

// books declares the specs of the books collection, with its index.
func books(ctx context.Context, db *mongo.Database) *attribute.Store[Book] {
	specs, err := attribute.New[Book](db.Collection("books"), attribute.Config{
		Field: "specs",
		Kinds: map[string]attribute.Kind{"pages": attribute.Number, "format": attribute.String, "isbn": attribute.String},
	})
	if err != nil {
		log.Fatal(err)
	}
	if err := specs.EnsureIndexes(ctx); err != nil {
		log.Fatal(err)
	}
	return specs
}

// New declares a book's specs as attributes behind one index: every
// query is an $elemMatch, and a number given as a string is refused.
func ExampleNew() {
	ctx := context.Background()
	db, done := shop(ctx)
	defer done()
	specs := books(ctx, db)

	b, err := specs.Insert(ctx, Book{ID: 1, Title: "Dune", Specs: []attribute.Attr{
		{Name: "format", Value: "paperback"}, {Name: "pages", Value: 896}, {Name: "isbn", Value: "0441013597"}}})
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(b.Title, b.Specs)
	_, err = specs.Insert(ctx, Book{ID: 2, Title: "Emma", Specs: []attribute.Attr{{Name: "pages", Value: "474"}}})
	fmt.Println(err)
	fmt.Println(specs.Index())
	// Output:
	// Dune [{format paperback} {pages 896} {isbn 0441013597}]
	// attribute: insert: invalid attribute value: attribute "pages": "474" is a number stored as a string (declare the attribute a String, or pass a number)
	// {"specs.k":{"$numberInt":"1"},"specs.v":{"$numberInt":"1"}}
}

// Set gives a book a spec or changes it, Remove removes one, Value and
// Attrs read them; each write is one atomic update of the book.
func ExampleStore_Set() {
	ctx := context.Background()
	db, done := shop(ctx)
	defer done()
	specs := books(ctx, db)
	specs.Insert(ctx, Book{ID: 1, Title: "Dune", Specs: []attribute.Attr{{Name: "format", Value: "paperback"}}})

	if err := specs.Set(ctx, 1, "format", "hardcover"); err != nil {
		log.Fatal(err)
	}
	if err := specs.Set(ctx, 1, "pages", 896); err != nil {
		log.Fatal(err)
	}
	if err := specs.Add(ctx, 1, "pages", 900); errors.Is(err, attribute.ErrExists) {
		fmt.Println("pages already set")
	}
	pages, _ := specs.Value(ctx, 1, "pages")
	fmt.Println("pages:", pages)
	if err := specs.Remove(ctx, 1, "format"); err != nil {
		log.Fatal(err)
	}
	_, err := specs.Value(ctx, 1, "format")
	fmt.Println(errors.Is(err, attribute.ErrMissing), err)
	attrs, _ := specs.Attrs(ctx, 1)
	fmt.Println(attrs)
	// Output:
	// pages already set
	// pages: 896
	// true attribute: value: "format" of 1: attribute missing: not found
	// [{pages 896}]
}

// Find queries by attribute through the {k, v} index; All and Any combine
// conditions, one $elemMatch each.
func ExampleStore_Find() {
	ctx := context.Background()
	db, done := shop(ctx)
	defer done()
	specs := books(ctx, db)
	specs.InsertMany(ctx, []Book{
		{ID: 1, Title: "Dune", Specs: []attribute.Attr{{Name: "format", Value: "paperback"}, {Name: "pages", Value: 896}}},
		{ID: 2, Title: "Emma", Specs: []attribute.Attr{{Name: "format", Value: "hardcover"}, {Name: "pages", Value: 474}}},
		{ID: 3, Title: "Ulysses", Specs: []attribute.Attr{{Name: "format", Value: "ebook"}}},
	})

	f := attribute.All(attribute.Where("format").In("paperback", "hardcover"), attribute.Where("pages").Lt(500))
	q, _ := specs.Filter(f)
	fmt.Println("filter:", q)
	found, err := specs.Find(ctx, f)
	if err != nil {
		log.Fatal(err)
	}
	for _, b := range found {
		fmt.Println("found:", b.Title)
	}
	found, _ = specs.Find(ctx, attribute.Any(attribute.Where("format").Eq("ebook"), attribute.Where("pages").Gt(800)),
		options.Find().SetSort(bson.D{{Key: "_id", Value: 1}}))
	for _, b := range found {
		fmt.Println("found:", b.Title)
	}
	// Output:
	// filter: {"$and":[{"specs":{"$elemMatch":{"k":"format","v":{"$in":["paperback","hardcover"]}}}},{"specs":{"$elemMatch":{"k":"pages","v":{"$lt":{"$numberInt":"500"}}}}}]}
	// found: Emma
	// found: Dune
	// found: Ulysses
}

// InsertMany loads books in bulk: every spec is checked first, then one
// insertMany writes them all; a refused spec writes nothing.
func ExampleStore_InsertMany() {
	ctx := context.Background()
	db, done := shop(ctx)
	defer done()
	specs := books(ctx, db)

	loaded, err := specs.InsertMany(ctx, []Book{
		{ID: 1, Title: "Dune", Specs: []attribute.Attr{{Name: "pages", Value: 896}}},
		{ID: 2, Title: "Emma", Specs: []attribute.Attr{{Name: "pages", Value: 474}}},
	})
	fmt.Println(len(loaded), err)
	_, err = specs.InsertMany(ctx, []Book{
		{ID: 3, Title: "Ulysses"},
		{ID: 4, Title: "Bad", Specs: []attribute.Attr{{Name: "pages", Value: 1}, {Name: "pages", Value: 2}}},
	})
	fmt.Println(err)
	n, _ := db.Collection("books").CountDocuments(ctx, bson.D{})
	fmt.Println("books:", n)
	// Output:
	// 2 <nil>
	// attribute: insert many: document 1: attribute exists: "pages" given twice
	// books: 2
}

// The wildcard form keeps attributes in a sub-document under
// {"props.$**": 1}; the same builder compiles to dotted paths.
func ExampleNewWildcard() {
	ctx := context.Background()
	db, done := shop(ctx)
	defer done()
	products := db.Collection("products")

	props, err := attribute.NewWildcard[bson.D](products, attribute.Config{NumericStrings: attribute.Normalize})
	if err != nil {
		log.Fatal(err)
	}
	if err := props.EnsureIndexes(ctx); err != nil {
		log.Fatal(err)
	}
	if _, err := props.Insert(ctx, bson.D{{Key: "_id", Value: 1}}, attribute.Attr{Name: "color", Value: "blue"}, attribute.Attr{Name: "volumeMl", Value: "500"}); err != nil {
		log.Fatal(err)
	}
	if err := props.Set(ctx, 1, "weightKg", 0.2); err != nil {
		log.Fatal(err)
	}
	f, err := props.Filter(attribute.All(attribute.Where("volumeMl").Gte(400), attribute.Where("color").Ne("red")))
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println("filter:", f)
	n, err := props.Count(ctx, attribute.All(attribute.Where("volumeMl").Gte(400), attribute.Where("color").Ne("red")))
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println("matches:", n)
	stored, err := props.Get(ctx, 1)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println("stored:", stored)
	// Output:
	// filter: {"$and":[{"props.volumeMl":{"$gte":{"$numberInt":"400"}}},{"props.color":{"$exists":true,"$ne":"red"}}]}
	// matches: 1
	// stored: {"_id":{"$numberInt":"1"},"props":{"color":"blue","volumeMl":{"$numberLong":"500"},"weightKg":{"$numberDouble":"0.2"}}}
}
