package tree_test

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/formworkdb/formwork/internal/testenv"
	"github.com/formworkdb/formwork/pattern/tree"
)

// TestRandomMoves applies random moves (some under the node's own
// subtree), inserts and deletes to a tree keeping every representation,
// mirrors them in a map of parents, and checks after each step that a
// move is refused exactly when the model says it would make a cycle, and
// periodically that Check finds every representation consistent and
// SubtreeByPath agrees with the model.
func TestRandomMoves(t *testing.T) {
	ctx := context.Background()
	cfg := allKept
	cfg.OnDelete = tree.Cascade
	tr, err := tree.New[Category](testenv.Database(t).Collection("categories"), cfg)
	if err != nil {
		t.Fatal(err)
	}
	if err := tr.EnsureIndexes(ctx); err != nil {
		t.Fatal(err)
	}
	rng := rand.New(rand.NewPCG(5, 11))
	parent := map[string]string{} // "" for a root
	var ids []string
	add := func(id, p string) {
		var pv any
		if p != "" {
			pv = p
		}
		if err := tr.Insert(ctx, Category{ID: id}, pv); err != nil {
			t.Fatal(err)
		}
		parent[id] = p
		ids = append(ids, id)
	}
	under := func(a, b string) bool { // a is b or below b
		for x := a; x != ""; x = parent[x] {
			if x == b {
				return true
			}
		}
		return false
	}
	add("n0", "")
	for i := 1; i < 30; i++ {
		add(fmt.Sprint("n", i), ids[rng.IntN(len(ids))])
	}
	next := 30
	for step := range 150 {
		switch op := rng.IntN(10); {
		case op < 7 && len(ids) > 1:
			id, to := ids[rng.IntN(len(ids))], ids[rng.IntN(len(ids))]
			if rng.IntN(8) == 0 {
				to = ""
			}
			var tv any
			if to != "" {
				tv = to
			}
			err := tr.Move(ctx, id, tv)
			cycle := to != "" && under(to, id)
			switch {
			case cycle && !errors.Is(err, tree.ErrCycle):
				t.Fatalf("step %d: move %s under %s: %v, want ErrCycle", step, id, to, err)
			case !cycle && err != nil:
				t.Fatalf("step %d: move %s under %s: %v", step, id, to, err)
			case !cycle:
				parent[id] = to
			}
		case op < 9:
			add(fmt.Sprint("n", next), ids[rng.IntN(len(ids))])
			next++
		default:
			id := ids[rng.IntN(len(ids))]
			if _, err := tr.Delete(ctx, id); err != nil {
				t.Fatal(err)
			}
			var keep []string
			for _, x := range ids {
				if !under(x, id) {
					keep = append(keep, x)
				}
			}
			for _, x := range ids {
				if under(x, id) && x != id {
					delete(parent, x)
				}
			}
			delete(parent, id)
			ids = keep
		}
		if step%15 != 14 {
			continue
		}
		mustCheck(t, tr)
		for _, id := range ids {
			got, err := tr.SubtreeByPath(ctx, id)
			if err != nil {
				t.Fatal(err)
			}
			want := 0
			for _, x := range ids {
				if x != id && under(x, id) {
					want++
				}
			}
			if len(got) != want {
				t.Fatalf("step %d: subtree of %s has %d nodes, model says %d", step, id, len(got), want)
			}
		}
	}
}
