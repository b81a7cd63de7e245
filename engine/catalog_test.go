package engine_test

import (
	"slices"
	"testing"
	"time"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo/options"
)

func sleepMS(n int) { time.Sleep(time.Duration(n) * time.Millisecond) }

func TestCreateListDropRename(t *testing.T) {
	_, db := newDB(t)
	ctx := ctxT(t)
	if err := db.CreateCollection(ctx, "a", options.CreateCollection().SetStorageEngine(bson.D{{Key: "wiredTiger", Value: bson.D{}}})); err != nil {
		t.Fatal(err)
	}
	err := db.CreateCollection(ctx, "a")
	wantCode(t, err, 48, "NamespaceExists")
	if _, err := db.Collection("b").InsertOne(ctx, bson.D{{Key: "x", Value: 1}}); err != nil {
		t.Fatal(err)
	}
	names, err := db.ListCollectionNames(ctx, bson.D{})
	if err != nil {
		t.Fatal(err)
	}
	slices.Sort(names)
	if !slices.Equal(names, []string{"a", "b"}) {
		t.Fatalf("names = %v", names)
	}
	specs, err := db.ListCollectionSpecifications(ctx, bson.D{{Key: "name", Value: "a"}})
	if err != nil {
		t.Fatal(err)
	}
	if len(specs) != 1 || specs[0].Type != "collection" || specs[0].Options.Lookup("storageEngine").Type != bson.TypeEmbeddedDocument || specs[0].UUID == nil {
		t.Fatalf("specs = %+v", specs)
	}
	err = db.Client().Database("admin").RunCommand(ctx, bson.D{{Key: "renameCollection", Value: "test.b"}, {Key: "to", Value: "test.c"}}).Err()
	if err != nil {
		t.Fatal(err)
	}
	if n, _ := db.Collection("c").CountDocuments(ctx, bson.D{}); n != 1 {
		t.Fatalf("renamed collection has %d docs", n)
	}
	err = db.Client().Database("admin").RunCommand(ctx, bson.D{{Key: "renameCollection", Value: "test.c"}, {Key: "to", Value: "test.a"}}).Err()
	wantCode(t, err, 48, "NamespaceExists")
	err = db.Client().Database("admin").RunCommand(ctx, bson.D{{Key: "renameCollection", Value: "test.c"}, {Key: "to", Value: "test.a"}, {Key: "dropTarget", Value: true}}).Err()
	if err != nil {
		t.Fatal(err)
	}
	err = db.Client().Database("admin").RunCommand(ctx, bson.D{{Key: "renameCollection", Value: "test.nope"}, {Key: "to", Value: "test.z"}}).Err()
	wantCode(t, err, 26, "NamespaceNotFound")
	if err := db.Collection("a").Drop(ctx); err != nil {
		t.Fatal(err)
	}
	if err := db.Collection("never").Drop(ctx); err != nil {
		t.Fatalf("drop of missing collection: %v", err)
	}
	names, _ = db.ListCollectionNames(ctx, bson.D{})
	if len(names) != 0 {
		t.Fatalf("after drop: %v", names)
	}
	err = db.CreateCollection(ctx, "x", options.CreateCollection().SetValidator(bson.D{{Key: "a", Value: bson.D{{Key: "$bogus", Value: 1}}}}))
	wantCode(t, err, 2, "BadValue")
	err = db.RunCommand(ctx, bson.D{{Key: "create", Value: "y"}, {Key: "bogusOption", Value: 1}}).Err()
	wantCode(t, err, 40415, "")
}

func TestDatabasesListAndDrop(t *testing.T) {
	_, db := newDB(t)
	ctx := ctxT(t)
	client := db.Client()
	for _, name := range []string{"one", "two"} {
		if _, err := client.Database(name).Collection("c").InsertOne(ctx, bson.D{{Key: "x", Value: 1}}); err != nil {
			t.Fatal(err)
		}
	}
	names, err := client.ListDatabaseNames(ctx, bson.D{})
	if err != nil {
		t.Fatal(err)
	}
	// local holds the oplog, as on a replica set member.
	if !slices.Equal(names, []string{"local", "one", "two"}) {
		t.Fatalf("databases = %v", names)
	}
	var stats struct {
		Collections int64 `bson:"collections"`
		Objects     int64 `bson:"objects"`
	}
	if err := client.Database("one").RunCommand(ctx, bson.D{{Key: "dbStats", Value: 1}}).Decode(&stats); err != nil {
		t.Fatal(err)
	}
	if stats.Collections != 1 || stats.Objects != 1 {
		t.Fatalf("dbStats = %+v", stats)
	}
	if err := client.Database("one").Drop(ctx); err != nil {
		t.Fatal(err)
	}
	names, _ = client.ListDatabaseNames(ctx, bson.D{})
	if !slices.Equal(names, []string{"local", "two"}) {
		t.Fatalf("after dropDatabase = %v", names)
	}
}

func TestNamespaceValidation(t *testing.T) {
	_, db := newDB(t)
	ctx := ctxT(t)
	for _, name := range []string{"", "a$b", ".a", "a."} {
		_, err := db.Collection(name).InsertOne(ctx, bson.D{{Key: "x", Value: 1}})
		wantCode(t, err, 73, "InvalidNamespace")
	}
	_, err := db.Client().Database("bad.db").Collection("c").InsertOne(ctx, bson.D{})
	wantCode(t, err, 73, "InvalidNamespace")
	_, err = db.Collection("system.foo").InsertOne(ctx, bson.D{})
	wantCode(t, err, 73, "InvalidNamespace")
}
