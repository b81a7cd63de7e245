package tree_test

import (
	"context"
	"strings"
	"testing"

	"go.mongodb.org/mongo-driver/v2/bson"

	"github.com/formworkdb/formwork/internal/testenv"
	"github.com/formworkdb/formwork/pattern/tree"
)

// Category is the user's node type.
type Category struct {
	ID     string `bson:"_id"`
	Hidden bool   `bson:"hidden,omitempty"`
}

// allKept keeps every representation.
var allKept = tree.Config{Parent: "parent", Children: "children", Ancestors: "ancestors", Path: "path"}

// books builds the manual's tree:
//
//	Books
//	└─ Programming
//	   ├─ Databases
//	   │  ├─ MongoDB
//	   │  └─ dbm
//	   └─ Languages
func books(t testing.TB, cfg tree.Config) *tree.Tree[Category] {
	t.Helper()
	ctx := context.Background()
	tr, err := tree.New[Category](testenv.Database(t).Collection("categories"), cfg)
	if err != nil {
		t.Fatal(err)
	}
	if err := tr.EnsureIndexes(ctx); err != nil {
		t.Fatal(err)
	}
	for _, e := range []struct {
		id     string
		parent any
	}{{"Books", nil}, {"Programming", "Books"}, {"Databases", "Programming"}, {"Languages", "Programming"}, {"MongoDB", "Databases"}, {"dbm", "Databases"}} {
		if err := tr.Insert(ctx, Category{ID: e.id}, e.parent); err != nil {
			t.Fatal(err)
		}
	}
	return tr
}

// stored returns node id as stored, as canonical-free relaxed JSON.
func stored(t testing.TB, tr *tree.Tree[Category], id string) string {
	t.Helper()
	raw, err := tr.Collection().FindOne(context.Background(), bson.D{{Key: "_id", Value: id}}).Raw()
	if err != nil {
		t.Fatalf("%s: %v", id, err)
	}
	return raw.String()
}

// ids returns the _ids of cs.
func ids(cs []Category) string {
	var s []string
	for _, c := range cs {
		s = append(s, c.ID)
	}
	return strings.Join(s, " ")
}

// nodeIDs returns "id@depth" of each node.
func nodeIDs(ns []tree.Node[Category]) string {
	var s []string
	for _, n := range ns {
		s = append(s, n.Doc.ID+"@"+string(rune('0'+n.Depth)))
	}
	return strings.Join(s, " ")
}

// mustCheck fails t unless Check finds nothing.
func mustCheck(t testing.TB, tr *tree.Tree[Category]) {
	t.Helper()
	res, err := tr.Check(context.Background(), false)
	if err != nil || !res.OK() {
		t.Fatalf("check: %+v, %v", res, err)
	}
}
