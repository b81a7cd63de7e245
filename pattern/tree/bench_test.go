package tree_test

import (
	"context"
	"fmt"
	"testing"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo"

	"github.com/formworkdb/formwork/internal/testenv"
	"github.com/formworkdb/formwork/pattern/tree"
)

// benchTree loads a tree of the given fanout, levels below the root "r",
// with every representation kept.
func benchTree(b *testing.B, fanout, levels int) (*tree.Tree[Category], *testenv.Counter) {
	b.Helper()
	ctx := context.Background()
	db, count := testenv.Monitored(b)
	tr, err := tree.New[Category](db.Collection("categories"), allKept)
	if err != nil {
		b.Fatal(err)
	}
	if err := tr.EnsureIndexes(ctx); err != nil {
		b.Fatal(err)
	}
	if err := tr.Insert(ctx, Category{ID: "r"}, nil); err != nil {
		b.Fatal(err)
	}
	level := []string{"r"}
	for range levels {
		var next []string
		for _, p := range level {
			for i := range fanout {
				id := fmt.Sprintf("%s-%d", p, i)
				if err := tr.Insert(ctx, Category{ID: id}, p); err != nil {
					b.Fatal(err)
				}
				next = append(next, id)
			}
		}
		level = next
	}
	count.Reset()
	return tr, count
}

// naiveDescendants is the recursive walk an application writes over
// parent references: one find per node.
func naiveDescendants(ctx context.Context, c *mongo.Collection, id string, out *int) error {
	cur, err := c.Find(ctx, bson.D{{Key: "parent", Value: id}})
	if err != nil {
		return err
	}
	var kids []Category
	if err := cur.All(ctx, &kids); err != nil {
		return err
	}
	for _, k := range kids {
		*out++
		if err := naiveDescendants(ctx, c, k.ID, out); err != nil {
			return err
		}
	}
	return nil
}

// BenchmarkDescendants reads the subtree of one child of the root (110
// nodes at fanout 10, 3 levels below the root): the naive recursive
// walk, $graphLookup, the materialized path and the ancestors array.
func BenchmarkDescendants(b *testing.B) {
	for _, form := range []string{"naive", "graphLookup", "path", "ancestors"} {
		b.Run("form="+form, func(b *testing.B) {
			ctx := context.Background()
			tr, count := benchTree(b, 10, 3)
			for b.Loop() {
				n := 0
				var err error
				switch form {
				case "naive":
					err = naiveDescendants(ctx, tr.Collection(), "r-0", &n)
				case "graphLookup":
					var ns []tree.Node[Category]
					ns, err = tr.Descendants(ctx, "r-0", tree.Walk{})
					n = len(ns)
				case "path":
					var cs []Category
					cs, err = tr.SubtreeByPath(ctx, "r-0")
					n = len(cs)
				case "ancestors":
					var cs []Category
					cs, err = tr.SubtreeByAncestors(ctx, "r-0")
					n = len(cs)
				}
				if err != nil || n != 110 {
					b.Fatalf("%d descendants, %v", n, err)
				}
			}
			b.ReportMetric(float64(count.Commands())/float64(b.N), "roundtrips/op")
		})
	}
}

// BenchmarkMove moves a 111-node subtree back and forth between two
// parents: with parent references only it is one write; keeping
// children, ancestors and paths rewrites the whole subtree.
func BenchmarkMove(b *testing.B) {
	for _, form := range []string{"parentOnly", "allKept"} {
		b.Run("form="+form, func(b *testing.B) {
			ctx := context.Background()
			tr, count := benchTree(b, 10, 3)
			if form == "parentOnly" {
				var err error
				tr, err = tree.New[Category](tr.Collection(), tree.Config{})
				if err != nil {
					b.Fatal(err)
				}
			}
			to := []string{"r-1", "r-2"}
			for i := 0; b.Loop(); i++ {
				if err := tr.Move(ctx, "r-0-0", to[i%2]); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(count.Commands())/float64(b.N), "roundtrips/op")
		})
	}
}
