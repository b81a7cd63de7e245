package tree

import (
	"context"
	"fmt"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo"
	"go.mongodb.org/mongo-driver/v2/mongo/options"
)

// Node is one document a graph walk found, with its distance: Depth 0 is
// a child (Descendants) or the parent (Ancestors), 1 a grandchild or the
// grandparent, and so on.
type Node[T any] struct {
	Depth int64
	Doc   T
}

// Walk narrows a $graphLookup walk.
type Walk struct {
	// Levels bounds the walk: 1 reads children (or the parent) only, 2
	// adds the next level; 0 walks to the end (maxDepth left out).
	Levels int
	// Match is restrictSearchWithMatch: a plain query filter every
	// document the walk reaches must match (no expressions; a "$x" string
	// is a literal). A document it excludes stops the walk below it.
	Match bson.D
}

// Children reads the nodes whose parent is id, in _id order: one find on
// the {<Parent>: 1} index.
func (t *Tree[T]) Children(ctx context.Context, id any) ([]T, error) {
	return t.find(ctx, "children", bson.D{{Key: t.cfg.Parent, Value: id}}, bson.D{{Key: "_id", Value: 1}})
}

// Descendants reads id's subtree (id excluded), nearest first, then in
// _id order, with one $graphLookup from id's _id along the parent
// references (connectToField <Parent>, indexed), its result unwound at
// once so a large subtree never has to fit in one 16 MiB document.
func (t *Tree[T]) Descendants(ctx context.Context, id any, w Walk) ([]Node[T], error) {
	return t.walk(ctx, "descendants", id, "$_id", "_id", t.cfg.Parent, w)
}

// Ancestors reads id's ancestors, the parent first and the root last,
// with one $graphLookup from id's parent reference along the _id index.
func (t *Tree[T]) Ancestors(ctx context.Context, id any, w Walk) ([]Node[T], error) {
	return t.walk(ctx, "ancestors", id, "$"+t.cfg.Parent, t.cfg.Parent, "_id", w)
}

// DescendantsPipeline is the aggregation Descendants runs: $match on
// _id, $graphLookup along the parent references, the $unwind the server
// folds into $graphLookup, and the documents with their depth, nearest
// first. Run it with Collection().Aggregate to add stages.
func (t *Tree[T]) DescendantsPipeline(id any, w Walk) mongo.Pipeline {
	return t.pipeline(id, "$_id", "_id", t.cfg.Parent, w)
}

// pipeline builds a $graphLookup walk from node id.
func (t *Tree[T]) pipeline(id any, start, from, to string, w Walk) mongo.Pipeline {
	gl := bson.D{{Key: "from", Value: t.coll.Name()}, {Key: "startWith", Value: start},
		{Key: "connectFromField", Value: from}, {Key: "connectToField", Value: to},
		{Key: "as", Value: "n"}, {Key: "depthField", Value: "__depth"}}
	if w.Levels > 0 {
		gl = append(gl, bson.E{Key: "maxDepth", Value: w.Levels - 1})
	}
	if len(w.Match) > 0 {
		gl = append(gl, bson.E{Key: "restrictSearchWithMatch", Value: w.Match})
	}
	return mongo.Pipeline{
		{{Key: "$match", Value: bson.D{{Key: "_id", Value: id}}}},
		{{Key: "$graphLookup", Value: gl}},
		{{Key: "$unwind", Value: "$n"}},
		{{Key: "$replaceRoot", Value: bson.D{{Key: "newRoot", Value: bson.D{{Key: "depth", Value: "$n.__depth"}, {Key: "doc", Value: "$n"}}}}}},
		{{Key: "$unset", Value: "doc.__depth"}},
		{{Key: "$sort", Value: bson.D{{Key: "depth", Value: 1}, {Key: "doc._id", Value: 1}}}},
	}
}

// walk runs a $graphLookup from node id and returns what it reached.
func (t *Tree[T]) walk(ctx context.Context, verb string, id any, start, from, to string, w Walk) ([]Node[T], error) {
	cur, err := t.coll.Aggregate(ctx, t.pipeline(id, start, from, to, w))
	if err != nil {
		return nil, fmt.Errorf("tree: %s of %v: %w", verb, id, err)
	}
	defer cur.Close(ctx)
	var out []Node[T]
	for cur.Next(ctx) {
		var n Node[T]
		n.Depth, _ = cur.Current.Lookup("depth").AsInt64OK()
		if err := cur.Current.Lookup("doc").Unmarshal(&n.Doc); err != nil {
			return nil, fmt.Errorf("tree: %s of %v: %w", verb, id, err)
		}
		out = append(out, n)
	}
	if err := cur.Err(); err != nil {
		return nil, fmt.Errorf("tree: %s of %v: %w", verb, id, err)
	}
	return out, nil
}

// SubtreeByPath reads id's descendants through the materialized path, in
// path then _id order (every node after its ancestors): one find with the anchored, escaped prefix
// regex {<Path>: /^<id's path><id><sep>/}, an index range scan of the
// {<Path>: 1} index that examines one key per descendant. It needs Path
// kept (ErrInvalidConfig otherwise) and wraps ErrNotFound.
func (t *Tree[T]) SubtreeByPath(ctx context.Context, id string) ([]T, error) {
	if t.cfg.Path == "" {
		return nil, fmt.Errorf("tree: subtree by path: %w: Path is not kept", ErrInvalidConfig)
	}
	n, err := t.read(ctx, id)
	if err != nil {
		return nil, fmt.Errorf("tree: subtree by path of %v: %w", id, err)
	}
	return t.find(ctx, "subtree by path", t.SubtreeFilter(n.path, id), bson.D{{Key: t.cfg.Path, Value: 1}, {Key: "_id", Value: 1}})
}

// SubtreeFilter is the query for the descendants of the node id whose
// own path is path: {<Path>: {$regex: "^" + QuoteMeta(path + id + sep)}}.
func (t *Tree[T]) SubtreeFilter(path, id string) bson.D {
	return bson.D{{Key: t.cfg.Path, Value: bson.D{{Key: "$regex", Value: PathPrefix(t.pathBelow(path, id))}}}}
}

// SubtreeByAncestors reads id's descendants through the ancestors
// arrays, in _id order: one find {<Ancestors>: id} on the multikey
// {<Ancestors>: 1} index. It needs Ancestors kept.
func (t *Tree[T]) SubtreeByAncestors(ctx context.Context, id any) ([]T, error) {
	if t.cfg.Ancestors == "" {
		return nil, fmt.Errorf("tree: subtree by ancestors: %w: Ancestors is not kept", ErrInvalidConfig)
	}
	return t.find(ctx, "subtree by ancestors", bson.D{{Key: t.cfg.Ancestors, Value: id}}, bson.D{{Key: "_id", Value: 1}})
}

// find runs a find and decodes every document.
func (t *Tree[T]) find(ctx context.Context, verb string, f, sort bson.D) ([]T, error) {
	cur, err := t.coll.Find(ctx, f, options.Find().SetSort(sort))
	if err != nil {
		return nil, fmt.Errorf("tree: %s: %w", verb, err)
	}
	var out []T
	if err := cur.All(ctx, &out); err != nil {
		return nil, fmt.Errorf("tree: %s: %w", verb, err)
	}
	return out, nil
}

// ancestorIDs returns the _ids of id's ancestors along the parent
// references ($graphLookup; a cycle already stored ends the walk).
func (t *Tree[T]) ancestorIDs(ctx context.Context, id bson.RawValue) ([]bson.RawValue, error) {
	return t.walkIDs(ctx, id, "$"+t.cfg.Parent, t.cfg.Parent, "_id")
}

// subtreeIDs returns the _ids of id's descendants along the parent
// references.
func (t *Tree[T]) subtreeIDs(ctx context.Context, id bson.RawValue) ([]bson.RawValue, error) {
	return t.walkIDs(ctx, id, "$_id", "_id", t.cfg.Parent)
}

// walkIDs runs a $graphLookup and returns the _ids reached, farthest
// first (a cascade deletes leaves before their parents, so a delete that
// stops midway leaves a smaller tree, never orphans).
func (t *Tree[T]) walkIDs(ctx context.Context, id bson.RawValue, start, from, to string) ([]bson.RawValue, error) {
	cur, err := t.coll.Aggregate(ctx, mongo.Pipeline{
		{{Key: "$match", Value: bson.D{{Key: "_id", Value: id}}}},
		{{Key: "$graphLookup", Value: bson.D{{Key: "from", Value: t.coll.Name()}, {Key: "startWith", Value: start},
			{Key: "connectFromField", Value: from}, {Key: "connectToField", Value: to}, {Key: "as", Value: "n"},
			{Key: "depthField", Value: "d"}}}},
		{{Key: "$unwind", Value: "$n"}},
		{{Key: "$project", Value: bson.D{{Key: "_id", Value: "$n._id"}, {Key: "d", Value: "$n.d"}}}},
		{{Key: "$sort", Value: bson.D{{Key: "d", Value: -1}}}},
	})
	if err != nil {
		return nil, err
	}
	defer cur.Close(ctx)
	var out []bson.RawValue
	for cur.Next(ctx) {
		v := cur.Current.Lookup("_id")
		v.Value = append([]byte(nil), v.Value...)
		out = append(out, v)
	}
	return out, cur.Err()
}
