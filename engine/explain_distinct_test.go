package engine_test

import (
	"fmt"
	"testing"

	"go.mongodb.org/mongo-driver/v2/bson"
)

// stageNames lists the stages of an explain's winning plan, outermost
// first.
func stageNames(res bson.D) []string {
	var out []string
	cur, _ := lookup(res, "queryPlanner", "winningPlan").(bson.D)
	for cur != nil {
		name, _ := lookup(cur, "stage").(string)
		out = append(out, name)
		cur, _ = lookup(cur, "inputStage").(bson.D)
	}
	return out
}

// TestExplainDistinctScan checks the plans mongod 7.0 chooses for
// distinct, after jstests/core/query/distinct/distinct_multikey.js: a
// DISTINCT_SCAN under a covered projection without a filter (multikey
// indexes included) and with a filter when the key is not multikey;
// FETCH over IXSCAN when a filter meets a multikey key, without the
// projection (mongod plans such a distinct as a plain find).
func TestExplainDistinctScan(t *testing.T) {
	_, db := newDB(t)
	ctx := ctxT(t)
	c := db.Collection("dm")
	if _, err := c.InsertMany(ctx, []any{
		bson.D{{Key: "a", Value: bson.A{1, 2, 3}}},
		bson.D{{Key: "a", Value: bson.A{2, 3, 4}}},
		bson.D{{Key: "a", Value: bson.A{5, 6, 7}}},
	}); err != nil {
		t.Fatal(err)
	}
	createIndex(t, db, "dm", bson.D{{Key: "a", Value: 1}})
	golden(t, db, "distinct_scan_multikey", bson.D{{Key: "distinct", Value: "dm"}, {Key: "key", Value: "a"}})
	res := golden(t, db, "distinct_multikey_filter", bson.D{{Key: "distinct", Value: "dm"}, {Key: "key", Value: "a"}, {Key: "query", Value: bson.D{{Key: "a", Value: 3}}}})
	if got := fmt.Sprint(stageNames(res)); got != "[FETCH IXSCAN]" {
		t.Errorf("multikey with a filter: %s", got)
	}

	d := db.Collection("dn")
	if _, err := d.InsertMany(ctx, []any{bson.D{{Key: "a", Value: 1}}, bson.D{{Key: "a", Value: 2}}, bson.D{{Key: "a", Value: 3}}, bson.D{{Key: "a", Value: 3}}}); err != nil {
		t.Fatal(err)
	}
	createIndex(t, db, "dn", bson.D{{Key: "a", Value: 1}})
	res = golden(t, db, "distinct_scan_filter", bson.D{{Key: "distinct", Value: "dn"}, {Key: "key", Value: "a"}, {Key: "query", Value: bson.D{{Key: "a", Value: bson.D{{Key: "$gte", Value: 2}}}}}})
	if got := fmt.Sprint(stageNames(res)); got != "[PROJECTION_COVERED DISTINCT_SCAN]" {
		t.Errorf("non-multikey with a filter: %s", got)
	}
	var out struct{ Values []int32 }
	if err := db.RunCommand(ctx, bson.D{{Key: "distinct", Value: "dn"}, {Key: "key", Value: "a"}, {Key: "query", Value: bson.D{{Key: "a", Value: bson.D{{Key: "$gte", Value: 2}}}}}}).Decode(&out); err != nil {
		t.Fatal(err)
	}
	if fmt.Sprint(out.Values) != "[2 3]" {
		t.Errorf("distinct a >= 2 = %v, want [2 3]", out.Values)
	}
}

// TestExplainDistinctScanTrailingKey checks mongod 7.0's DISTINCT_SCAN on
// a key that is not the index's first field (turnIxscanIntoDistinctIxscan
// with fieldNo > 0): after an equality on the leading field, and, since
// the distinct command is not strict, after a range there too.
func TestExplainDistinctScanTrailingKey(t *testing.T) {
	_, db := newDB(t)
	ctx := ctxT(t)
	c := db.Collection("dt")
	var docs []any
	for i := 0; i < 12; i++ {
		docs = append(docs, bson.D{{Key: "a", Value: i % 4}, {Key: "b", Value: i % 3}})
	}
	if _, err := c.InsertMany(ctx, docs); err != nil {
		t.Fatal(err)
	}
	// mongod plans a distinct only with the indexes holding its key
	// (fillOutPlannerParamsForDistinct), so {a: 1} never competes.
	createIndex(t, db, "dt", bson.D{{Key: "a", Value: 1}})
	createIndex(t, db, "dt", bson.D{{Key: "a", Value: 1}, {Key: "b", Value: 1}})
	for _, tc := range []struct {
		golden string
		query  bson.D
		want   string
	}{
		{"distinct_scan_eq_prefix", bson.D{{Key: "a", Value: 3}}, "[0 1 2]"},
		{"distinct_scan_range_prefix", bson.D{{Key: "a", Value: bson.D{{Key: "$gte", Value: 2}}}, {Key: "b", Value: bson.D{{Key: "$lt", Value: 2}}}}, "[0 1]"},
	} {
		cmd := bson.D{{Key: "distinct", Value: "dt"}, {Key: "key", Value: "b"}, {Key: "query", Value: tc.query}}
		res := golden(t, db, tc.golden, cmd)
		if got := fmt.Sprint(stageNames(res)); got != "[PROJECTION_COVERED DISTINCT_SCAN]" {
			t.Errorf("%s: plan %s", tc.golden, got)
		}
		var out struct{ Values []int32 }
		if err := db.RunCommand(ctx, cmd).Decode(&out); err != nil {
			t.Fatal(err)
		}
		if got := fmt.Sprint(out.Values); got != tc.want {
			t.Errorf("%s: values %s, want %s", tc.golden, got, tc.want)
		}
	}
}

// TestExplainDistinctScanPartial checks that a partial index serves a
// DISTINCT_SCAN when the filter implies its expression, as any planned
// index scan does in mongod's getExecutorDistinct.
func TestExplainDistinctScanPartial(t *testing.T) {
	_, db := newDB(t)
	ctx := ctxT(t)
	if _, err := db.Collection("dp").InsertMany(ctx, []any{
		bson.D{{Key: "a", Value: 3}, {Key: "b", Value: 1}},
		bson.D{{Key: "a", Value: 3}, {Key: "b", Value: 2}},
		bson.D{{Key: "a", Value: -1}, {Key: "b", Value: 5}},
	}); err != nil {
		t.Fatal(err)
	}
	err := db.RunCommand(ctx, bson.D{{Key: "createIndexes", Value: "dp"}, {Key: "indexes", Value: bson.A{bson.D{
		{Key: "key", Value: bson.D{{Key: "a", Value: 1}, {Key: "b", Value: 1}}}, {Key: "name", Value: "ab_partial"},
		{Key: "partialFilterExpression", Value: bson.D{{Key: "a", Value: bson.D{{Key: "$gt", Value: 0}}}}},
	}}}}).Err()
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		query bson.D
		plan  string
		want  string
	}{
		{bson.D{{Key: "a", Value: 3}}, "[PROJECTION_COVERED DISTINCT_SCAN]", "[1 2]"},
		{bson.D{{Key: "a", Value: -1}}, "[COLLSCAN]", "[5]"},
	} {
		cmd := bson.D{{Key: "distinct", Value: "dp"}, {Key: "key", Value: "b"}, {Key: "query", Value: tc.query}}
		var res bson.D
		if err := db.RunCommand(ctx, bson.D{{Key: "explain", Value: cmd}}).Decode(&res); err != nil {
			t.Fatal(err)
		}
		if got := fmt.Sprint(stageNames(res)); got != tc.plan {
			t.Errorf("%v: plan %s, want %s", tc.query, got, tc.plan)
		}
		var out struct{ Values []int32 }
		if err := db.RunCommand(ctx, cmd).Decode(&out); err != nil {
			t.Fatal(err)
		}
		if got := fmt.Sprint(out.Values); got != tc.want {
			t.Errorf("%v: values %s, want %s", tc.query, got, tc.want)
		}
	}
}

// TestExplainCountScanSkipLimit checks that a count with skip and limit
// keeps its COUNT_SCAN: mongod's COUNT stage skips and limits itself
// (nSkipped, nCounted) with no SKIP or LIMIT stage below it.
func TestExplainCountScanSkipLimit(t *testing.T) {
	_, db := newDB(t)
	ctx := ctxT(t)
	var docs []any
	for i := 0; i < 10; i++ {
		docs = append(docs, bson.D{{Key: "_id", Value: i}, {Key: "a", Value: i % 2}})
	}
	if _, err := db.Collection("cs").InsertMany(ctx, docs); err != nil {
		t.Fatal(err)
	}
	createIndex(t, db, "cs", bson.D{{Key: "a", Value: 1}})
	cmd := bson.D{{Key: "count", Value: "cs"}, {Key: "query", Value: bson.D{{Key: "a", Value: 1}}}, {Key: "skip", Value: 1}, {Key: "limit", Value: 3}}
	res := golden(t, db, "count_scan_skip_limit", cmd)
	if got := fmt.Sprint(stageNames(res)); got != "[COUNT COUNT_SCAN]" {
		t.Errorf("plan %s", got)
	}
	if n := lookup(res, "executionStats", "executionStages", "nCounted"); n != int32(3) {
		t.Errorf("nCounted = %v, want 3", n)
	}
	if n := lookup(res, "executionStats", "executionStages", "nSkipped"); n != int32(1) {
		t.Errorf("nSkipped = %v, want 1", n)
	}
	for _, tc := range []struct{ skip, limit, want int64 }{{0, 0, 5}, {1, 3, 3}, {4, 3, 1}, {7, 0, 0}, {0, -2, 2}} {
		var out struct{ N int64 }
		if err := db.RunCommand(ctx, bson.D{{Key: "count", Value: "cs"}, {Key: "query", Value: bson.D{{Key: "a", Value: 1}}}, {Key: "skip", Value: tc.skip}, {Key: "limit", Value: tc.limit}}).Decode(&out); err != nil {
			t.Fatal(err)
		}
		if out.N != tc.want {
			t.Errorf("count skip %d limit %d = %d, want %d", tc.skip, tc.limit, out.N, tc.want)
		}
	}
}
