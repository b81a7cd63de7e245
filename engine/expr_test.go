package engine_test

import (
	"slices"
	"testing"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo"

	"github.com/formworkdb/formwork/internal/explaintest"
)

// TestExprIndexEquality checks that an $expr $eq of a field path and a
// constant (or a let variable) uses an index on the path, as mongod's
// RewriteExpr makes it ($_internalExprEq), while the $expr still decides
// what matches: the array [2] is not equal to 2.
func TestExprIndexEquality(t *testing.T) {
	t.Parallel()
	_, db := newDB(t)
	ctx := ctxT(t)
	c := db.Collection("c")
	var docs []any
	for i := 0; i < 50; i++ {
		docs = append(docs, bson.D{{Key: "_id", Value: i}, {Key: "a", Value: i % 10}})
	}
	docs = append(docs, bson.D{{Key: "_id", Value: 100}, {Key: "b", Value: 2}})
	if _, err := c.InsertMany(ctx, docs); err != nil {
		t.Fatal(err)
	}
	if _, err := c.Indexes().CreateOne(ctx, mongo.IndexModel{Keys: bson.D{{Key: "a", Value: 1}}}); err != nil {
		t.Fatal(err)
	}
	filters := []bson.D{
		{{Key: "$expr", Value: bson.D{{Key: "$eq", Value: bson.A{"$a", 2}}}}},
		{{Key: "$expr", Value: bson.D{{Key: "$eq", Value: bson.A{2, "$a"}}}}},
		{{Key: "$expr", Value: bson.D{{Key: "$and", Value: bson.A{
			bson.D{{Key: "$eq", Value: bson.A{"$a", 2}}},
			bson.D{{Key: "$lt", Value: bson.A{"$_id", 100}}},
		}}}}},
	}
	for _, f := range filters {
		r := explaintest.Run(t, db, bson.D{{Key: "find", Value: "c"}, {Key: "filter", Value: f}})
		if got := r.Bounds("a_1", "a"); !slices.Equal(got, []string{"[2, 2]"}) {
			t.Errorf("%v: bounds %v, want [2, 2]; plan %v", f, got, r)
		}
		cur, err := c.Find(ctx, f)
		if err != nil {
			t.Fatal(err)
		}
		var got []bson.M
		if err := cur.All(ctx, &got); err != nil {
			t.Fatal(err)
		}
		if len(got) != 5 {
			t.Errorf("%v: %d documents, want 5", f, len(got))
		}
	}
	// With a let variable the rewrite sees a constant too.
	r := explaintest.Run(t, db, bson.D{{Key: "find", Value: "c"},
		{Key: "filter", Value: bson.D{{Key: "$expr", Value: bson.D{{Key: "$eq", Value: bson.A{"$a", "$$v"}}}}}},
		{Key: "let", Value: bson.D{{Key: "v", Value: 3}}}})
	if got := r.Bounds("a_1", "a"); !slices.Equal(got, []string{"[3, 3]"}) {
		t.Errorf("let: bounds %v, want [3, 3]; plan %v", got, r)
	}
	// parsedQuery shows the $expr and the predicate derived from it.
	// Divergence: mongod prints the $expr's constants as {$const: …}; the
	// engine prints the operand as given.
	parsed := r.Reply().Lookup("queryPlanner", "parsedQuery")
	want := `{"$and": [{"$expr": {"$eq": ["$a","$$v"]}},{"a": {"$_internalExprEq": {"$numberInt":"3"}}}]}`
	if got := parsed.String(); got != want {
		t.Errorf("parsedQuery = %s, want %s", got, want)
	}
	// Two field paths cannot use an index.
	r = explaintest.Run(t, db, bson.D{{Key: "find", Value: "c"},
		{Key: "filter", Value: bson.D{{Key: "$expr", Value: bson.D{{Key: "$eq", Value: bson.A{"$a", "$_id"}}}}}}})
	if r.Uses("a_1") {
		t.Errorf("$eq of two paths uses a_1: %v", r)
	}
}
