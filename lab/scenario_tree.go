package lab

import (
	"fmt"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo"

	"github.com/formworkdb/formwork/pattern/tree"
)

// treeScenario: a shop's category tree. The category page lists every
// product category below the one shown. Naive: parent references only,
// walked by the application with one find per category. Tree: parent
// references plus ancestors arrays and materialized paths, so a subtree
// is one anchored prefix scan; moving a subtree rewrites every
// descendant, and moving a category under its own descendant is refused.
var treeScenario = scenario{
	pattern: "tree",
	title:   "a category tree: the category page lists every category below",
	steps:   5,
	run:     runTree,
}

// runTree generates the scenario's data, loads it in both forms and
// measures them.
func runTree(e *env) ([]Metric, []Latency, error) {
	ctx, g := e.ctx, e.gen
	// A root, then levels whose fanout shrinks with depth.
	fanouts := []int{e.n(8, 3), 6, 5, 4}
	type node struct{ id, parent string }
	nodes := []node{{id: "root"}}
	level := []string{"root"}
	for depth, f := range fanouts {
		var next []string
		for _, p := range level {
			kids := 1 + g.intn(f)
			if depth == 0 {
				kids = f // at least three first-level categories to move between
			}
			for range kids {
				id := fmt.Sprintf("c%d", len(nodes))
				nodes = append(nodes, node{id, p})
				next = append(next, id)
			}
		}
		level = next
	}
	e.step()

	naive := e.coll("naive_categories")
	if _, err := naive.Indexes().CreateOne(ctx, mongo.IndexModel{Keys: bson.D{{Key: "parent", Value: 1}}}); err != nil {
		return nil, nil, err
	}
	var docs []any
	for _, n := range nodes {
		var p any
		if n.parent != "" {
			p = n.parent
		}
		docs = append(docs, bson.D{{Key: "_id", Value: n.id}, {Key: "parent", Value: p}, {Key: "name", Value: g.words(2)}})
	}
	if _, err := naive.InsertMany(ctx, docs); err != nil {
		return nil, nil, err
	}
	tr, err := tree.New[bson.D](e.coll("categories"), tree.Config{Ancestors: "ancestors", Path: "path"})
	if err != nil {
		return nil, nil, err
	}
	if err := tr.EnsureIndexes(ctx); err != nil {
		return nil, nil, err
	}
	for i, n := range nodes {
		var p any
		if n.parent != "" {
			p = n.parent
		}
		if err := tr.Insert(ctx, docs[i].(bson.D), p); err != nil {
			return nil, nil, err
		}
	}
	e.step()

	// Pages of the first two levels' categories (the ones with subtrees).
	var tops []string
	for _, n := range nodes {
		if n.parent == "root" || (n.parent != "" && len(tops) < 40) {
			tops = append(tops, n.id)
		}
	}
	reads := e.n(100, 10)
	pages := make([]string, reads+warmup)
	for i := range pages {
		pages[i] = tops[g.intn(len(tops))]
	}
	var walk func(id string) (int, error)
	walk = func(id string) (int, error) {
		cur, err := naive.Find(ctx, bson.D{{Key: "parent", Value: id}})
		if err != nil {
			return 0, err
		}
		var kids []struct {
			ID string `bson:"_id"`
		}
		if err := cur.All(ctx, &kids); err != nil {
			return 0, err
		}
		n := len(kids)
		for _, k := range kids {
			m, err := walk(k.ID)
			if err != nil {
				return 0, err
			}
			n += m
		}
		return n, nil
	}
	naiveRead, err := e.read(reads, func(i int) error {
		_, err := walk(pages[i])
		return err
	})
	if err != nil {
		return nil, nil, err
	}
	patRead, err := e.read(reads, func(i int) error {
		_, err := tr.SubtreeByPath(ctx, pages[i])
		return err
	})
	if err != nil {
		return nil, nil, err
	}
	e.step()

	// Move a second-level category back and forth between two first-level
	// ones.
	var movers, targets []string
	for _, n := range nodes {
		switch {
		case n.parent == "root":
			targets = append(targets, n.id)
		case len(targets) > 0 && n.parent == targets[0]:
			movers = append(movers, n.id)
		}
	}
	moves := e.n(40, 4)
	moveTo := func(i int) (string, string) {
		return movers[i%len(movers)], targets[(i/len(movers)+1)%len(targets)]
	}
	naiveMove, err := e.run(moves, false, func(i int) error {
		id, to := moveTo(i)
		_, err := naive.UpdateOne(ctx, bson.D{{Key: "_id", Value: id}}, bson.D{{Key: "$set", Value: bson.D{{Key: "parent", Value: to}}}})
		return err
	})
	if err != nil {
		return nil, nil, err
	}
	patMove, err := e.run(moves, false, func(i int) error {
		id, to := moveTo(i)
		return tr.Move(ctx, id, to)
	})
	if err != nil {
		return nil, nil, err
	}
	// Moving a first-level category under its own grandchild (as the
	// tree stands after the moves, the same in both forms): the naive
	// update makes a cycle, which cuts the subtree off the root.
	var top, grandchild string
	for _, t := range targets {
		below, err := tr.Descendants(ctx, t, tree.Walk{Levels: 2})
		if err != nil {
			return nil, nil, err
		}
		for _, n := range below {
			if n.Depth != 1 || grandchild != "" {
				continue
			}
			for _, el := range n.Doc {
				if id, ok := el.Value.(string); ok && el.Key == "_id" {
					top, grandchild = t, id
				}
			}
		}
	}
	cycles := 0.0
	if grandchild != "" {
		if _, err := naive.UpdateOne(ctx, bson.D{{Key: "_id", Value: top}}, bson.D{{Key: "$set", Value: bson.D{{Key: "parent", Value: grandchild}}}}); err != nil {
			return nil, nil, err
		}
		cycles = 1
	}
	patCycles := 0.0
	if grandchild != "" && tr.Move(ctx, top, grandchild) == nil {
		patCycles = 1
	}
	res, err := tr.Check(ctx, false)
	if err != nil {
		return nil, nil, err
	}
	e.step()

	nStore, err := e.storageOf("naive_categories")
	if err != nil {
		return nil, nil, err
	}
	pStore, err := e.storageOf("categories")
	if err != nil {
		return nil, nil, err
	}
	e.step()

	var ms []Metric
	ms = append(ms, readMetrics("category subtree", naiveRead, patRead)...)
	ms = append(ms, writeMetrics("move a subtree", naiveMove, patMove)...)
	ms = append(ms,
		Metric{Name: "cycles created by a move under the node's own descendant", Kind: KindAccuracy, Unit: "cycles", Better: Lower, Naive: cycles, Pattern: patCycles},
		Metric{Name: "nodes whose path or ancestors disagree with the parents after the moves", Kind: KindAccuracy, Unit: "nodes", Better: Lower, Naive: 0, Pattern: float64(res.Problems)},
	)
	ms = append(ms, storageMetrics(nStore, pStore)...)
	return ms, []Latency{
		latency("category subtree", naiveRead.opStats, patRead.opStats),
		latency("move a subtree", naiveMove, patMove),
	}, nil
}
