package tree

import (
	"context"
	"errors"
	"fmt"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo"

	"github.com/formworkdb/formwork/pattern"
)

// deleteBatch is how many _ids a cascade deletes per command.
const deleteBatch = 1000

// Delete deletes node id under Config.OnDelete: Refuse deletes a leaf
// and gives ErrHasChildren for a node with children; Cascade deletes the
// node and every descendant (found along the parent references with
// $graphLookup, deleted deepest first in batches of _ids, the node
// last, so a delete that stops midway leaves a smaller tree, never
// orphans); Detach makes each child a root
// (a Move to nil each) and then deletes the node. With Children kept the
// node is then pulled from its parent's array. It returns the documents
// deleted and runs in one transaction where the deployment has them. It
// wraps ErrNotFound and ErrHasChildren.
func (t *Tree[T]) Delete(ctx context.Context, id any) (int64, error) {
	n, err := t.read(ctx, id)
	if err != nil {
		return 0, fmt.Errorf("tree: delete %v: %w", id, err)
	}
	var deleted int64
	_, err = pattern.Atomic(ctx, t.coll.Database().Client(), func(ctx context.Context) error {
		deleted = 0
		switch t.cfg.OnDelete {
		case Refuse:
			err := t.coll.FindOne(ctx, bson.D{{Key: t.cfg.Parent, Value: n.id}}).Err()
			if err == nil {
				return ErrHasChildren
			}
			if !errors.Is(err, mongo.ErrNoDocuments) {
				return err
			}
		case Cascade:
			ids, err := t.subtreeIDs(ctx, n.id)
			if err != nil {
				return err
			}
			for len(ids) > 0 {
				k := min(len(ids), deleteBatch)
				batch := make(bson.A, k)
				for i := range k {
					batch[i] = ids[i]
				}
				res, err := t.coll.DeleteMany(ctx, bson.D{{Key: "_id", Value: bson.D{{Key: "$in", Value: batch}}}})
				if err != nil {
					return err
				}
				deleted += res.DeletedCount
				ids = ids[k:]
			}
		case Detach:
			kids, err := t.childIDs(ctx, n.id)
			if err != nil {
				return err
			}
			for _, c := range kids {
				cn, err := t.read(ctx, c)
				if errors.Is(err, ErrNotFound) {
					continue
				}
				if err != nil {
					return err
				}
				if err := t.move(ctx, cn, nil); err != nil {
					return err
				}
			}
		}
		res, err := t.coll.DeleteOne(ctx, bson.D{{Key: "_id", Value: n.id}})
		if err != nil {
			return err
		}
		deleted += res.DeletedCount
		if t.cfg.Children != "" && !n.isRoot() {
			_, err = t.coll.UpdateOne(ctx, bson.D{{Key: "_id", Value: n.parent}},
				bson.D{{Key: "$pull", Value: bson.D{{Key: t.cfg.Children, Value: n.id}}}})
		}
		return err
	})
	if err != nil {
		return deleted, fmt.Errorf("tree: delete %v: %w", id, err)
	}
	return deleted, nil
}

// childIDs returns the _ids of id's children.
func (t *Tree[T]) childIDs(ctx context.Context, id bson.RawValue) ([]bson.RawValue, error) {
	cur, err := t.coll.Find(ctx, bson.D{{Key: t.cfg.Parent, Value: id}})
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
