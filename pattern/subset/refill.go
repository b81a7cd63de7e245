package subset

import (
	"context"
	"errors"
	"fmt"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo"
	"go.mongodb.org/mongo-driver/v2/mongo/options"
)

// Refill rebuilds the window of parent from the child collection and
// reports whether it changed. It is the repair of one parent. It wraps
// ErrParentNotFound for an unknown parent and ErrContention when the
// array kept changing under it.
func (w *Window[P, C]) Refill(ctx context.Context, parent any) (bool, error) {
	changed, err := w.refill(ctx, parent, nil)
	if err != nil {
		return false, fmt.Errorf("subset: refill: %w", err)
	}
	return changed, nil
}

// refill replaces the parent's array with the newest N copies read from
// the child collection, by compare-and-set against the array as read.
// When only is set, the refill happens only while the array holds a copy
// with that _id (the delete path; a missing parent is then no error);
// otherwise it happens when the array differs from the newest N.
//
// The array is read before the children: a child write that the children
// read misses is followed by its own window write, which either lands
// before this compare-and-set (which then fails and reads again) or after
// it (and applies itself to the array this refill wrote).
func (w *Window[P, C]) refill(ctx context.Context, parent any, only *bson.RawValue) (bool, error) {
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
		if only != nil && !holds(stored, *only) {
			return false, nil
		}
		top, err := w.newest(ctx, parent)
		if err != nil {
			return false, err
		}
		if sameArray(stored, top) {
			return false, nil
		}
		cas := bson.D{{Key: "_id", Value: parent}}
		if lerr == nil {
			cas = append(cas, bson.E{Key: w.cfg.Array, Value: stored})
		} else {
			cas = append(cas, bson.E{Key: w.cfg.Array, Value: bson.D{{Key: "$exists", Value: false}}})
		}
		res, err := w.parents.UpdateOne(ctx, cas, bson.D{{Key: "$set", Value: bson.D{{Key: w.cfg.Array, Value: rawArray(top)}}}})
		if err != nil {
			return false, err
		}
		if res.MatchedCount == 1 {
			return true, nil
		}
		if err := ctx.Err(); err != nil {
			return false, err
		}
	}
	return false, ErrContention
}

// rawArray turns copies into an array value.
func rawArray(docs []bson.Raw) bson.A {
	arr := make(bson.A, len(docs))
	for i, d := range docs {
		arr[i] = d
	}
	return arr
}

// newest reads the copies of the newest N children of parent, in array
// order, through the {Parent, Time, _id} index.
func (w *Window[P, C]) newest(ctx context.Context, parent any) ([]bson.Raw, error) {
	cur, err := w.children.Find(ctx, w.childrenOf(parent),
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

// childrenOf filters the children of parent that keep the time rule:
// {<Parent>: parent, <Time>: {$gte: <least value of TimeType>}}.
func (w *Window[P, C]) childrenOf(parent any) bson.D {
	return bson.D{{Key: w.cfg.Parent, Value: parent}, {Key: w.cfg.Time, Value: bson.D{{Key: "$gte", Value: w.cfg.timeFloor()}}}}
}

// holds reports whether the stored array has an element with _id id.
func holds(arr bson.RawValue, id bson.RawValue) bool {
	vals, ok := arr.ArrayOK()
	if !ok {
		return false
	}
	elems, _ := vals.Values()
	for _, e := range elems {
		if d, ok := e.DocumentOK(); ok && d.Lookup("_id").Equal(id) {
			return true
		}
	}
	return false
}

// sameArray reports whether the stored array holds exactly the copies in
// top, in order; within a copy the field order does not matter. A
// missing or null array equals an empty one.
func sameArray(stored bson.RawValue, top []bson.Raw) bool {
	if stored.Type == 0 || stored.Type == bson.TypeNull {
		return len(top) == 0
	}
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
