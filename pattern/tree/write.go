package tree

import (
	"context"
	"errors"
	"fmt"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo"
	"go.mongodb.org/mongo-driver/v2/mongo/options"

	"github.com/formworkdb/formwork/pattern"
)

// node is what the writes read of one node: its _id, parent, ancestors
// and path as stored.
type node struct {
	id        bson.RawValue
	parent    bson.RawValue // null (or missing) for a root
	ancestors bson.A        // as stored, when Ancestors is kept
	path      string        // as stored, when Path is kept
}

// isRoot reports whether n has no parent.
func (n node) isRoot() bool { return n.parent.Type == 0 || n.parent.Type == bson.TypeNull }

// read reads node id's tree fields; missing is ErrNotFound.
func (t *Tree[T]) read(ctx context.Context, id any) (node, error) {
	proj := bson.D{{Key: t.cfg.Parent, Value: 1}}
	if t.cfg.Ancestors != "" {
		proj = append(proj, bson.E{Key: t.cfg.Ancestors, Value: 1})
	}
	if t.cfg.Path != "" {
		proj = append(proj, bson.E{Key: t.cfg.Path, Value: 1})
	}
	raw, err := t.coll.FindOne(ctx, bson.D{{Key: "_id", Value: id}}, options.FindOne().SetProjection(proj)).Raw()
	if errors.Is(err, mongo.ErrNoDocuments) {
		return node{}, ErrNotFound
	}
	if err != nil {
		return node{}, err
	}
	n := node{id: raw.Lookup("_id"), parent: raw.Lookup(t.cfg.Parent)}
	if t.cfg.Ancestors != "" {
		if arr, ok := raw.Lookup(t.cfg.Ancestors).ArrayOK(); ok {
			vals, _ := arr.Values()
			for _, v := range vals {
				n.ancestors = append(n.ancestors, v)
			}
		}
	}
	if t.cfg.Path != "" {
		n.path, _ = raw.Lookup(t.cfg.Path).StringValueOK()
	}
	return n, nil
}

// below returns what a child of n stores: its ancestors and its path.
func (t *Tree[T]) below(n *node) (bson.A, string) {
	if n == nil {
		return bson.A{}, t.cfg.Separator
	}
	anc := append(append(bson.A{}, n.ancestors...), n.id)
	var path string
	if t.cfg.Path != "" {
		path = t.pathBelow(n.path, n.id.StringValue())
	}
	return anc, path
}

// Insert inserts doc as a child of parent (nil: a new root), setting its
// Parent and the kept Ancestors and Path from the parent's, and Children
// to an empty array; with Children kept, it then adds doc's _id to the
// parent's array ($addToSet). doc must have an _id (a string without the
// Separator when Path is kept: ErrBadID). Both writes run in one
// transaction where the deployment has them; without, a parent deleted
// between them takes the new node back. It wraps ErrParentNotFound.
func (t *Tree[T]) Insert(ctx context.Context, doc T, parent any) error {
	raw, err := bson.Marshal(doc)
	if err != nil {
		return fmt.Errorf("tree: insert: %w", err)
	}
	id := bson.Raw(raw).Lookup("_id")
	if err := t.checkID(id); err != nil {
		return fmt.Errorf("tree: insert: %w", err)
	}
	var d bson.D
	if err := bson.Unmarshal(raw, &d); err != nil {
		return fmt.Errorf("tree: insert: %w", err)
	}
	var par *node
	if parent != nil {
		p, err := t.read(ctx, parent)
		if errors.Is(err, ErrNotFound) {
			return fmt.Errorf("tree: insert %v under %v: %w", id, parent, ErrParentNotFound)
		}
		if err != nil {
			return fmt.Errorf("tree: insert: %w", err)
		}
		par = &p
	}
	anc, path := t.below(par)
	var pv any
	if par != nil {
		pv = par.id
	}
	d = setField(d, t.cfg.Parent, pv)
	if t.cfg.Children != "" {
		d = setField(d, t.cfg.Children, bson.A{})
	}
	if t.cfg.Ancestors != "" {
		d = setField(d, t.cfg.Ancestors, anc)
	}
	if t.cfg.Path != "" {
		d = setField(d, t.cfg.Path, path)
	}
	_, err = pattern.Atomic(ctx, t.coll.Database().Client(), func(ctx context.Context) error {
		if _, err := t.coll.InsertOne(ctx, d); err != nil {
			return err
		}
		if t.cfg.Children == "" || par == nil {
			return nil
		}
		res, err := t.coll.UpdateOne(ctx, bson.D{{Key: "_id", Value: par.id}},
			bson.D{{Key: "$addToSet", Value: bson.D{{Key: t.cfg.Children, Value: id}}}})
		if err != nil {
			return err
		}
		if res.MatchedCount == 0 {
			if _, err := t.coll.DeleteOne(ctx, bson.D{{Key: "_id", Value: id}}); err != nil {
				return err
			}
			return ErrParentNotFound
		}
		return nil
	})
	if err != nil {
		return fmt.Errorf("tree: insert %v: %w", id, err)
	}
	return nil
}

// setField sets d's top-level field k to v, in place or appended.
func setField(d bson.D, k string, v any) bson.D {
	for i := range d {
		if d[i].Key == k {
			d[i].Value = v
			return d
		}
	}
	return append(d, bson.E{Key: k, Value: v})
}

// maxSlice is $slice's count for "the rest of the array".
const maxSlice = 1 << 30

// Move makes newParent (nil: none, the node becomes a root) the parent of
// node id, and rewrites what the move changes: the node's Parent, the
// old and new parents' Children arrays, and the Ancestors and Path of
// the node and every descendant (one updateMany each, a pipeline that
// replaces the old prefix with the new: O(subtree) documents). It
// refuses, before writing, a new parent that is the node itself or one
// of its descendants (ErrCycle), found by walking the new parent's
// ancestors through the parent references with $graphLookup. The writes
// run in one transaction where the deployment has them (pattern.Atomic);
// without, the parent reference is written first, and a move that stops
// midway leaves derived fields that Check reports and repairs. It wraps
// ErrNotFound, ErrParentNotFound and ErrCycle.
func (t *Tree[T]) Move(ctx context.Context, id, newParent any) error {
	n, err := t.read(ctx, id)
	if err != nil {
		return fmt.Errorf("tree: move %v: %w", id, err)
	}
	var par *node
	if newParent != nil {
		p, err := t.read(ctx, newParent)
		if errors.Is(err, ErrNotFound) {
			return fmt.Errorf("tree: move %v under %v: %w", id, newParent, ErrParentNotFound)
		}
		if err != nil {
			return fmt.Errorf("tree: move: %w", err)
		}
		if key(p.id) == key(n.id) {
			return fmt.Errorf("tree: move %v under itself: %w", id, ErrCycle)
		}
		ups, err := t.ancestorIDs(ctx, p.id)
		if err != nil {
			return fmt.Errorf("tree: move: %w", err)
		}
		for _, u := range ups {
			if key(u) == key(n.id) {
				return fmt.Errorf("tree: move %v under its descendant %v: %w", id, newParent, ErrCycle)
			}
		}
		par = &p
	}
	_, err = pattern.Atomic(ctx, t.coll.Database().Client(), func(ctx context.Context) error {
		return t.move(ctx, n, par)
	})
	if err != nil {
		return fmt.Errorf("tree: move %v: %w", id, err)
	}
	return nil
}

// move writes a checked move: parent reference first (the truth), then
// Children, Ancestors and Path.
func (t *Tree[T]) move(ctx context.Context, n node, par *node) error {
	var pv any
	if par != nil {
		pv = par.id
	}
	anc, path := t.below(par)
	set := bson.D{{Key: t.cfg.Parent, Value: pv}}
	if t.cfg.Ancestors != "" {
		set = append(set, bson.E{Key: t.cfg.Ancestors, Value: anc})
	}
	if t.cfg.Path != "" {
		set = append(set, bson.E{Key: t.cfg.Path, Value: path})
	}
	if _, err := t.coll.UpdateOne(ctx, bson.D{{Key: "_id", Value: n.id}}, bson.D{{Key: "$set", Value: set}}); err != nil {
		return err
	}
	if t.cfg.Children != "" {
		if !n.isRoot() {
			if _, err := t.coll.UpdateOne(ctx, bson.D{{Key: "_id", Value: n.parent}},
				bson.D{{Key: "$pull", Value: bson.D{{Key: t.cfg.Children, Value: n.id}}}}); err != nil {
				return err
			}
		}
		if par != nil {
			if _, err := t.coll.UpdateOne(ctx, bson.D{{Key: "_id", Value: par.id}},
				bson.D{{Key: "$addToSet", Value: bson.D{{Key: t.cfg.Children, Value: n.id}}}}); err != nil {
				return err
			}
		}
	}
	if t.cfg.Ancestors != "" {
		// Each descendant keeps its ancestors from n on and takes n's new
		// ancestors in front of them.
		a := "$" + t.cfg.Ancestors
		_, err := t.coll.UpdateMany(ctx, bson.D{{Key: t.cfg.Ancestors, Value: n.id}}, mongo.Pipeline{{{Key: "$set", Value: bson.D{
			{Key: t.cfg.Ancestors, Value: bson.D{{Key: "$concatArrays", Value: bson.A{literal(anc),
				bson.D{{Key: "$slice", Value: bson.A{a, bson.D{{Key: "$indexOfArray", Value: bson.A{a, literal(n.id)}}}, maxSlice}}}}}}},
		}}}})
		if err != nil {
			return err
		}
	}
	if t.cfg.Path != "" {
		id := n.id.StringValue()
		oldBelow, newBelow := t.pathBelow(n.path, id), t.pathBelow(path, id)
		_, err := t.coll.UpdateMany(ctx, bson.D{{Key: t.cfg.Path, Value: bson.D{{Key: "$regex", Value: PathPrefix(oldBelow)}}}},
			mongo.Pipeline{{{Key: "$set", Value: bson.D{{Key: t.cfg.Path, Value: bson.D{{Key: "$replaceOne", Value: bson.D{
				{Key: "input", Value: "$" + t.cfg.Path}, {Key: "find", Value: literal(oldBelow)}, {Key: "replacement", Value: literal(newBelow)},
			}}}}}}}})
		if err != nil {
			return err
		}
	}
	return nil
}
