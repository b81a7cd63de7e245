package subset

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo"
	"go.mongodb.org/mongo-driver/v2/mongo/options"
)

// Add inserts child into the child collection and pushes its copy into
// its parent's subset, which keeps the newest Config.Size. child must
// hold Config.Parent and Config.Time; when it has no _id a new ObjectID
// is put first. child is not modified. Add returns the child's _id.
//
// When the parent does not exist Add deletes the child again and wraps
// ErrParentNotFound. The insert may fail with DuplicateKey (11000).
func (w *Window) Add(ctx context.Context, child bson.D) (any, error) {
	var id, parent, at any
	for _, e := range child {
		switch e.Key {
		case "_id":
			id = e.Value
		case w.cfg.Parent:
			parent = e.Value
		case w.cfg.Time:
			at = e.Value
		}
	}
	if parent == nil || at == nil {
		return nil, fmt.Errorf("subset: add: child needs %q and %q", w.cfg.Parent, w.cfg.Time)
	}
	doc := child
	if id == nil {
		id = bson.NewObjectID()
		doc = append(bson.D{{Key: "_id", Value: id}}, child...)
	}
	raw, err := bson.Marshal(doc)
	if err != nil {
		return nil, fmt.Errorf("subset: add: %w", err)
	}
	cp, err := w.copyOf(raw)
	if err != nil {
		return nil, fmt.Errorf("subset: add: %w", err)
	}
	if _, err := w.children.InsertOne(ctx, raw); err != nil {
		return nil, fmt.Errorf("subset: add: %w", err)
	}
	// Push only when the copy is absent: a refill that ran between the
	// insert and this push may have embedded it already.
	filter := bson.D{{Key: "_id", Value: parent}, {Key: w.cfg.Array + "._id", Value: bson.D{{Key: "$ne", Value: id}}}}
	push := bson.D{{Key: "$push", Value: bson.D{{Key: w.cfg.Array, Value: bson.D{
		{Key: "$each", Value: bson.A{cp}},
		{Key: "$sort", Value: w.order()},
		{Key: "$slice", Value: w.cfg.Size},
	}}}}}
	res, err := w.parents.UpdateOne(ctx, filter, push)
	if err != nil {
		return id, fmt.Errorf("subset: add: child inserted, subset not updated (run Refill): %w", err)
	}
	if res.MatchedCount == 0 {
		exists, err := w.parentExists(ctx, parent)
		if err != nil {
			return id, fmt.Errorf("subset: add: %w", err)
		}
		if !exists {
			if _, err := w.children.DeleteOne(ctx, bson.D{{Key: "_id", Value: id}}); err != nil {
				return nil, fmt.Errorf("subset: add: %w: _id %v; removing the child: %v", ErrParentNotFound, parent, err)
			}
			return nil, fmt.Errorf("subset: add: %w: _id %v", ErrParentNotFound, parent)
		}
	}
	return id, nil
}

// parentExists reports whether a parent document with _id parent exists.
func (w *Window) parentExists(ctx context.Context, parent any) (bool, error) {
	err := w.parents.FindOne(ctx, bson.D{{Key: "_id", Value: parent}},
		options.FindOne().SetProjection(bson.D{{Key: "_id", Value: 1}})).Err()
	if errors.Is(err, mongo.ErrNoDocuments) {
		return false, nil
	}
	return err == nil, err
}

// Edit applies {$set: set} to the child id and then to its copy, if the
// copy is in the subset. set may not change _id or Config.Parent (move a
// child with Delete and Add). When set changes Config.Time the subset is
// refilled, because the child may enter or leave the newest N. It wraps
// ErrChildNotFound for an unknown child.
func (w *Window) Edit(ctx context.Context, id any, set bson.D) error {
	if len(set) == 0 {
		return errors.New("subset: edit: empty $set")
	}
	var touched []string
	retime := false
	for _, e := range set {
		top, _, _ := strings.Cut(e.Key, ".")
		switch {
		case top == "_id" || top == w.cfg.Parent:
			return fmt.Errorf("subset: edit: %q cannot change; delete and add the child instead", top)
		case top == w.cfg.Time:
			retime = true
		case w.copied(top):
			touched = append(touched, top)
		}
	}
	after, err := w.children.FindOneAndUpdate(ctx, bson.D{{Key: "_id", Value: id}},
		bson.D{{Key: "$set", Value: set}}, options.FindOneAndUpdate().SetReturnDocument(options.After)).Raw()
	if errors.Is(err, mongo.ErrNoDocuments) {
		return fmt.Errorf("subset: edit: %w: _id %v", ErrChildNotFound, id)
	}
	if err != nil {
		return fmt.Errorf("subset: edit: %w", err)
	}
	parent := after.Lookup(w.cfg.Parent)
	if retime {
		if _, err := w.refill(ctx, parent, nil); err != nil {
			return fmt.Errorf("subset: edit: child updated, subset not refilled: %w", err)
		}
		return nil
	}
	if len(touched) == 0 {
		return nil
	}
	var upd, unset bson.D
	for _, f := range touched {
		path := w.cfg.Array + ".$." + f
		if v, err := after.LookupErr(f); err == nil {
			upd = append(upd, bson.E{Key: path, Value: v})
		} else {
			unset = append(unset, bson.E{Key: path, Value: ""})
		}
	}
	u := bson.D{}
	if upd != nil {
		u = append(u, bson.E{Key: "$set", Value: upd})
	}
	if unset != nil {
		u = append(u, bson.E{Key: "$unset", Value: unset})
	}
	// matchedCount 0 means the child is not among the newest N: nothing to do.
	_, err = w.parents.UpdateOne(ctx, bson.D{{Key: "_id", Value: parent}, {Key: w.cfg.Array + "._id", Value: id}}, u)
	if err != nil {
		return fmt.Errorf("subset: edit: child updated, copy not (run Refill): %w", err)
	}
	return nil
}

// Delete deletes the child id and, when its copy is in the subset,
// refills the subset from the child collection, so that it holds N
// copies again while the parent has N children. A $pull alone would
// leave N-1. It wraps ErrChildNotFound for an unknown child.
func (w *Window) Delete(ctx context.Context, id any) error {
	gone, err := w.children.FindOneAndDelete(ctx, bson.D{{Key: "_id", Value: id}},
		options.FindOneAndDelete().SetProjection(bson.D{{Key: w.cfg.Parent, Value: 1}})).Raw()
	if errors.Is(err, mongo.ErrNoDocuments) {
		return fmt.Errorf("subset: delete: %w: _id %v", ErrChildNotFound, id)
	}
	if err != nil {
		return fmt.Errorf("subset: delete: %w", err)
	}
	if _, err := w.refill(ctx, gone.Lookup(w.cfg.Parent), gone.Lookup("_id")); err != nil {
		return fmt.Errorf("subset: delete: child deleted, subset not refilled: %w", err)
	}
	return nil
}

// Refill rebuilds the subset of parent from the child collection and
// reports whether it changed. It is the repair of one parent. It wraps
// ErrParentNotFound for an unknown parent and ErrContention when the
// array kept changing under it.
func (w *Window) Refill(ctx context.Context, parent any) (bool, error) {
	changed, err := w.refill(ctx, parent, nil)
	if err != nil {
		return false, fmt.Errorf("subset: refill: %w", err)
	}
	return changed, nil
}

// refill replaces the parent's array with the newest N copies read from
// the child collection, by compare-and-set against the array as read.
// When only is set, the refill happens only while the array holds a copy
// with that _id (the delete path); otherwise it happens when the array
// differs from the newest N.
func (w *Window) refill(ctx context.Context, parent any, only any) (bool, error) {
	for range maxAttempts {
		doc, err := w.parents.FindOne(ctx, bson.D{{Key: "_id", Value: parent}},
			options.FindOne().SetProjection(bson.D{{Key: w.cfg.Array, Value: 1}})).Raw()
		if errors.Is(err, mongo.ErrNoDocuments) {
			if only != nil {
				return false, nil // the parent went away: nothing embeds the child
			}
			return false, fmt.Errorf("%w: _id %v", ErrParentNotFound, parent)
		}
		if err != nil {
			return false, err
		}
		stored, lerr := doc.LookupErr(w.cfg.Array)
		if only != nil && !holds(stored, only) {
			return false, nil
		}
		top, err := w.newest(ctx, parent)
		if err != nil {
			return false, err
		}
		if lerr == nil && sameArray(stored, top) {
			return false, nil
		}
		cas := bson.D{{Key: "_id", Value: parent}}
		if lerr == nil {
			cas = append(cas, bson.E{Key: w.cfg.Array, Value: stored})
		} else {
			cas = append(cas, bson.E{Key: w.cfg.Array, Value: bson.D{{Key: "$exists", Value: false}}})
		}
		arr := bson.A{}
		for _, c := range top {
			arr = append(arr, c)
		}
		res, err := w.parents.UpdateOne(ctx, cas, bson.D{{Key: "$set", Value: bson.D{{Key: w.cfg.Array, Value: arr}}}})
		if err != nil {
			return false, err
		}
		if res.MatchedCount == 1 {
			return true, nil
		}
	}
	return false, ErrContention
}

// newest reads the copies of the newest N children of parent, in array
// order, through the {Parent, Time, _id} index.
func (w *Window) newest(ctx context.Context, parent any) ([]bson.Raw, error) {
	cur, err := w.children.Find(ctx, bson.D{{Key: w.cfg.Parent, Value: parent}},
		options.Find().SetSort(w.order()).SetLimit(int64(w.cfg.Size)))
	if err != nil {
		return nil, err
	}
	defer cur.Close(ctx)
	var top []bson.Raw
	for cur.Next(ctx) {
		c, err := w.copyOf(cur.Current)
		if err != nil {
			return nil, err
		}
		top = append(top, c)
	}
	return top, cur.Err()
}

// holds reports whether the stored array has an element with _id id.
func holds(arr bson.RawValue, id any) bool {
	vals, ok := arr.ArrayOK()
	if !ok {
		return false
	}
	want, ok := id.(bson.RawValue)
	if !ok {
		return false
	}
	elems, _ := vals.Values()
	for _, e := range elems {
		if d, ok := e.DocumentOK(); ok && d.Lookup("_id").Equal(want) {
			return true
		}
	}
	return false
}

// sameArray reports whether the stored array holds exactly the copies in
// top, in order; within a copy the field order does not matter.
func sameArray(stored bson.RawValue, top []bson.Raw) bool {
	arr, ok := stored.ArrayOK()
	if !ok {
		return false
	}
	elems, err := arr.Values()
	if err != nil || len(elems) != len(top) {
		return false
	}
	for i, e := range elems {
		d, ok := e.DocumentOK()
		if !ok || !sameDoc(d, top[i]) {
			return false
		}
	}
	return true
}

// sameDoc compares two documents field by field, ignoring field order;
// values must have the same BSON type and bytes.
func sameDoc(a, b bson.Raw) bool {
	ae, err1 := a.Elements()
	be, err2 := b.Elements()
	if err1 != nil || err2 != nil || len(ae) != len(be) {
		return false
	}
	for _, e := range ae {
		v, err := b.LookupErr(e.Key())
		if err != nil || !v.Equal(e.Value()) {
			return false
		}
	}
	return true
}
