package attribute

import (
	"context"
	"fmt"
	"slices"
	"testing"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo"

	"github.com/formworkdb/formwork/internal/explaintest"
)

// explainFind explains find(filter) on coll.
func explainFind(t testing.TB, coll *mongo.Collection, filter any) explaintest.Result {
	t.Helper()
	return explaintest.Run(t, coll.Database(), bson.D{{Key: "find", Value: coll.Name()}, {Key: "filter", Value: filter}})
}

// loadProducts inserts n products with a color, a size and a weight.
func loadProducts(t testing.TB, s *Store[bson.D], n int) {
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
		k, v    []string
		matches int64
	}{
		{"eq", All(Where("color").Eq("blue")), []string{`["color", "color"]`}, []string{`["blue", "blue"]`}, 50},
		{"range", All(Where("weightKg").Gte(0.1).Lt(0.5)), []string{`["weightKg", "weightKg"]`}, []string{"[0.1, 0.5)"}, 40},
		{"in", All(Where("size").In("L", "S")), []string{`["size", "size"]`}, []string{`["L", "L"]`, `["S", "S"]`}, 133},
	} {
		t.Run(c.name, func(t *testing.T) {
			q, err := s.Filter(c.f)
			if err != nil {
				t.Fatal(err)
			}
			res := explainFind(t, coll, q)
			ix := res.MustStage("IXSCAN")
			if ix.Index != "attrs.k_1_attrs.v_1" {
				t.Errorf("index %s", ix.Index)
			}
			if multi, ok := ix.Doc.Lookup("isMultiKey").BooleanOK(); !ok || !multi {
				t.Error("index not multikey")
			}
			if got := ix.Bounds("attrs.k"); !slices.Equal(got, c.k) {
				t.Errorf("attrs.k bounds %q, want %q", got, c.k)
			}
			if got := ix.Bounds("attrs.v"); !slices.Equal(got, c.v) {
				t.Errorf("attrs.v bounds %q, want %q", got, c.v)
			}
			if n := res.NReturned(); n != c.matches {
				t.Errorf("%d returned, want %d", n, c.matches)
			}
			// Tight bounds: every document fetched is a match.
			if n := res.DocsExamined(); n != c.matches {
				t.Errorf("%d documents examined for %d matches", n, c.matches)
			}
		})
	}
	t.Run("separate", func(t *testing.T) {
		res := explainFind(t, coll, bson.D{{Key: "attrs.k", Value: "color"}, {Key: "attrs.v", Value: "blue"}})
		ix := res.MustStage("IXSCAN")
		if got := ix.Bounds("attrs.v"); !slices.Equal(got, []string{"[MinKey, MaxKey]"}) {
			t.Errorf("separate form attrs.v bounds %q, want unbounded", got)
		}
		if n := res.DocsExamined(); n != 200 {
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
	res := explainFind(t, coll, q)
	ix := res.MustStage("IXSCAN")
	if ix.Index != "props.$**_1" {
		t.Errorf("index %s", ix.Index)
	}
	if got := ix.Bounds("props.color"); !slices.Equal(got, []string{`["blue", "blue"]`}) {
		t.Errorf("props.color bounds %q in %s", got, ix.Doc)
	}
	if n := res.DocsExamined(); n != 50 {
		t.Errorf("%d documents examined, want 50", n)
	}
}
