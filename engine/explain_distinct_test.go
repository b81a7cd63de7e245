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
// FETCH over IXSCAN when a filter meets a multikey key.
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
	if got := fmt.Sprint(stageNames(res)); got != "[PROJECTION_SIMPLE FETCH IXSCAN]" {
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
