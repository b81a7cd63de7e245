package versioning_test

import (
	"context"
	"fmt"
	"log"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo"
	"go.mongodb.org/mongo-driver/v2/mongo/options"

	"github.com/formworkdb/formwork/engine"
	"github.com/formworkdb/formwork/pattern/versioning"
)

// Contact is the newest contact shape (version 2): phone numbers under
// contactInfo. Version 1 had them at the top level.
type Contact struct {
	ID          int               `bson:"_id"`
	Name        string            `bson:"name"`
	ContactInfo map[string]string `bson:"contactInfo"`
}

// crm opens an in-memory engine holding the manual's two contacts, one
// per version, and returns its database and a function that closes both.
func crm(ctx context.Context) (*mongo.Database, func()) {
	eng, err := engine.Open(ctx, engine.Options{})
	if err != nil {
		log.Fatal(err)
	}
	client, err := mongo.Connect(options.Client().ApplyURI("mongodb://localhost").SetDialer(eng.Dialer()))
	if err != nil {
		log.Fatal(err)
	}
	db := client.Database("crm")
	db.Collection("contacts").InsertMany(ctx, []any{
		bson.D{{Key: "_id", Value: 1}, {Key: "name", Value: "Taylor"}, {Key: "home", Value: "209-555-7788"}, {Key: "work", Value: "503-555-0110"}},
		bson.D{{Key: "_id", Value: 2}, {Key: "schemaVersion", Value: 2}, {Key: "name", Value: "Cameron"},
			{Key: "contactInfo", Value: bson.D{{Key: "cell", Value: "903-555-1122"}, {Key: "work", Value: "670-555-7878"}}}},
	})
	return db, func() { client.Disconnect(ctx); eng.Close() }
}

// contacts declares the two versions: version 2's upgrade moves home and
// work under contactInfo, in memory (Up) and on the server (Pipeline).
func contacts(db *mongo.Database) *versioning.Store[Contact] {
	step, err := versioning.Step{Rename: map[string]string{"home": "contactInfo.home", "work": "contactInfo.work"}}.Version(2)
	if err != nil {
		log.Fatal(err)
	}
	s, err := versioning.New[Contact](db.Collection("contacts"), versioning.Config{
		Field:    "schemaVersion",
		Versions: []versioning.Version{{Number: 1}, step},
	})
	if err != nil {
		log.Fatal(err)
	}
	return s
}

// New declares the versions; every read decodes any live version into
// the newest struct, and a document without the field is version 1.
func ExampleNew() {
	ctx := context.Background()
	db, done := crm(ctx)
	defer done()
	s := contacts(db)

	all, err := s.Find(ctx, nil, options.Find().SetSort(bson.D{{Key: "_id", Value: 1}}))
	if err != nil {
		log.Fatal(err)
	}
	for _, c := range all {
		fmt.Println(c.Name, c.ContactInfo["work"])
	}
	// Output:
	// Taylor 503-555-0110
	// Cameron 670-555-7878
}

// Update upgrades the document on the server first (a pipeline update
// guarded by {_id, schemaVersion: <old>}), then applies an update written
// for the newest shape.
func ExampleStore_Update() {
	ctx := context.Background()
	db, done := crm(ctx)
	defer done()
	s := contacts(db)

	c, err := s.Update(ctx, 1, bson.D{{Key: "$set", Value: bson.D{{Key: "contactInfo.cell", Value: "209-555-0000"}}}})
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(c.ContactInfo["cell"], c.ContactInfo["home"])
	raw, _ := db.Collection("contacts").FindOne(ctx, bson.D{{Key: "_id", Value: 1}}).Raw()
	fmt.Println(raw)
	// Output:
	// 209-555-0000 209-555-7788
	// {"_id": {"$numberInt":"1"},"name": "Taylor","contactInfo": {"home": "209-555-7788","work": "503-555-0110","cell": "209-555-0000"},"schemaVersion": {"$numberInt":"2"}}
}

// Migrate upgrades every outdated document in batches, recording its
// progress in formwork_jobs; Report lists the versions still live.
func ExampleStore_Migrate() {
	ctx := context.Background()
	db, done := crm(ctx)
	defer done()
	s := contacts(db)

	before, _ := s.Report(ctx)
	fmt.Println(before.Finished(), before.Versions())
	p, err := s.Migrate(ctx, versioning.MigrateOptions{OnBatch: func(p versioning.Progress) { fmt.Println(p) }})
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(p)
	after, _ := s.Report(ctx)
	fmt.Println(after)
	// Output:
	// false [1 2]
	// 1 of 1 at version 2
	// 1 of 1 at version 2, finished
	// version 2: 2 documents (newest)
}

// EnsureValidator accepts every live version at level moderate during
// the migration, and the newest alone, strictly, after it.
func ExampleStore_EnsureValidator() {
	ctx := context.Background()
	db, done := crm(ctx)
	defer done()
	s := contacts(db)

	level, _ := s.EnsureValidator(ctx, "error")
	fmt.Println(level)
	s.Migrate(ctx, versioning.MigrateOptions{})
	level, _ = s.EnsureValidator(ctx, "error")
	fmt.Println(level)
	_, err := db.Collection("contacts").InsertOne(ctx, bson.D{{Key: "_id", Value: 3}, {Key: "name", Value: "Old code"}})
	fmt.Println(err != nil)
	// Output:
	// moderate
	// strict
	// true
}

// AnyOf queries a field at every path it has in a live version.
func ExampleAnyOf() {
	fmt.Println(versioning.AnyOf("503-555-0110", "work", "contactInfo.work"))
	// Output:
	// {"$or":[{"work":"503-555-0110"},{"contactInfo.work":"503-555-0110"}]}
}
