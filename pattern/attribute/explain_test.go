package attribute

import (
	"context"
	"fmt"
	"testing"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo"

	"github.com/formworkdb/formwork/internal/testenv"
)

// explain runs find(filter) under explain with executionStats.
func explain(t testing.TB, coll *mongo.Collection, filter any) bson.Raw {
	t.Helper()
	var out bson.Raw
	err := coll.Database().RunCommand(context.Background(), bson.D{
		{Key: "explain", Value: bson.D{{Key: "find", Value: coll.Name()}, {Key: "filter", Value: filter}}},
		{Key: "verbosity", Value: "executionStats"},
	}).Decode(&out)
	if err != nil {
		t.Fatalf("explain: %v", err)
	}
	return out
}

// planStages returns the winning plan's stages, root first, walking the
// classic shape (inputStage, inputStages) and the slot-based one
// (winningPlan.queryPlan).
func planStages(t testing.TB, res bson.Raw) []bson.Raw {
	t.Helper()
	wp, ok := res.Lookup("queryPlanner", "winningPlan").DocumentOK()
	if !ok {
		t.Fatalf("explain has no queryPlanner.winningPlan: %s", res)
	}
	if qp, ok := wp.Lookup("queryPlan").DocumentOK(); ok {
		wp = qp
	}
	var out []bson.Raw
	var walk func(bson.Raw)
	walk = func(d bson.Raw) {
		out = append(out, d)
		if in, ok := d.Lookup("inputStage").DocumentOK(); ok {
			walk(in)
		}
		if ins, ok := d.Lookup("inputStages").ArrayOK(); ok {
			vals, _ := ins.Values()
			for _, v := range vals {
				if in, ok := v.DocumentOK(); ok {
					walk(in)
				}
			}
		}
	}
	walk(wp)
	return out
}

// ixscan returns the winning plan's first IXSCAN, failing without one.
func ixscan(t testing.TB, res bson.Raw) bson.Raw {
	t.Helper()
	for _, s := range planStages(t, res) {
		if s.Lookup("stage").StringValue() == "IXSCAN" {
			return s
		}
	}
	t.Fatalf("no IXSCAN in %s", res.Lookup("queryPlanner", "winningPlan"))
	return nil
}

// loadProducts inserts n products with a color, a size and a weight.
func loadProducts(t testing.TB, s *Store, n int) {
	t.Helper()
	ctx := context.Background()
	colors := []string{"blue", "red", "green", "black"}
	for i := range n {
		if _, err := s.Insert(ctx, bson.D{{Key: "name", Value: fmt.Sprintf("p%d", i)}},
			Attr{"color", colors[i%len(colors)]}, Attr{"size", []string{"S", "M", "L"}[i%3]},
			Attr{"weightKg", float64(i%20) / 10}); err != nil {
			t.Fatal(err)
		}
	}
}

// TestQueryPlan checks that compiled queries use the compound multikey
// index with tight bounds on both attrs.k and attrs.v, and that the
// separate form the builder cannot make leaves attrs.v unbounded.
func TestQueryPlan(t *testing.T) {
	s, coll := newStore(t, false, Config{})
	loadProducts(t, s, 200)
	for _, c := range []struct {
		name    string
		f       Filter
		k, v    string
		matches int64
	}{
		{"eq", All(Where("color").Eq("blue")), `["[\"color\", \"color\"]"]`, `["[\"blue\", \"blue\"]"]`, 50},
		{"range", All(Where("weightKg").Gte(0.1).Lt(0.5)), `["[\"weightKg\", \"weightKg\"]"]`, `["[0.1, 0.5)"]`, 40},
		{"in", All(Where("size").In("L", "S")), `["[\"size\", \"size\"]"]`, `["[\"L\", \"L\"]","[\"S\", \"S\"]"]`, 133},
	} {
		t.Run(c.name, func(t *testing.T) {
			q, err := s.Filter(c.f)
			if err != nil {
				t.Fatal(err)
			}
			res := explain(t, coll, q)
			ix := ixscan(t, res)
			if got := ix.Lookup("indexName").StringValue(); got != "attrs.k_1_attrs.v_1" {
				t.Errorf("index %s", got)
			}
			if !ix.Lookup("isMultiKey").Boolean() {
				t.Error("index not multikey")
			}
			if got := ix.Lookup("indexBounds", "attrs.k").String(); got != c.k {
				t.Errorf("attrs.k bounds %s, want %s", got, c.k)
			}
			if got := ix.Lookup("indexBounds", "attrs.v").String(); got != c.v {
				t.Errorf("attrs.v bounds %s, want %s", got, c.v)
			}
			st := res.Lookup("executionStats")
			if n := st.Document().Lookup("nReturned").AsInt64(); n != c.matches {
				t.Errorf("%d returned, want %d", n, c.matches)
			}
			// Tight bounds: every document fetched is a match.
			if n := st.Document().Lookup("totalDocsExamined").AsInt64(); n != c.matches {
				t.Errorf("%d documents examined for %d matches", n, c.matches)
			}
		})
	}
	t.Run("separate", func(t *testing.T) {
		res := explain(t, coll, bson.D{{Key: "attrs.k", Value: "color"}, {Key: "attrs.v", Value: "blue"}})
		ix := ixscan(t, res)
		if got := ix.Lookup("indexBounds", "attrs.v").String(); got != `["[MinKey, MaxKey]"]` {
			t.Errorf("separate form attrs.v bounds %s, want unbounded", got)
		}
		if n := res.Lookup("executionStats", "totalDocsExamined").AsInt64(); n != 200 {
			t.Errorf("separate form examined %d documents, want all 200 with a color", n)
		}
	})
}

// TestWildcardPlan checks that the wildcard form uses {"props.$**": 1}
// with a point bound on the attribute's path.
func TestWildcardPlan(t *testing.T) {
	s, coll := newStore(t, true, Config{})
	loadProducts(t, s, 200)
	q, err := s.Filter(All(Where("color").Eq("blue")))
	if err != nil {
		t.Fatal(err)
	}
	res := explain(t, coll, q)
	if !testenv.Real() && res.Lookup("queryPlanner", "winningPlan", "stage").StringValue() == "COLLSCAN" {
		// The embedded engine's planner does not plan wildcard indexes
		// yet (plan/index.go skips them); MongoDB does. Reported to the
		// lead; this test starts asserting once the planner does.
		t.Skip("engine gap: wildcard indexes are not used by the planner")
	}
	ix := ixscan(t, res)
	if got := ix.Lookup("indexName").StringValue(); got != "props.$**_1" {
		t.Errorf("index %s", got)
	}
	if got := ix.Lookup("indexBounds", "props.color").String(); got != `["[\"blue\", \"blue\"]"]` {
		t.Errorf("props.color bounds %s in %s", got, ix)
	}
	if n := res.Lookup("executionStats", "totalDocsExamined").AsInt64(); n != 50 {
		t.Errorf("%d documents examined, want 50", n)
	}
}
