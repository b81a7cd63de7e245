package tree_test

import (
	"slices"
	"testing"

	"go.mongodb.org/mongo-driver/v2/bson"

	"github.com/formworkdb/formwork/internal/explaintest"
	"github.com/formworkdb/formwork/pattern/tree"
)

// TestSubtreeByPathScansTightRange: the escaped, anchored prefix regex
// gives the two intervals MongoDB derives from a prefix (the string range
// up to the prefix with its last byte incremented, and the regex itself)
// and examines one key per descendant (plus the one that ends the scan).
func TestSubtreeByPathScansTightRange(t *testing.T) {
	tr := books(t, allKept)
	db := tr.Collection().Database()
	f := tr.SubtreeFilter(",Books,", "Programming")
	r := explaintest.Run(t, db, bson.D{{Key: "find", Value: "categories"}, {Key: "filter", Value: f}})
	if r.HasStage("COLLSCAN") || !r.Uses("path_1") {
		t.Fatalf("plan %s, want IXSCAN path_1", r)
	}
	want := []string{`[",Books,Programming,", ",Books,Programming-")`, `[/^,Books,Programming,/, /^,Books,Programming,/]`}
	if b := r.Bounds("path_1", "path"); !slices.Equal(b, want) {
		t.Fatalf("bounds %q, want %q", b, want)
	}
	if k, n := r.KeysExamined(), r.NReturned(); n != 4 || k > n+1 {
		t.Fatalf("%d keys examined for %d descendants", k, n)
	}
	// A metacharacter in an _id is escaped, and the bounds stay tight.
	r = explaintest.Run(t, db, bson.D{{Key: "find", Value: "categories"}, {Key: "filter", Value: tr.SubtreeFilter(",", "Node.js")}})
	want = []string{`[",Node.js,", ",Node.js-")`, `[/^,Node\.js,/, /^,Node\.js,/]`}
	if b := r.Bounds("path_1", "path"); !slices.Equal(b, want) {
		t.Fatalf("escaped bounds %q, want %q", b, want)
	}
	if p := tree.PathPrefix(",a.b(c),"); p != `^,a\.b\(c\),` {
		t.Fatalf("PathPrefix = %q", p)
	}
}

// TestIndexedReads: children use the parent index, the ancestors array
// its multikey index, each with a point interval.
func TestIndexedReads(t *testing.T) {
	tr := books(t, allKept)
	db := tr.Collection().Database()
	for _, c := range []struct{ field, index string }{{"parent", "parent_1"}, {"ancestors", "ancestors_1"}, {"children", "children_1"}} {
		r := explaintest.Run(t, db, bson.D{{Key: "find", Value: "categories"}, {Key: "filter", Value: bson.D{{Key: c.field, Value: "Programming"}}}})
		if b := r.Bounds(c.index, c.field); !slices.Equal(b, []string{`["Programming", "Programming"]`}) {
			t.Errorf("%s: plan %s bounds %q", c.field, r, b)
		}
	}
}

// TestDescendantsFoldsUnwind: the descendants pipeline starts from the
// _id point lookup, and the $unwind right after $graphLookup is folded
// into it, so a subtree is streamed rather than built as one array
// document bounded by 16 MiB.
func TestDescendantsFoldsUnwind(t *testing.T) {
	tr := books(t, allKept)
	r := explaintest.Run(t, tr.Collection().Database(), bson.D{{Key: "aggregate", Value: "categories"},
		{Key: "pipeline", Value: tr.DescendantsPipeline("Books", tree.Walk{Levels: 3})}, {Key: "cursor", Value: bson.D{}}})
	if r.HasStage("COLLSCAN") {
		t.Fatalf("plan %s scans the collection", r)
	}
	stages, err := r.Reply().LookupErr("stages")
	if err != nil {
		t.Fatalf("no stages in %s", r.Reply())
	}
	vals, _ := stages.Array().Values()
	var gl bson.Raw
	for _, v := range vals {
		if d, ok := v.Document().Lookup("$graphLookup").DocumentOK(); ok {
			gl = d
		}
		if _, err := v.Document().LookupErr("$unwind"); err == nil {
			t.Fatalf("$unwind not folded: %s", stages)
		}
	}
	if gl == nil || gl.Lookup("unwinding").Type != bson.TypeEmbeddedDocument || gl.Lookup("connectToField").StringValue() != "parent" {
		t.Fatalf("$graphLookup stage %s", gl)
	}
}
