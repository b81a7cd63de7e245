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
// it (and applies itself to the array this refill wrote). A child write
// that finds its child outside the window writes no window, though, and
// the refill may then embed the child as it was. So, outside a
// transaction, a refill that wrote reads the children it embedded again,
// and refills again while any of them changed meanwhile. Inside the
// caller's transaction that read would see the same snapshot; the caller
// settles after its commit instead (Settle).
//
// Called without a session where the deployment has transactions, each
// attempt reads the array and the children in one transaction, so that
// a stream of concurrent inserts, each changing both, cannot make every
// attempt compare two different moments.
func (w *Window[P, C]) refill(ctx context.Context, parent any, only *bson.RawValue) (bool, error) {
	top, err := w.refillTop(ctx, parent, only)
	return top != nil, err
}

// refillTop is refill returning the copies it wrote (nil when it wrote
// nothing; an empty window is a non-nil empty slice).
func (w *Window[P, C]) refillTop(ctx context.Context, parent any, only *bson.RawValue) ([]bson.Raw, error) {
	inSession := mongo.SessionFromContext(ctx) != nil
	if only != nil && !inSession {
		// The usual case of an edit or delete: the window does not hold
		// the child, and one read says so without a transaction.
		held, err := w.holds(ctx, parent, *only)
		if err != nil || !held {
			return nil, err
		}
	}
	var wrote []bson.Raw
	for range maxAttempts {
		var r refillResult
		var err error
		if inSession {
			r, err = w.refillOnce(ctx, parent, only)
		} else {
			_, err = pattern.Atomic(ctx, w.client(), func(ctx context.Context) error {
				r, err = w.refillOnce(ctx, parent, only)
				return err
			})
		}
		if err != nil {
			return wrote, err
		}
		if !r.wrote && !r.missed {
			return wrote, nil
		}
		if r.wrote {
			wrote = r.top
			if wrote == nil {
				wrote = []bson.Raw{}
			}
			if inSession {
				return wrote, nil
			}
			ok, err := w.current(ctx, parent, r.top)
			if err != nil || ok {
				return wrote, err
			}
		}
		if err := ctx.Err(); err != nil {
			return wrote, err
		}
	}
	return wrote, ErrContention
}

// refillResult is the outcome of one refill attempt: whether it wrote
// the array, or lost its compare-and-set to another writer, and the
// copies it compared the array with.
type refillResult struct {
	wrote, missed bool
	top           []bson.Raw
}

// refillOnce is one attempt of refill.
func (w *Window[P, C]) refillOnce(ctx context.Context, parent any, only *bson.RawValue) (refillResult, error) {
	doc, err := w.parents.FindOne(ctx, bson.D{{Key: "_id", Value: parent}},
		options.FindOne().SetProjection(bson.D{{Key: w.cfg.Array, Value: 1}})).Raw()
	if errors.Is(err, mongo.ErrNoDocuments) {
		if only != nil {
			return refillResult{}, nil // the parent went away: nothing embeds the child
		}
		return refillResult{}, fmt.Errorf("%w: _id %v", ErrParentNotFound, parent)
	}
	if err != nil {
		return refillResult{}, err
	}
	stored, lerr := doc.LookupErr(w.cfg.Array)
	if only != nil && !holdsID(stored, *only) {
		return refillResult{}, nil
	}
	top, err := w.newest(ctx, parent)
	if err != nil {
		return refillResult{}, err
	}
	if sameArray(stored, top) {
		return refillResult{top: top}, nil
	}
	wrote, err := w.swapArray(ctx, parent, stored, lerr == nil, top)
	if err != nil {
		return refillResult{}, err
	}
	return refillResult{wrote: wrote, missed: !wrote, top: top}, nil
}

// swapArray sets parent's array to top while it is still stored (or,
// when had is false, still missing), and reports whether it did.
func (w *Window[P, C]) swapArray(ctx context.Context, parent any, stored bson.RawValue, had bool, top []bson.Raw) (bool, error) {
	cas := bson.D{{Key: "_id", Value: parent}}
	if had {
		cas = append(cas, bson.E{Key: w.cfg.Array, Value: stored})
	} else {
		cas = append(cas, bson.E{Key: w.cfg.Array, Value: bson.D{{Key: "$exists", Value: false}}})
	}
	res, err := w.parents.UpdateOne(ctx, cas, bson.D{{Key: "$set", Value: bson.D{{Key: w.cfg.Array, Value: rawArray(top)}}}})
	if err != nil {
		return false, err
	}
	return res.MatchedCount == 1, nil
}

// holds reports whether parent's window holds a copy with _id id (false
// for a parent that does not exist).
func (w *Window[P, C]) holds(ctx context.Context, parent any, id bson.RawValue) (bool, error) {
	arr, err := w.window(ctx, parent)
	return holdsID(arr, id), err
}

// window reads parent's array; it is the zero value when the parent or
// its array does not exist.
func (w *Window[P, C]) window(ctx context.Context, parent any) (bson.RawValue, error) {
	doc, err := w.parents.FindOne(ctx, bson.D{{Key: "_id", Value: parent}},
		options.FindOne().SetProjection(bson.D{{Key: w.cfg.Array, Value: 1}})).Raw()
	if errors.Is(err, mongo.ErrNoDocuments) {
		return bson.RawValue{}, nil
	}
	if err != nil {
		return bson.RawValue{}, err
	}
	return doc.Lookup(w.cfg.Array), nil
}

// current reports whether the children whose copies a refill embedded
// still exist, under parent, with those copies: one query by _id.
func (w *Window[P, C]) current(ctx context.Context, parent any, copies []bson.Raw) (bool, error) {
	pv, err := rawValue(parent)
	if err != nil {
		return false, err
	}
	if len(copies) == 0 {
		return true, nil
	}
	ids := make(bson.A, len(copies))
	want := make(map[string]bson.Raw, len(copies))
	for i, c := range copies {
		id := c.Lookup("_id")
		ids[i] = id
		want[string(rune(id.Type))+string(id.Value)] = c
	}
	cur, err := w.children.Find(ctx, bson.D{{Key: "_id", Value: bson.D{{Key: "$in", Value: ids}}}})
	if err != nil {
		return false, err
	}
	defer cur.Close(ctx)
	seen := 0
	for cur.Next(ctx) {
		id := cur.Current.Lookup("_id")
		c, ok := want[string(rune(id.Type))+string(id.Value)]
		if !ok {
			continue
		}
		now, err := w.copyOf(cur.Current)
		if err != nil {
			return false, err
		}
		if !sameDoc(now, c) || w.cfg.checkChild(cur.Current) != nil || !cur.Current.Lookup(w.cfg.Parent).Equal(pv) {
			return false, nil
		}
		seen++
	}
	if err := cur.Err(); err != nil {
		return false, err
	}
	return seen == len(copies), nil
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

// holdsID reports whether the stored array has an element with _id id.
func holdsID(arr bson.RawValue, id bson.RawValue) bool {
	_, ok := copyIn(arr, id)
	return ok
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

// rawValue returns v as a raw BSON value (v may already be one).
func rawValue(v any) (bson.RawValue, error) {
	if rv, ok := v.(bson.RawValue); ok {
		return rv, nil
	}
	t, data, err := bson.MarshalValue(v)
	if err != nil {
		return bson.RawValue{}, err
	}
	return bson.RawValue{Type: t, Value: data}, nil
}
