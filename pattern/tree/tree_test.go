package tree_test

import (
	"context"
	"errors"
	"sync"
	"testing"

	"go.mongodb.org/mongo-driver/v2/bson"

	"github.com/formworkdb/formwork/internal/testenv"
	"github.com/formworkdb/formwork/pattern"
	"github.com/formworkdb/formwork/pattern/tree"
)

func TestInsertStoresEveryRepresentation(t *testing.T) {
	tr := books(t, allKept)
	for id, want := range map[string]string{
		"Books":     `{"_id": "Books","parent": null,"children": ["Programming"],"ancestors": [],"path": ","}`,
		"Databases": `{"_id": "Databases","parent": "Programming","children": ["MongoDB","dbm"],"ancestors": ["Books","Programming"],"path": ",Books,Programming,"}`,
		"MongoDB":   `{"_id": "MongoDB","parent": "Databases","children": [],"ancestors": ["Books","Programming","Databases"],"path": ",Books,Programming,Databases,"}`,
	} {
		if got := stored(t, tr, id); got != want {
			t.Errorf("%s stored as\n%s\nwant\n%s", id, got, want)
		}
	}
	mustCheck(t, tr)
	ctx := context.Background()
	if err := tr.Insert(ctx, Category{ID: "x"}, "Nowhere"); !errors.Is(err, tree.ErrParentNotFound) || !errors.Is(err, pattern.ErrParentNotFound) {
		t.Errorf("insert under a missing parent: %v", err)
	}
	if err := tr.Insert(ctx, Category{ID: "a,b"}, nil); !errors.Is(err, tree.ErrBadID) {
		t.Errorf("insert of an _id holding the separator: %v", err)
	}
	if err := tr.Insert(ctx, Category{}, nil); !errors.Is(err, tree.ErrBadID) {
		t.Errorf("insert of an empty _id: %v", err)
	}
}

func TestReads(t *testing.T) {
	ctx := context.Background()
	tr := books(t, allKept)
	kids, err := tr.Children(ctx, "Programming")
	if err != nil || ids(kids) != "Databases Languages" {
		t.Fatalf("children = %q, %v", ids(kids), err)
	}
	desc, err := tr.Descendants(ctx, "Programming", tree.Walk{})
	if err != nil || nodeIDs(desc) != "Databases@0 Languages@0 MongoDB@1 dbm@1" {
		t.Fatalf("descendants = %q, %v", nodeIDs(desc), err)
	}
	desc, err = tr.Descendants(ctx, "Books", tree.Walk{Levels: 2})
	if err != nil || nodeIDs(desc) != "Programming@0 Databases@1 Languages@1" {
		t.Fatalf("two levels = %q, %v", nodeIDs(desc), err)
	}
	if _, err := tr.Collection().UpdateOne(ctx, bson.D{{Key: "_id", Value: "Databases"}}, bson.D{{Key: "$set", Value: bson.D{{Key: "hidden", Value: true}}}}); err != nil {
		t.Fatal(err)
	}
	desc, err = tr.Descendants(ctx, "Books", tree.Walk{Match: bson.D{{Key: "hidden", Value: bson.D{{Key: "$ne", Value: true}}}}})
	if err != nil || nodeIDs(desc) != "Programming@0 Languages@1" {
		t.Fatalf("restricted = %q, %v", nodeIDs(desc), err)
	}
	up, err := tr.Ancestors(ctx, "MongoDB", tree.Walk{})
	if err != nil || nodeIDs(up) != "Databases@0 Programming@1 Books@2" {
		t.Fatalf("ancestors = %q, %v", nodeIDs(up), err)
	}
	byPath, err := tr.SubtreeByPath(ctx, "Programming")
	if err != nil || ids(byPath) != "Databases Languages MongoDB dbm" {
		t.Fatalf("by path = %q, %v", ids(byPath), err)
	}
	byAnc, err := tr.SubtreeByAncestors(ctx, "Programming")
	if err != nil || ids(byAnc) != "Databases Languages MongoDB dbm" {
		t.Fatalf("by ancestors = %q, %v", ids(byAnc), err)
	}
	if _, err := tr.SubtreeByPath(ctx, "Nowhere"); !errors.Is(err, tree.ErrNotFound) {
		t.Fatalf("by path of a missing node: %v", err)
	}
	if c, err := tr.Get(ctx, "dbm"); err != nil || c.ID != "dbm" {
		t.Fatalf("get = %+v, %v", c, err)
	}
}

// TestPathQueryEscapesIDs: _ids with regex metacharacters stay literal
// in the prefix; "Node.js" must not match "NodeXjs".
func TestPathQueryEscapesIDs(t *testing.T) {
	ctx := context.Background()
	tr := books(t, tree.Config{Path: "path"})
	for _, e := range [][2]string{{"Node.js", "Programming"}, {"NodeXjs", "Programming"}, {"npm", "Node.js"}, {"yarn", "NodeXjs"}, {"C++", "Programming"}, {"STL(1)", "C++"}} {
		if err := tr.Insert(ctx, Category{ID: e[0]}, e[1]); err != nil {
			t.Fatal(err)
		}
	}
	for id, want := range map[string]string{"Node.js": "npm", "NodeXjs": "yarn", "C++": "STL(1)"} {
		got, err := tr.SubtreeByPath(ctx, id)
		if err != nil || ids(got) != want {
			t.Errorf("subtree of %s = %q, %v; want %q", id, ids(got), err, want)
		}
	}
}

func TestMoveRewritesSubtree(t *testing.T) {
	ctx := context.Background()
	tr := books(t, allKept)
	if err := tr.Move(ctx, "Databases", "Books"); err != nil {
		t.Fatal(err)
	}
	for id, want := range map[string]string{
		"Books":       `{"_id": "Books","parent": null,"children": ["Programming","Databases"],"ancestors": [],"path": ","}`,
		"Programming": `{"_id": "Programming","parent": "Books","children": ["Languages"],"ancestors": ["Books"],"path": ",Books,"}`,
		"Databases":   `{"_id": "Databases","parent": "Books","children": ["MongoDB","dbm"],"ancestors": ["Books"],"path": ",Books,"}`,
		"MongoDB":     `{"_id": "MongoDB","parent": "Databases","children": [],"ancestors": ["Books","Databases"],"path": ",Books,Databases,"}`,
		"Languages":   `{"_id": "Languages","parent": "Programming","children": [],"ancestors": ["Books","Programming"],"path": ",Books,Programming,"}`,
	} {
		if got := stored(t, tr, id); got != want {
			t.Errorf("%s stored as\n%s\nwant\n%s", id, got, want)
		}
	}
	mustCheck(t, tr)
	// Out to a root and back under a leaf.
	if err := tr.Move(ctx, "Databases", nil); err != nil {
		t.Fatal(err)
	}
	if got, want := stored(t, tr, "dbm"), `{"_id": "dbm","parent": "Databases","children": [],"ancestors": ["Databases"],"path": ",Databases,"}`; got != want {
		t.Errorf("dbm after a move to the roots: %s", got)
	}
	if err := tr.Move(ctx, "Databases", "Languages"); err != nil {
		t.Fatal(err)
	}
	if got, want := stored(t, tr, "MongoDB"), `{"_id": "MongoDB","parent": "Databases","children": [],"ancestors": ["Books","Programming","Languages","Databases"],"path": ",Books,Programming,Languages,Databases,"}`; got != want {
		t.Errorf("MongoDB after a move under Languages: %s", got)
	}
	mustCheck(t, tr)
}

func TestMoveRefusesCycle(t *testing.T) {
	ctx := context.Background()
	tr := books(t, allKept)
	before := stored(t, tr, "Programming")
	for _, under := range []string{"Programming", "Databases", "MongoDB"} {
		if err := tr.Move(ctx, "Programming", under); !errors.Is(err, tree.ErrCycle) {
			t.Errorf("move Programming under %s: %v, want ErrCycle", under, err)
		}
	}
	if got := stored(t, tr, "Programming"); got != before {
		t.Errorf("a refused move wrote: %s", got)
	}
	if err := tr.Move(ctx, "Programming", "Nowhere"); !errors.Is(err, tree.ErrParentNotFound) {
		t.Errorf("move under a missing node: %v", err)
	}
	if err := tr.Move(ctx, "Nowhere", "Books"); !errors.Is(err, tree.ErrNotFound) {
		t.Errorf("move of a missing node: %v", err)
	}
	mustCheck(t, tr)
}

func TestDeletePolicies(t *testing.T) {
	ctx := context.Background()
	count := func(tr *tree.Tree[Category]) int64 {
		n, _ := tr.Collection().CountDocuments(ctx, bson.D{})
		return n
	}
	tr := books(t, allKept)
	if _, err := tr.Delete(ctx, "Databases"); !errors.Is(err, tree.ErrHasChildren) || count(tr) != 6 {
		t.Fatalf("refuse: %v, %d nodes", err, count(tr))
	}
	if n, err := tr.Delete(ctx, "dbm"); err != nil || n != 1 {
		t.Fatalf("refuse, leaf: %d, %v", n, err)
	}
	mustCheck(t, tr)

	cfg := allKept
	cfg.OnDelete = tree.Cascade
	tr = books(t, cfg)
	if n, err := tr.Delete(ctx, "Programming"); err != nil || n != 5 || count(tr) != 1 {
		t.Fatalf("cascade: %d, %v, %d left", n, err, count(tr))
	}
	mustCheck(t, tr)

	cfg.OnDelete = tree.Detach
	tr = books(t, cfg)
	if n, err := tr.Delete(ctx, "Programming"); err != nil || n != 1 || count(tr) != 5 {
		t.Fatalf("detach: %d, %v, %d left", n, err, count(tr))
	}
	if got, want := stored(t, tr, "MongoDB"), `{"_id": "MongoDB","parent": "Databases","children": [],"ancestors": ["Databases"],"path": ",Databases,"}`; got != want {
		t.Errorf("detached grandchild: %s", got)
	}
	if got, want := stored(t, tr, "Books"), `{"_id": "Books","parent": null,"children": [],"ancestors": [],"path": ","}`; got != want {
		t.Errorf("the deleted node's parent: %s", got)
	}
	mustCheck(t, tr)
	if _, err := tr.Delete(ctx, "Nowhere"); !errors.Is(err, tree.ErrNotFound) {
		t.Errorf("delete of a missing node: %v", err)
	}
}

func TestCheckRepair(t *testing.T) {
	ctx := context.Background()
	tr := books(t, allKept)
	c := tr.Collection()
	// A move that stopped after its parent reference: Databases is under
	// Books, nothing else was rewritten.
	if _, err := c.UpdateOne(ctx, bson.D{{Key: "_id", Value: "Databases"}}, bson.D{{Key: "$set", Value: bson.D{{Key: "parent", Value: "Books"}}}}); err != nil {
		t.Fatal(err)
	}
	res, err := tr.Check(ctx, false)
	// Books (children), Programming (children), Databases, MongoDB, dbm
	// (ancestors and path).
	if err != nil || res.Problems != 5 || res.Checked != 6 || res.Repaired != 0 {
		t.Fatalf("check: %+v, %v", res, err)
	}
	res, err = tr.Check(ctx, true)
	if err != nil || res.Repaired != 5 {
		t.Fatalf("repair: %+v, %v", res, err)
	}
	mustCheck(t, tr)
	if got, want := stored(t, tr, "dbm"), `{"_id": "dbm","parent": "Databases","children": [],"ancestors": ["Books","Databases"],"path": ",Books,Databases,"}`; got != want {
		t.Errorf("repaired dbm: %s", got)
	}
	// A dangling parent and a loop are reported, not repaired.
	if _, err := c.InsertMany(ctx, []any{
		bson.D{{Key: "_id", Value: "orphan"}, {Key: "parent", Value: "gone"}},
		bson.D{{Key: "_id", Value: "a"}, {Key: "parent", Value: "b"}},
		bson.D{{Key: "_id", Value: "b"}, {Key: "parent", Value: "a"}},
	}); err != nil {
		t.Fatal(err)
	}
	res, err = tr.Check(ctx, true)
	if err != nil || res.Problems != 3 || res.Repaired != 0 {
		t.Fatalf("check of broken chains: %+v, %v", res, err)
	}
}

// TestConcurrentInserts: many children inserted under one parent at
// once all end up in its children array ($addToSet is atomic on one
// document).
func TestConcurrentInserts(t *testing.T) {
	ctx := context.Background()
	tr := books(t, allKept)
	var wg sync.WaitGroup
	errs := make(chan error, 40)
	for i := range 40 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			errs <- tr.Insert(ctx, Category{ID: "n" + string(rune('A'+i))}, "Languages")
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Fatal(err)
		}
	}
	mustCheck(t, tr)
	var l struct {
		Children []string `bson:"children"`
	}
	if err := tr.Collection().FindOne(ctx, bson.D{{Key: "_id", Value: "Languages"}}).Decode(&l); err != nil || len(l.Children) != 40 {
		t.Fatalf("Languages has %d children, %v", len(l.Children), err)
	}
}

func TestConfigValidate(t *testing.T) {
	for _, c := range []tree.Config{
		{Parent: "_id"},
		{Parent: "a.b"},
		{Parent: "$p"},
		{Children: "parent"},
		{Ancestors: "x", Path: "x"},
		{Separator: "\x00"},
		{OnDelete: 9},
	} {
		if err := c.Validate(); !errors.Is(err, tree.ErrInvalidConfig) {
			t.Errorf("%+v: %v", c, err)
		}
	}
	tr, err := tree.New[bson.D](testenv.Database(t).Collection("c"), tree.Config{})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := tr.SubtreeByPath(context.Background(), "x"); !errors.Is(err, tree.ErrInvalidConfig) {
		t.Errorf("path read without Path: %v", err)
	}
}
