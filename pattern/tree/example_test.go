package tree_test

import (
	"context"
	"errors"
	"fmt"

	"github.com/formworkdb/formwork/engine"
	"github.com/formworkdb/formwork/internal/testenv"
	"github.com/formworkdb/formwork/pattern/tree"
)

// exampleTree opens an in-memory engine and loads the manual's
// categories into a tree keeping every representation.
func exampleTree() (*tree.Tree[Category], func()) {
	ctx := context.Background()
	db, err := engine.Open(ctx, engine.Options{})
	if err != nil {
		panic(err)
	}
	client, err := testenv.Connect(db)
	if err != nil {
		panic(err)
	}
	tr, err := tree.New[Category](client.Database("shop").Collection("categories"),
		tree.Config{Parent: "parent", Children: "children", Ancestors: "ancestors", Path: "path"})
	if err != nil {
		panic(err)
	}
	if err := tr.EnsureIndexes(ctx); err != nil {
		panic(err)
	}
	for _, e := range [][2]string{{"Programming", "Books"}, {"Databases", "Programming"}, {"Languages", "Programming"}, {"MongoDB", "Databases"}, {"dbm", "Databases"}} {
		if e[0] == "Programming" {
			tr.Insert(ctx, Category{ID: "Books"}, nil)
		}
		tr.Insert(ctx, Category{ID: e[0]}, e[1])
	}
	return tr, func() { client.Disconnect(ctx); db.Close() }
}

// ExampleNew keeps a category tree as parent references plus children,
// ancestors and a materialized path.
func ExampleNew() {
	tr, done := exampleTree()
	defer done()
	fmt.Println(tr.Name(), tr.Config().Separator)
	// Output: tree categories ,
}

// ExampleTree_Descendants walks a subtree with $graphLookup.
func ExampleTree_Descendants() {
	tr, done := exampleTree()
	defer done()
	ns, _ := tr.Descendants(context.Background(), "Programming", tree.Walk{})
	for _, n := range ns {
		fmt.Println(n.Depth, n.Doc.ID)
	}
	// Output:
	// 0 Databases
	// 0 Languages
	// 1 MongoDB
	// 1 dbm
}

// ExampleTree_Ancestors reads the breadcrumbs of a node, parent first.
func ExampleTree_Ancestors() {
	tr, done := exampleTree()
	defer done()
	ns, _ := tr.Ancestors(context.Background(), "MongoDB", tree.Walk{})
	for _, n := range ns {
		fmt.Print(n.Doc.ID, " ")
	}
	fmt.Println()
	// Output: Databases Programming Books
}

// ExampleTree_SubtreeByPath reads a subtree through the materialized
// path: one indexed prefix scan.
func ExampleTree_SubtreeByPath() {
	tr, done := exampleTree()
	defer done()
	cs, _ := tr.SubtreeByPath(context.Background(), "Programming")
	fmt.Println(ids(cs))
	fmt.Println(tr.SubtreeFilter(",Books,", "Programming"))
	// Output:
	// Databases Languages MongoDB dbm
	// {"path":{"$regex":"^,Books,Programming,"}}
}

// ExampleTree_Move moves a subtree and refuses a move under its own
// descendant.
func ExampleTree_Move() {
	tr, done := exampleTree()
	defer done()
	ctx := context.Background()
	if err := tr.Move(ctx, "Databases", "Books"); err != nil {
		panic(err)
	}
	cs, _ := tr.SubtreeByPath(ctx, "Books")
	fmt.Println(ids(cs))
	err := tr.Move(ctx, "Books", "MongoDB")
	fmt.Println(errors.Is(err, tree.ErrCycle))
	res, _ := tr.Check(ctx, false)
	fmt.Println(res.Checked, "nodes, problems:", res.Problems)
	// Output:
	// Databases Programming MongoDB dbm Languages
	// true
	// 6 nodes, problems: 0
}
