package engine_test

import (
	"bytes"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo"
)

var updateGolden = flag.Bool("update", false, "rewrite engine/testdata/explain golden files")

// volatile are explain fields that vary between runs or servers.
var volatile = map[string]bool{
	"executionTimeMillis": true, "executionTimeMillisEstimate": true,
	"serverInfo": true, "queryHash": true, "planCacheKey": true,
	"saveState": true, "restoreState": true, "$clusterTime": true,
	"operationTime": true, "since": true,
}

func scrub(v any) any {
	switch t := v.(type) {
	case bson.D:
		var out bson.D
		for _, e := range t {
			if volatile[e.Key] {
				continue
			}
			out = append(out, bson.E{Key: e.Key, Value: scrub(e.Value)})
		}
		return out
	case bson.A:
		out := bson.A{}
		for _, x := range t {
			out = append(out, scrub(x))
		}
		return out
	}
	return v
}

// golden compares the explain of cmd (sections queryPlanner and
// executionStats) with testdata/explain/<name>.json, rewriting it under
// -update.
func golden(t *testing.T, db *mongo.Database, name string, cmd bson.D) bson.D {
	t.Helper()
	var res bson.D
	err := db.RunCommand(ctxT(t), bson.D{{Key: "explain", Value: cmd}, {Key: "verbosity", Value: "executionStats"}}).Decode(&res)
	if err != nil {
		t.Fatalf("%s: explain: %v", name, err)
	}
	var keep bson.D
	for _, e := range res {
		if e.Key == "queryPlanner" || e.Key == "executionStats" {
			keep = append(keep, e)
		}
	}
	keep = scrub(keep).(bson.D)
	ej, err := bson.MarshalExtJSON(keep, true, false)
	if err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	if err := json.Indent(&buf, ej, "", "  "); err != nil {
		t.Fatal(err)
	}
	buf.WriteByte('\n')
	path := filepath.Join("testdata", "explain", name+".json")
	if *updateGolden {
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, buf.Bytes(), 0o644); err != nil {
			t.Fatal(err)
		}
		return keep
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%s: %v (run with -update to record)", name, err)
	}
	if !bytes.Equal(want, buf.Bytes()) {
		t.Errorf("%s: explain differs from %s:\n%s", name, path, buf.String())
	}
	return keep
}

func createIndex(t *testing.T, db *mongo.Database, coll string, key bson.D, opts ...bson.E) {
	t.Helper()
	spec := append(bson.D{{Key: "key", Value: key}, {Key: "name", Value: indexName(key)}}, opts...)
	err := db.RunCommand(ctxT(t), bson.D{{Key: "createIndexes", Value: coll}, {Key: "indexes", Value: bson.A{spec}}}).Err()
	if err != nil {
		t.Fatalf("createIndexes %v: %v", key, err)
	}
}

func indexName(key bson.D) string {
	s := ""
	for i, e := range key {
		if i > 0 {
			s += "_"
		}
		s += fmt.Sprintf("%s_%v", e.Key, e.Value)
	}
	return s
}

func lookup(d bson.D, path ...string) any {
	var cur any = d
	for _, p := range path {
		dd, ok := cur.(bson.D)
		if !ok {
			return nil
		}
		cur = nil
		for _, e := range dd {
			if e.Key == p {
				cur = e.Value
			}
		}
	}
	return cur
}

// TestExplainESR follows catalogue §13.1: with {manufacturer, model, cost}
// the sort comes from the index; with {manufacturer, cost, model} a SORT
// stage appears.
func TestExplainESR(t *testing.T) {
	_, db := newDB(t)
	ctx := ctxT(t)
	var docs []any
	makers := []string{"Ford", "Fiat", "Audi"}
	for i := 0; i < 60; i++ {
		docs = append(docs, bson.D{{Key: "_id", Value: i}, {Key: "manufacturer", Value: makers[i%3]},
			{Key: "model", Value: fmt.Sprintf("m%02d", i%7)}, {Key: "cost", Value: 5000 + i*200}})
	}
	if _, err := db.Collection("cars").InsertMany(ctx, docs); err != nil {
		t.Fatal(err)
	}
	cmd := bson.D{{Key: "find", Value: "cars"}, {Key: "filter", Value: bson.D{{Key: "manufacturer", Value: "Ford"}, {Key: "cost", Value: bson.D{{Key: "$gt", Value: 10000}}}}},
		{Key: "sort", Value: bson.D{{Key: "model", Value: 1}}}}
	createIndex(t, db, "cars", bson.D{{Key: "manufacturer", Value: 1}, {Key: "model", Value: 1}, {Key: "cost", Value: 1}})
	res := golden(t, db, "esr_no_sort", cmd)
	if st := lookup(res, "queryPlanner", "winningPlan", "stage"); st != "FETCH" {
		t.Errorf("ESR winning stage = %v, want FETCH (no SORT)", st)
	}
	if err := db.Collection("cars").Indexes().DropAll(ctx); err != nil {
		t.Fatal(err)
	}
	createIndex(t, db, "cars", bson.D{{Key: "manufacturer", Value: 1}, {Key: "cost", Value: 1}, {Key: "model", Value: 1}})
	res = golden(t, db, "esr_sort", cmd)
	if st := lookup(res, "queryPlanner", "winningPlan", "stage"); st != "SORT" {
		t.Errorf("ER-S winning stage = %v, want SORT", st)
	}
}

// TestExplainMaterializedPath follows catalogue §11.2: an anchored regex
// is a string range plus the regex point.
func TestExplainMaterializedPath(t *testing.T) {
	_, db := newDB(t)
	ctx := ctxT(t)
	docs := []any{
		bson.D{{Key: "_id", Value: "Books"}, {Key: "path", Value: nil}},
		bson.D{{Key: "_id", Value: "Programming"}, {Key: "path", Value: ",Books,"}},
		bson.D{{Key: "_id", Value: "Databases"}, {Key: "path", Value: ",Books,Programming,"}},
		bson.D{{Key: "_id", Value: "Languages"}, {Key: "path", Value: ",Books,Programming,"}},
		bson.D{{Key: "_id", Value: "MongoDB"}, {Key: "path", Value: ",Books,Programming,Databases,"}},
		bson.D{{Key: "_id", Value: "dbm"}, {Key: "path", Value: ",Books,Programming,Databases,"}},
		bson.D{{Key: "_id", Value: "Cooking"}, {Key: "path", Value: ",Books,Z,"}},
	}
	if _, err := db.Collection("categories").InsertMany(ctx, docs); err != nil {
		t.Fatal(err)
	}
	createIndex(t, db, "categories", bson.D{{Key: "path", Value: 1}})
	res := golden(t, db, "materialized_path", bson.D{{Key: "find", Value: "categories"},
		{Key: "filter", Value: bson.D{{Key: "path", Value: bson.Regex{Pattern: "^,Books,Programming,"}}}}})
	b := lookup(res, "queryPlanner", "winningPlan", "inputStage", "indexBounds", "path")
	want := bson.A{`[",Books,Programming,", ",Books,Programming-")`, `[/^,Books,Programming,/, /^,Books,Programming,/]`}
	if fmt.Sprint(b) != fmt.Sprint(want) {
		t.Errorf("bounds = %v, want %v", b, want)
	}
	// Two intervals go through mongod's bounds checker: the four keys of
	// the subtree, then the key after the string range, which sends the
	// scan seeking to the regex interval.
	if n := lookup(res, "executionStats", "totalKeysExamined"); n != int32(5) {
		t.Errorf("totalKeysExamined = %v, want 5", n)
	}
}

// TestExplainPartialIndex follows catalogue §8: the partial index serves
// only queries that repeat its filter; a hint otherwise fails.
func TestExplainPartialIndex(t *testing.T) {
	_, db := newDB(t)
	ctx := ctxT(t)
	var docs []any
	for i := 0; i < 20; i++ {
		typ := "card"
		if i%2 == 1 {
			typ = "bank"
		}
		docs = append(docs, bson.D{{Key: "_id", Value: i}, {Key: "customerId", Value: i % 4}, {Key: "type", Value: typ},
			{Key: "card", Value: bson.D{{Key: "expiresAt", Value: 2020 + i}}}})
	}
	if _, err := db.Collection("pm").InsertMany(ctx, docs); err != nil {
		t.Fatal(err)
	}
	createIndex(t, db, "pm", bson.D{{Key: "card.expiresAt", Value: 1}}, bson.E{Key: "partialFilterExpression", Value: bson.D{{Key: "type", Value: "card"}}})
	res := golden(t, db, "partial_used", bson.D{{Key: "find", Value: "pm"},
		{Key: "filter", Value: bson.D{{Key: "type", Value: "card"}, {Key: "card.expiresAt", Value: bson.D{{Key: "$lt", Value: 2030}}}}}})
	if p := lookup(res, "queryPlanner", "winningPlan", "inputStage", "isPartial"); p != true {
		t.Errorf("partial index not used: %v", lookup(res, "queryPlanner", "winningPlan"))
	}
	res = golden(t, db, "partial_not_used", bson.D{{Key: "find", Value: "pm"},
		{Key: "filter", Value: bson.D{{Key: "card.expiresAt", Value: bson.D{{Key: "$lt", Value: 2030}}}}}})
	if st := lookup(res, "queryPlanner", "winningPlan", "stage"); st != "COLLSCAN" {
		t.Errorf("winning stage = %v, want COLLSCAN", st)
	}
	err := db.RunCommand(ctx, bson.D{{Key: "find", Value: "pm"}, {Key: "filter", Value: bson.D{{Key: "card.expiresAt", Value: bson.D{{Key: "$lt", Value: 2030}}}}},
		{Key: "hint", Value: "card.expiresAt_1"}}).Err()
	wantCode(t, err, 291, "NoQueryExecutionPlans")
}

// TestExplainAttributePattern follows catalogue §7: tight bounds on both
// fields only under $elemMatch.
func TestExplainAttributePattern(t *testing.T) {
	_, db := newDB(t)
	ctx := ctxT(t)
	docs := []any{
		bson.D{{Key: "_id", Value: 1}, {Key: "attrs", Value: bson.A{bson.D{{Key: "k", Value: "color"}, {Key: "v", Value: "blue"}}, bson.D{{Key: "k", Value: "size"}, {Key: "v", Value: 5}}}}},
		bson.D{{Key: "_id", Value: 2}, {Key: "attrs", Value: bson.A{bson.D{{Key: "k", Value: "color"}, {Key: "v", Value: "red"}}, bson.D{{Key: "k", Value: "trim"}, {Key: "v", Value: "blue"}}}}},
		bson.D{{Key: "_id", Value: 3}, {Key: "attrs", Value: bson.A{bson.D{{Key: "k", Value: "size"}, {Key: "v", Value: 7}}}}},
	}
	if _, err := db.Collection("products").InsertMany(ctx, docs); err != nil {
		t.Fatal(err)
	}
	createIndex(t, db, "products", bson.D{{Key: "attrs.k", Value: 1}, {Key: "attrs.v", Value: 1}})
	res := golden(t, db, "attribute_elemmatch", bson.D{{Key: "find", Value: "products"},
		{Key: "filter", Value: bson.D{{Key: "attrs", Value: bson.D{{Key: "$elemMatch", Value: bson.D{{Key: "k", Value: "color"}, {Key: "v", Value: "blue"}}}}}}}})
	if b := lookup(res, "queryPlanner", "winningPlan", "inputStage", "indexBounds", "attrs.v"); fmt.Sprint(b) != fmt.Sprint(bson.A{`["blue", "blue"]`}) {
		t.Errorf("attrs.v bounds = %v", b)
	}
	if n := lookup(res, "executionStats", "nReturned"); n != int32(1) {
		t.Errorf("nReturned = %v, want 1", n)
	}
	res = golden(t, db, "attribute_no_elemmatch", bson.D{{Key: "find", Value: "products"},
		{Key: "filter", Value: bson.D{{Key: "attrs.k", Value: "color"}, {Key: "attrs.v", Value: "blue"}}}})
	if b := lookup(res, "queryPlanner", "winningPlan", "inputStage", "indexBounds", "attrs.v"); fmt.Sprint(b) != fmt.Sprint(bson.A{"[MinKey, MaxKey]"}) {
		t.Errorf("attrs.v bounds = %v", b)
	}
	if n := lookup(res, "executionStats", "nReturned"); n != int32(2) {
		t.Errorf("nReturned = %v, want 2 (the cross-element false positive)", n)
	}
}

// TestExplainCountAndWrites checks the COUNT, UPDATE and DELETE wrappers
// and that explaining a write changes nothing.
func TestExplainCountAndWrites(t *testing.T) {
	_, db := newDB(t)
	ctx := ctxT(t)
	var docs []any
	for i := 0; i < 10; i++ {
		docs = append(docs, bson.D{{Key: "_id", Value: i}, {Key: "a", Value: i % 3}})
	}
	if _, err := db.Collection("c").InsertMany(ctx, docs); err != nil {
		t.Fatal(err)
	}
	createIndex(t, db, "c", bson.D{{Key: "a", Value: 1}})
	golden(t, db, "count", bson.D{{Key: "count", Value: "c"}, {Key: "query", Value: bson.D{{Key: "a", Value: 1}}}})
	res := golden(t, db, "update", bson.D{{Key: "update", Value: "c"}, {Key: "updates", Value: bson.A{
		bson.D{{Key: "q", Value: bson.D{{Key: "a", Value: bson.D{{Key: "$in", Value: bson.A{1, 2}}}}}}, {Key: "u", Value: bson.D{{Key: "$set", Value: bson.D{{Key: "a", Value: 2}}}}}, {Key: "multi", Value: true}},
	}}})
	if n := lookup(res, "executionStats", "executionStages", "nWouldModify"); n != int32(3) {
		t.Errorf("nWouldModify = %v, want 3", n)
	}
	golden(t, db, "delete", bson.D{{Key: "delete", Value: "c"}, {Key: "deletes", Value: bson.A{
		bson.D{{Key: "q", Value: bson.D{{Key: "a", Value: 0}}}, {Key: "limit", Value: 0}},
	}}})
	n, err := db.Collection("c").CountDocuments(ctx, bson.D{{Key: "a", Value: 2}})
	if err != nil || n != 3 {
		t.Fatalf("after explain: count a=2 = %d, %v; want 3 (nothing written)", n, err)
	}
	golden(t, db, "idhack", bson.D{{Key: "find", Value: "c"}, {Key: "filter", Value: bson.D{{Key: "_id", Value: 4}}}})
	golden(t, db, "in_points", bson.D{{Key: "find", Value: "c"}, {Key: "filter", Value: bson.D{{Key: "a", Value: bson.D{{Key: "$in", Value: bson.A{0, 2}}}}}}})
	golden(t, db, "covered", bson.D{{Key: "find", Value: "c"}, {Key: "filter", Value: bson.D{{Key: "a", Value: bson.D{{Key: "$gte", Value: 1}}}}},
		{Key: "projection", Value: bson.D{{Key: "_id", Value: 0}, {Key: "a", Value: 1}}}})
	golden(t, db, "or", bson.D{{Key: "find", Value: "c"}, {Key: "filter", Value: bson.D{{Key: "$or", Value: bson.A{
		bson.D{{Key: "a", Value: 0}}, bson.D{{Key: "_id", Value: bson.D{{Key: "$gt", Value: 7}}}}}}}}})
}

// TestExplainWildcard checks the expanded wildcard entries mongod 7.0
// plans: a $_path point per queried path, subpath ranges when the bounds
// reach objects, array-position variants of a path through an array, an
// index-provided sort, covering, a compound wildcard index, and the
// errors of a hint the index cannot serve.
func TestExplainWildcard(t *testing.T) {
	_, db := newDB(t)
	ctx := ctxT(t)
	var docs []any
	for i := 0; i < 12; i++ {
		d := bson.D{{Key: "_id", Value: i}, {Key: "a", Value: bson.D{{Key: "b", Value: i % 4}, {Key: "c", Value: fmt.Sprintf("s%d", i%3)}}}}
		switch i % 3 {
		case 0:
			d = append(d, bson.E{Key: "tags", Value: bson.A{"x", bson.D{{Key: "k", Value: i}}}})
		case 1:
			d = append(d, bson.E{Key: "tags", Value: bson.D{{Key: "0", Value: "x"}}})
		}
		if i%4 == 0 {
			d = append(d, bson.E{Key: "o", Value: bson.D{{Key: "p", Value: bson.D{{Key: "q", Value: i}}}}})
		}
		docs = append(docs, d)
	}
	if _, err := db.Collection("w").InsertMany(ctx, docs); err != nil {
		t.Fatal(err)
	}
	createIndex(t, db, "w", bson.D{{Key: "$**", Value: 1}})
	find := func(filter bson.D, more ...bson.E) bson.D {
		return append(bson.D{{Key: "find", Value: "w"}, {Key: "filter", Value: filter}}, more...)
	}
	res := golden(t, db, "wildcard_eq", find(bson.D{{Key: "a.b", Value: 2}}))
	if b := lookup(res, "queryPlanner", "winningPlan", "inputStage", "indexBounds", "$_path"); fmt.Sprint(b) != fmt.Sprint(bson.A{`["a.b", "a.b"]`}) {
		t.Errorf("$_path bounds = %v", b)
	}
	if n := lookup(res, "executionStats", "nReturned"); n != int32(3) {
		t.Errorf("nReturned = %v, want 3", n)
	}
	res = golden(t, db, "wildcard_exists_subpaths", find(bson.D{{Key: "o", Value: bson.D{{Key: "$exists", Value: true}}}}))
	if b := lookup(res, "queryPlanner", "winningPlan", "inputStage", "indexBounds", "$_path"); fmt.Sprint(b) != fmt.Sprint(bson.A{`["o", "o"]`, `["o.", "o/")`}) {
		t.Errorf("$_path bounds = %v", b)
	}
	if n := lookup(res, "executionStats", "nReturned"); n != int32(3) {
		t.Errorf("nReturned = %v, want 3", n)
	}
	res = golden(t, db, "wildcard_array_position", find(bson.D{{Key: "tags.0", Value: "x"}}))
	if b := lookup(res, "queryPlanner", "winningPlan", "inputStage", "indexBounds", "$_path"); fmt.Sprint(b) != fmt.Sprint(bson.A{`["tags", "tags"]`, `["tags.0", "tags.0"]`}) {
		t.Errorf("$_path bounds = %v", b)
	}
	if n := lookup(res, "executionStats", "nReturned"); n != int32(8) {
		t.Errorf("nReturned = %v, want 8", n)
	}
	res = golden(t, db, "wildcard_sort", find(bson.D{{Key: "a.b", Value: bson.D{{Key: "$gte", Value: 2}}}}, bson.E{Key: "sort", Value: bson.D{{Key: "a.b", Value: -1}}}))
	if st := lookup(res, "queryPlanner", "winningPlan", "stage"); st != "FETCH" {
		t.Errorf("winning stage = %v, want FETCH (sort from the index)", st)
	}
	res = golden(t, db, "wildcard_covered", find(bson.D{{Key: "a.c", Value: "s1"}}, bson.E{Key: "projection", Value: bson.D{{Key: "_id", Value: 0}, {Key: "a.c", Value: 1}}}))
	if st := lookup(res, "queryPlanner", "winningPlan", "stage"); st != "PROJECTION_COVERED" {
		t.Errorf("winning stage = %v, want PROJECTION_COVERED", st)
	}
	res = golden(t, db, "wildcard_multikey_sort", find(bson.D{{Key: "tags.k", Value: bson.D{{Key: "$gt", Value: 1}}}}, bson.E{Key: "sort", Value: bson.D{{Key: "tags.k", Value: 1}}}))
	if st := lookup(res, "queryPlanner", "winningPlan", "stage"); st != "SORT" {
		t.Errorf("winning stage = %v, want SORT (multikey path)", st)
	}
	// Predicates a wildcard index cannot answer leave a collection scan.
	for _, f := range []bson.D{
		{{Key: "a.b", Value: nil}},
		{{Key: "a.b", Value: bson.D{{Key: "$exists", Value: false}}}},
		{{Key: "a", Value: bson.D{{Key: "b", Value: 1}}}},
		{{Key: "a.b", Value: bson.D{{Key: "$ne", Value: 1}}}},
	} {
		var ex bson.D
		if err := db.RunCommand(ctx, bson.D{{Key: "explain", Value: find(f)}}).Decode(&ex); err != nil {
			t.Fatal(err)
		}
		if st := lookup(ex, "queryPlanner", "winningPlan", "stage"); st != "COLLSCAN" {
			t.Errorf("%v: winning stage = %v, want COLLSCAN", f, st)
		}
	}
	err := db.RunCommand(ctx, find(bson.D{{Key: "a.b", Value: nil}}, bson.E{Key: "hint", Value: bson.D{{Key: "$**", Value: 1}}})).Err()
	wantCode(t, err, 291, "NoQueryExecutionPlans")
	err = db.RunCommand(ctx, find(bson.D{{Key: "_id", Value: 1}}, bson.E{Key: "hint", Value: "$**_1"})).Err()
	wantCode(t, err, 2, "BadValue")
	res = golden(t, db, "wildcard_hint_two_paths", find(bson.D{{Key: "a.b", Value: 1}, {Key: "a.c", Value: "s1"}}, bson.E{Key: "hint", Value: bson.D{{Key: "$**", Value: 1}}}))
	if n := len(lookup(res, "queryPlanner", "rejectedPlans").(bson.A)); n != 1 {
		t.Errorf("rejected plans = %d, want 1 (one entry per path)", n)
	}

	createIndex(t, db, "w", bson.D{{Key: "a.$**", Value: 1}, {Key: "n", Value: 1}})
	res = golden(t, db, "wildcard_compound", find(bson.D{{Key: "a.b", Value: 3}, {Key: "n", Value: nil}}, bson.E{Key: "hint", Value: "a.$**_1_n_1"}))
	if kp := lookup(res, "queryPlanner", "winningPlan", "inputStage", "keyPattern"); fmt.Sprint(kp) != fmt.Sprint(bson.D{{Key: "$_path", Value: int32(1)}, {Key: "a.b", Value: int32(1)}, {Key: "n", Value: int32(1)}}) {
		t.Errorf("keyPattern = %v", kp)
	}
	if n := lookup(res, "executionStats", "nReturned"); n != int32(3) {
		t.Errorf("nReturned = %v, want 3", n)
	}
}

// TestExplainUnderAPIStrict runs explain with apiStrict: explain belongs
// to API Version 1.
func TestExplainUnderAPIStrict(t *testing.T) {
	t.Parallel()
	_, db := newDB(t)
	ctx := ctxT(t)
	var res bson.Raw
	err := db.RunCommand(ctx, bson.D{{Key: "explain", Value: bson.D{{Key: "count", Value: "c"}}}, {Key: "verbosity", Value: "queryPlanner"},
		{Key: "apiVersion", Value: "1"}, {Key: "apiStrict", Value: true}}).Decode(&res)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := res.LookupErr("queryPlanner"); err != nil {
		t.Fatalf("explain under apiStrict: %v", res)
	}
}
