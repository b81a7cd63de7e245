package subset

import (
	"context"
	"errors"
	"fmt"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo"
	"go.mongodb.org/mongo-driver/v2/mongo/options"

	"github.com/formworkdb/formwork/pattern"
)

// Add inserts child into the child collection and pushes its copy into
// its parent's window, which keeps the newest Config.Size. child must
// hold Config.Parent and a Config.Time of Config.TimeType (else Add
// writes nothing and wraps ErrTimeType); when it has no _id a new
// ObjectID is put first. child is not modified. Add returns the child's
// _id.
//
// When the parent does not exist Add takes the child back and wraps
// ErrParentNotFound. The insert may fail with DuplicateKey (11000).
func (w *Window[P, C]) Add(ctx context.Context, child C) (any, error) {
	doc, err := pattern.WithID(child)
	if err != nil {
		return nil, fmt.Errorf("subset: add: %w", err)
	}
	if err := w.cfg.checkChild(doc); err != nil {
		return nil, fmt.Errorf("subset: add: %w", err)
	}
	id := doc.Lookup("_id")
	inserted := false
	_, err = pattern.Atomic(ctx, w.client(), func(ctx context.Context) error {
		inserted = false
		if _, err := w.children.InsertOne(ctx, doc); err != nil {
			return err
		}
		inserted = true
		return w.applyInsert(ctx, doc)
	})
	switch {
	case errors.Is(err, ErrParentNotFound):
		// Without a transaction the child is in: take it back.
		if _, derr := w.children.DeleteOne(ctx, bson.D{{Key: "_id", Value: id}}); derr != nil {
			return nil, fmt.Errorf("subset: add: %w; removing the child: %v", err, derr)
		}
		return nil, fmt.Errorf("subset: add: %w", err)
	case err != nil && inserted:
		return goValue(id), fmt.Errorf("subset: add: child inserted, window not updated (run Check with repair): %w", err)
	case err != nil:
		return nil, fmt.Errorf("subset: add: %w", err)
	}
	return goValue(id), nil
}

// AddMany is the bulk load: it inserts children with one insertMany
// (ordered) and then writes each parent's window once, one $push carrying
// the copies of all that parent's new children (per 1000), instead of
// one write per child. Every child is checked first, and every parent
// named must exist: otherwise AddMany writes nothing and wraps
// ErrTimeType or ErrParentNotFound. It returns the children's _ids, in
// order. When the insert fails part way (DuplicateKey), the children
// inserted before the failure keep their windows up to date.
func (w *Window[P, C]) AddMany(ctx context.Context, children []C) ([]any, error) {
	if len(children) == 0 {
		return nil, nil
	}
	docs := make([]any, len(children))
	raws := make([]bson.Raw, len(children))
	ids := make([]any, len(children))
	parents := bson.A{}
	seen := map[string]bool{}
	for i, c := range children {
		doc, err := pattern.WithID(c)
		if err != nil {
			return nil, fmt.Errorf("subset: add many: child %d: %w", i, err)
		}
		if err := w.cfg.checkChild(doc); err != nil {
			return nil, fmt.Errorf("subset: add many: child %d: %w", i, err)
		}
		docs[i], raws[i], ids[i] = doc, doc, goValue(doc.Lookup("_id"))
		p := doc.Lookup(w.cfg.Parent)
		if key := string(rune(p.Type)) + string(p.Value); !seen[key] {
			seen[key] = true
			parents = append(parents, p)
		}
	}
	if err := w.parentsExist(ctx, parents); err != nil {
		return nil, fmt.Errorf("subset: add many: %w", err)
	}
	inserted := false
	_, err := pattern.Atomic(ctx, w.client(), func(ctx context.Context) error {
		inserted = false
		if _, err := w.children.InsertMany(ctx, docs); err != nil {
			// An ordered insertMany stops at its first failure (say a
			// DuplicateKey): the children before it are in, and get
			// their windows, unless a transaction takes them back.
			var bwe mongo.BulkWriteException
			if errors.As(err, &bwe) && len(bwe.WriteErrors) > 0 {
				if n := bwe.WriteErrors[0].Index; n > 0 && n <= len(raws) {
					if aerr := w.insertBatch(ctx, raws[:n]); aerr != nil {
						return errors.Join(err, aerr)
					}
				}
			}
			return err
		}
		inserted = true
		return w.insertBatch(ctx, raws)
	})
	if err != nil && inserted {
		return ids, fmt.Errorf("subset: add many: children inserted, windows not all updated (run Check with repair): %w", err)
	}
	if err != nil {
		return nil, fmt.Errorf("subset: add many: %w", err)
	}
	return ids, nil
}

// parentsExist checks that every parent _id in ids exists, asking for
// them maxPush at a time.
func (w *Window[P, C]) parentsExist(ctx context.Context, ids bson.A) error {
	for start := 0; start < len(ids); start += maxPush {
		chunk := ids[start:min(start+maxPush, len(ids))]
		cur, err := w.parents.Find(ctx, bson.D{{Key: "_id", Value: bson.D{{Key: "$in", Value: chunk}}}},
			options.Find().SetProjection(bson.D{{Key: "_id", Value: 1}}))
		if err != nil {
			return err
		}
		found := map[string]bool{}
		for cur.Next(ctx) {
			v := cur.Current.Lookup("_id")
			found[string(rune(v.Type))+string(v.Value)] = true
		}
		err = cur.Err()
		cur.Close(ctx)
		if err != nil {
			return err
		}
		for _, id := range chunk {
			v := id.(bson.RawValue)
			if !found[string(rune(v.Type))+string(v.Value)] {
				return fmt.Errorf("%w: _id %v", ErrParentNotFound, v)
			}
		}
	}
	return nil
}

// Edit applies update (update operators or a pipeline) to the child id
// and brings the window up to date: the copy edited in place when the
// parent and time are unchanged, the window refilled when the time
// changed, both windows written when the parent changed (see Move). It
// returns the child as it now is and wraps ErrNotFound for an unknown
// child.
//
// An edit that leaves the child breaking the time rule (ErrTimeType) or
// naming a parent that does not exist (ErrParentNotFound) is refused:
// undone by a compare-and-set back to the document as it was (inside the
// transaction's abort where there are transactions).
func (w *Window[P, C]) Edit(ctx context.Context, id any, update any) (C, error) {
	var out C
	after, err := w.edit(ctx, id, update)
	if err != nil {
		return out, fmt.Errorf("subset: edit: %w", err)
	}
	if err := bson.Unmarshal(after, &out); err != nil {
		return out, fmt.Errorf("subset: edit: %w", err)
	}
	return out, nil
}

// Move gives the child id the parent to, and moves its copy: pushed into
// the new parent's window, the old window refilled. It wraps
// ErrParentNotFound when to does not exist (and then changes nothing)
// and ErrNotFound for an unknown child. It returns the moved child.
func (w *Window[P, C]) Move(ctx context.Context, id any, to any) (C, error) {
	var out C
	ok, err := w.parentExists(ctx, to)
	if err != nil {
		return out, fmt.Errorf("subset: move: %w", err)
	}
	if !ok {
		return out, fmt.Errorf("subset: move: %w: _id %v", ErrParentNotFound, to)
	}
	after, err := w.edit(ctx, id, bson.D{{Key: "$set", Value: bson.D{{Key: w.cfg.Parent, Value: to}}}})
	if err != nil {
		return out, fmt.Errorf("subset: move: %w", err)
	}
	if err := bson.Unmarshal(after, &out); err != nil {
		return out, fmt.Errorf("subset: move: %w", err)
	}
	return out, nil
}

// edit is Edit and Move: a compare-and-set update of the child that
// yields its exact before and after images, then the window's update.
func (w *Window[P, C]) edit(ctx context.Context, id any, update any) (bson.Raw, error) {
	var before, after bson.Raw
	_, err := pattern.Atomic(ctx, w.client(), func(ctx context.Context) error {
		b, a, err := w.swap(ctx, id, update)
		if err != nil {
			return err
		}
		before, after = b, a
		err = w.cfg.checkChild(after)
		if err == nil {
			err = w.applyUpdate(ctx, before, after)
			if err != nil && !errors.Is(err, ErrParentNotFound) {
				return fmt.Errorf("child updated, window not (run Check with repair): %w", err)
			}
		}
		if err != nil {
			return w.undo(ctx, id, before, after, err)
		}
		return nil
	})
	if err != nil {
		return after, err
	}
	return after, w.settle(ctx, pattern.Change{Op: pattern.Update, Before: before, After: after})
}

// settle runs Settle once a write of the Window's own is over, unless
// the write ran in the caller's session: the caller then settles after
// its commit.
func (w *Window[P, C]) settle(ctx context.Context, c pattern.Change) error {
	if mongo.SessionFromContext(ctx) != nil {
		return nil
	}
	return w.Settle(ctx, c)
}

// swap updates the child id only while it is as read, retrying when
// another writer got there first, and returns its before and after
// images.
func (w *Window[P, C]) swap(ctx context.Context, id any, update any) (before, after bson.Raw, err error) {
	for range maxAttempts {
		before, err = w.children.FindOne(ctx, bson.D{{Key: "_id", Value: id}}).Raw()
		if errors.Is(err, mongo.ErrNoDocuments) {
			return nil, nil, fmt.Errorf("%w: _id %v", ErrNotFound, id)
		}
		if err != nil {
			return nil, nil, err
		}
		after, err = w.children.FindOneAndUpdate(ctx, pattern.Unchanged(id, before), update,
			options.FindOneAndUpdate().SetReturnDocument(options.After)).Raw()
		if errors.Is(err, mongo.ErrNoDocuments) {
			if err := ctx.Err(); err != nil {
				return nil, nil, err
			}
			continue
		}
		if err != nil {
			return nil, nil, err
		}
		return before, after, nil
	}
	return nil, nil, fmt.Errorf("child %v: %w", id, ErrContention)
}

// undo puts the child back as it was before a refused edit, while it is
// still as the edit left it, and returns why the edit was refused.
func (w *Window[P, C]) undo(ctx context.Context, id any, before, after bson.Raw, why error) error {
	err := w.children.FindOneAndReplace(ctx, pattern.Unchanged(id, after), before).Err()
	if errors.Is(err, mongo.ErrNoDocuments) {
		return fmt.Errorf("%w (the child changed again since; not undone: run Check)", why)
	}
	if err != nil {
		return fmt.Errorf("%w (undoing: %v)", why, err)
	}
	return fmt.Errorf("refused, child restored: %w", why)
}

// Delete deletes the child id and, when its copy is in the window,
// refills the window from the child collection, so that it holds N
// copies again while the parent has N children (a $pull alone would
// leave N-1). It returns the deleted child and wraps ErrNotFound.
func (w *Window[P, C]) Delete(ctx context.Context, id any) (C, error) {
	var out C
	var gone bson.Raw
	var top []bson.Raw
	deleted := false
	transacted, err := pattern.Atomic(ctx, w.client(), func(ctx context.Context) error {
		deleted = false
		var err error
		gone, err = w.children.FindOneAndDelete(ctx, bson.D{{Key: "_id", Value: id}}).Raw()
		if errors.Is(err, mongo.ErrNoDocuments) {
			return fmt.Errorf("%w: _id %v", ErrNotFound, id)
		}
		if err != nil {
			return err
		}
		deleted = true
		top, err = w.applyDelete(ctx, gone)
		return err
	})
	if err != nil && deleted {
		return out, fmt.Errorf("subset: delete: child deleted, window not refilled (run Check with repair): %w", err)
	}
	if err != nil {
		return out, fmt.Errorf("subset: delete: %w", err)
	}
	if transacted {
		// Settle, knowing whether the transaction refilled the window.
		if err := w.settleDelete(ctx, gone, top, true); err != nil {
			return out, fmt.Errorf("subset: delete: %w", err)
		}
	}
	if err := bson.Unmarshal(gone, &out); err != nil {
		return out, fmt.Errorf("subset: delete: %w", err)
	}
	return out, nil
}

// DeleteParent deletes the parent id, and with it its window, doing with
// its children what Config.OnParentDelete says:
//
//	Refuse:  countDocuments({<Parent>: id}, {limit: 1}) must be 0 (else
//	         ErrHasChildren), then deleteOne({_id: id})
//	Cascade: deleteOne({_id: id}), then deleteMany({<Parent>: id})
//	Detach:  deleteOne({_id: id}); the children stay
//
// It returns the number of children deleted and wraps ErrParentNotFound.
// The writes run in one transaction where the deployment has them.
// Without, the parent goes first: an Add racing the delete finds no
// parent and takes its child back, and a cascade cut short leaves
// children that Check reports and Repair deletes.
//
// Children deleted by a cascade are not handed to other copies kept by a
// pattern.Source on the same collection; copies kept in the parent go
// with it.
func (w *Window[P, C]) DeleteParent(ctx context.Context, id any) (int64, error) {
	var n int64
	_, err := pattern.Atomic(ctx, w.client(), func(ctx context.Context) error {
		n = 0
		link := bson.D{{Key: w.cfg.Parent, Value: id}}
		if w.cfg.OnParentDelete == Refuse {
			kids, err := w.children.CountDocuments(ctx, link, options.Count().SetLimit(1))
			if err != nil {
				return err
			}
			if kids > 0 {
				return fmt.Errorf("%w: _id %v", ErrHasChildren, id)
			}
		}
		res, err := w.parents.DeleteOne(ctx, bson.D{{Key: "_id", Value: id}})
		if err != nil {
			return err
		}
		if res.DeletedCount == 0 {
			return fmt.Errorf("%w: _id %v", ErrParentNotFound, id)
		}
		if w.cfg.OnParentDelete != Cascade {
			return nil
		}
		dm, err := w.children.DeleteMany(ctx, link)
		if err != nil {
			return fmt.Errorf("parent deleted, children not (run Check with repair): %w", err)
		}
		n = dm.DeletedCount
		return nil
	})
	if err != nil {
		return n, fmt.Errorf("subset: delete parent: %w", err)
	}
	return n, nil
}

// goValue returns a raw value as a Go value (an _id for the caller).
func goValue(v bson.RawValue) any {
	var out any
	_ = v.Unmarshal(&out)
	return out
}
