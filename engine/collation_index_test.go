package engine_test

import (
	"context"
	"errors"
	"testing"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo"
	"go.mongodb.org/mongo-driver/v2/mongo/options"

	"github.com/formworkdb/formwork/internal/explaintest"
	"github.com/formworkdb/formwork/internal/testenv"
)

var caseInsensitive = bson.D{{Key: "locale", Value: "en"}, {Key: "strength", Value: int32(2)}}

// TestCollationUniqueIndex checks case-insensitive uniqueness: a unique
// index with a strength 2 collation rejects "a@x.com" after "A@x.com".
func TestCollationUniqueIndex(t *testing.T) {
	ctx := context.Background()
	c := testenv.Database(t).Collection("users")
	_, err := c.Indexes().CreateOne(ctx, mongo.IndexModel{
		Keys:    bson.D{{Key: "email", Value: 1}},
		Options: options.Index().SetUnique(true).SetCollation(&options.Collation{Locale: "en", Strength: 2}),
	})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.InsertOne(ctx, bson.D{{Key: "email", Value: "A@x.com"}}); err != nil {
		t.Fatal(err)
	}
	_, err = c.InsertOne(ctx, bson.D{{Key: "email", Value: "a@x.com"}})
	var we mongo.WriteException
	if !errors.As(err, &we) || len(we.WriteErrors) != 1 || we.WriteErrors[0].Code != 11000 {
		t.Fatalf("insert a@x.com: got %v, want E11000", err)
	}
	if _, err := c.InsertOne(ctx, bson.D{{Key: "email", Value: "á@x.com"}}); err != nil {
		t.Fatalf("an accented address is distinct at strength 2: %v", err)
	}
}

// TestCollationIndexEligibility checks the planner's rule: an index
// serves string predicates only under its own collation, while predicates
// on numbers may use it under any collation; explain shows the query's
// collation and the index's.
func TestCollationIndexEligibility(t *testing.T) {
	ctx := context.Background()
	db := testenv.Database(t)
	c := db.Collection("people")
	for i := range 50 {
		name := []string{"alice", "ALICE", "Bob", "bob", "carol"}[i%5]
		if _, err := c.InsertOne(ctx, bson.D{{Key: "_id", Value: int32(i)}, {Key: "name", Value: name}, {Key: "n", Value: int32(i)}}); err != nil {
			t.Fatal(err)
		}
	}
	_, err := c.Indexes().CreateMany(ctx, []mongo.IndexModel{
		{Keys: bson.D{{Key: "name", Value: 1}}, Options: options.Index().SetName("name_ci").SetCollation(&options.Collation{Locale: "en", Strength: 2})},
		{Keys: bson.D{{Key: "n", Value: 1}}, Options: options.Index().SetName("n_ci").SetCollation(&options.Collation{Locale: "en", Strength: 2})},
	})
	if err != nil {
		t.Fatal(err)
	}
	find := func(filter bson.D, coll bson.D) explaintest.Result {
		cmd := bson.D{{Key: "find", Value: "people"}, {Key: "filter", Value: filter}}
		if coll != nil {
			cmd = append(cmd, bson.E{Key: "collation", Value: coll})
		}
		return explaintest.Run(t, db, cmd)
	}

	r := find(bson.D{{Key: "name", Value: "ALICE"}}, caseInsensitive)
	if !r.Uses("name_ci") || r.NReturned() != 20 || r.KeysExamined() != 20 {
		t.Fatalf("case-insensitive equality: %s, nReturned %d, keys %d", r, r.NReturned(), r.KeysExamined())
	}
	qp := r.Reply().Lookup("queryPlanner")
	if s, _ := qp.Document().Lookup("collation", "strength").Int32OK(); s != 2 {
		t.Fatalf("queryPlanner.collation: %v", qp)
	}
	ix, _ := r.Scan("name_ci")
	if loc, _ := ix.Doc.Lookup("collation", "locale").StringValueOK(); loc != "en" {
		t.Fatalf("IXSCAN collation: %v", ix.Doc)
	}

	r = find(bson.D{{Key: "name", Value: "ALICE"}}, nil)
	if r.Uses("name_ci") || r.NReturned() != 10 {
		t.Fatalf("simple-collation string equality must not use the collated index: %s, nReturned %d", r, r.NReturned())
	}
	if _, err := r.Reply().LookupErr("queryPlanner", "collation"); err == nil {
		t.Fatalf("queryPlanner.collation under the simple collation")
	}

	r = find(bson.D{{Key: "n", Value: bson.D{{Key: "$lt", Value: int32(5)}}}}, nil)
	if !r.Uses("n_ci") || r.NReturned() != 5 {
		t.Fatalf("a numeric predicate may use a collated index: %s", r)
	}

	r = find(bson.D{{Key: "name", Value: bson.D{{Key: "$gte", Value: "B"}, {Key: "$lt", Value: "C"}}}}, caseInsensitive)
	if !r.Uses("name_ci") || r.NReturned() != 20 {
		t.Fatalf("collated range: %s, nReturned %d", r, r.NReturned())
	}

	r = find(bson.D{{Key: "name", Value: bson.D{{Key: "$regex", Value: "^b"}}}}, caseInsensitive)
	if r.NReturned() != 10 {
		t.Fatalf("a regex is not collation-aware: %s, nReturned %d", r, r.NReturned())
	}
}

// TestCollationCollectionDefault checks a collection's default
// collation: listCollections shows it in full, new indexes and the _id
// index inherit it, and operations without a collation run under it.
func TestCollationCollectionDefault(t *testing.T) {
	ctx := context.Background()
	db := testenv.Database(t)
	if err := db.CreateCollection(ctx, "ci", options.CreateCollection().SetCollation(&options.Collation{Locale: "fr", Strength: 1})); err != nil {
		t.Fatal(err)
	}
	c := db.Collection("ci")
	specs, err := db.ListCollectionSpecifications(ctx, bson.D{{Key: "name", Value: "ci"}})
	if err != nil || len(specs) != 1 {
		t.Fatalf("listCollections: %v %v", specs, err)
	}
	want := `{"locale": "fr","caseLevel": false,"caseFirst": "off","strength": {"$numberInt":"1"},"numericOrdering": false,"alternate": "non-ignorable","maxVariable": "punct","normalization": false,"backwards": false,"version": "57.1"}`
	if got := specs[0].Options.Lookup("collation").Document().String(); got != want {
		t.Fatalf("options.collation = %s\nwant %s", got, want)
	}
	if _, err := c.Indexes().CreateOne(ctx, mongo.IndexModel{Keys: bson.D{{Key: "s", Value: 1}}}); err != nil {
		t.Fatal(err)
	}
	cur, err := c.Indexes().List(ctx)
	if err != nil {
		t.Fatal(err)
	}
	var idx []bson.Raw
	if err := cur.All(ctx, &idx); err != nil {
		t.Fatal(err)
	}
	for _, ix := range idx {
		if loc, _ := ix.Lookup("collation", "locale").StringValueOK(); loc != "fr" {
			t.Fatalf("index %v does not inherit the collection's collation", ix)
		}
	}
	for _, s := range []string{"côte", "Cote", "coté"} {
		if _, err := c.InsertOne(ctx, bson.D{{Key: "s", Value: s}}); err != nil {
			t.Fatal(err)
		}
	}
	n, err := c.CountDocuments(ctx, bson.D{{Key: "s", Value: "COTE"}})
	if err != nil || n != 3 {
		t.Fatalf("count under the default collation = %d, %v; want 3", n, err)
	}
	n, err = c.CountDocuments(ctx, bson.D{{Key: "s", Value: "COTE"}}, options.Count().SetCollation(&options.Collation{Locale: "simple"}))
	if err != nil || n != 0 {
		t.Fatalf("count under the simple collation = %d, %v; want 0", n, err)
	}
	r := explaintest.Run(t, db, bson.D{{Key: "find", Value: "ci"}, {Key: "filter", Value: bson.D{{Key: "s", Value: "cote"}}}})
	if !r.Uses("s_1") || r.NReturned() != 3 {
		t.Fatalf("default collation query: %s, nReturned %d", r, r.NReturned())
	}
	// The _id index inherits the collation too.
	if _, err := c.InsertOne(ctx, bson.D{{Key: "_id", Value: "K"}}); err != nil {
		t.Fatal(err)
	}
	if _, err := c.InsertOne(ctx, bson.D{{Key: "_id", Value: "k"}}); err == nil {
		t.Fatalf("_id \"k\" after \"K\" under a strength 1 default collation: want E11000")
	}
}

// TestCollationDivergences pins the collation divergence Formwork chose
// (see collation.New); it does not run against MongoDB.
func TestCollationDivergences(t *testing.T) {
	if testenv.Real() {
		t.Skip("documents Formwork's divergences from MongoDB")
	}
	ctx := context.Background()
	db := testenv.Database(t)
	c := db.Collection("div")
	// normalization: false is echoed but text is normalised anyway.
	if _, err := c.InsertOne(ctx, bson.D{{Key: "_id", Value: 1}}); err != nil {
		t.Fatal(err)
	}
	n, err := c.CountDocuments(ctx, bson.D{{Key: "$expr", Value: bson.D{{Key: "$eq", Value: bson.A{"\u00e9", "e\u0301"}}}}},
		options.Count().SetCollation(&options.Collation{Locale: "en", Normalization: false}))
	if err != nil || n != 1 {
		t.Fatalf("precomposed and decomposed é under normalization false: n = %d, %v", n, err)
	}
}

// TestCollationWildcardIndex checks a wildcard index with a collation:
// a query under the same collation uses it for a string equality (and
// counts case-insensitively); a query under the simple collation does
// not use it for strings, but may for numbers.
func TestCollationWildcardIndex(t *testing.T) {
	ctx := context.Background()
	db := testenv.Database(t)
	c := db.Collection("wild")
	for i := range 20 {
		name := []string{"ann", "ANN", "bo", "Cy"}[i%4]
		if _, err := c.InsertOne(ctx, bson.D{{Key: "_id", Value: int32(i)}, {Key: "name", Value: name}, {Key: "n", Value: int32(i)}}); err != nil {
			t.Fatal(err)
		}
	}
	_, err := c.Indexes().CreateOne(ctx, mongo.IndexModel{Keys: bson.D{{Key: "$**", Value: 1}}, Options: options.Index().SetName("all_ci").SetCollation(&options.Collation{Locale: "en", Strength: 2})})
	if err != nil {
		t.Fatal(err)
	}
	find := func(filter bson.D, coll bson.D) explaintest.Result {
		cmd := bson.D{{Key: "find", Value: "wild"}, {Key: "filter", Value: filter}}
		if coll != nil {
			cmd = append(cmd, bson.E{Key: "collation", Value: coll})
		}
		return explaintest.Run(t, db, cmd)
	}
	r := find(bson.D{{Key: "name", Value: "ann"}}, caseInsensitive)
	if !r.Uses("all_ci") || r.NReturned() != 10 {
		t.Fatalf("collated query on a collated wildcard index: %s, nReturned %d", r, r.NReturned())
	}
	r = find(bson.D{{Key: "name", Value: "ann"}}, nil)
	if r.Uses("all_ci") || r.NReturned() != 5 {
		t.Fatalf("simple-collation string equality must not use the collated wildcard index: %s, nReturned %d", r, r.NReturned())
	}
	r = find(bson.D{{Key: "n", Value: bson.D{{Key: "$lt", Value: int32(3)}}}}, nil)
	if !r.Uses("all_ci") || r.NReturned() != 3 {
		t.Fatalf("a numeric predicate may use the collated wildcard index: %s, nReturned %d", r, r.NReturned())
	}
}
