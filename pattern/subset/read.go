package subset

import (
	"context"
	"errors"
	"fmt"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo"
	"go.mongodb.org/mongo-driver/v2/mongo/options"
)

// Parent reads the parent id, window included, into a P: the product
// page's one read (P's field tagged with Config.Array decodes the
// window, newest first). It wraps ErrParentNotFound.
func (w *Window[P, C]) Parent(ctx context.Context, id any) (P, error) {
	var out P
	err := w.parents.FindOne(ctx, bson.D{{Key: "_id", Value: id}}).Decode(&out)
	if errors.Is(err, mongo.ErrNoDocuments) {
		return out, fmt.Errorf("subset: parent: %w: _id %v", ErrParentNotFound, id)
	}
	if err != nil {
		return out, fmt.Errorf("subset: parent: %w", err)
	}
	return out, nil
}

// Recent returns the copies of parent's newest children, newest first,
// reading only the parent's window. A copy lacks Config.Parent (and,
// with Config.Fields, the fields not copied). It wraps ErrParentNotFound.
func (w *Window[P, C]) Recent(ctx context.Context, parent any) ([]C, error) {
	doc, err := w.parents.FindOne(ctx, bson.D{{Key: "_id", Value: parent}},
		options.FindOne().SetProjection(bson.D{{Key: w.cfg.Array, Value: 1}})).Raw()
	if errors.Is(err, mongo.ErrNoDocuments) {
		return nil, fmt.Errorf("subset: recent: %w: _id %v", ErrParentNotFound, parent)
	}
	if err != nil {
		return nil, fmt.Errorf("subset: recent: %w", err)
	}
	arr, ok := doc.Lookup(w.cfg.Array).ArrayOK()
	if !ok {
		return nil, nil
	}
	vals, err := arr.Values()
	if err != nil {
		return nil, fmt.Errorf("subset: recent: %w", err)
	}
	out := make([]C, 0, len(vals))
	for _, v := range vals {
		var c C
		if err := v.Unmarshal(&c); err != nil {
			return nil, fmt.Errorf("subset: recent: %w", err)
		}
		out = append(out, c)
	}
	return out, nil
}

// Cursor is the position after which a page starts: the Time and _id of
// the last child of the previous page. The zero Cursor starts at the
// newest child.
type Cursor struct {
	Time bson.RawValue
	ID   bson.RawValue
}

// Page is one page of a parent's children, newest first.
type Page[C any] struct {
	// Children are the whole child documents of this page.
	Children []C
	// Next starts the following page; nil on the last page.
	Next *Cursor
}

// Page returns up to limit children of parent that come after the cursor
// in (Time desc, _id desc) order, leaving out children that break the
// time rule (Check reports those): keyset pagination over the
// {Parent, Time, _id} index, so that every page costs limit index entries
// whatever its depth, and children sharing a Time are neither repeated
// nor skipped. limit must be positive.
func (w *Window[P, C]) Page(ctx context.Context, parent any, after Cursor, limit int) (Page[C], error) {
	if limit <= 0 {
		return Page[C]{}, fmt.Errorf("subset: page: limit %d must be positive", limit)
	}
	filter := w.childrenOf(parent)
	if after.ID.Type != 0 {
		filter[1].Value = append(filter[1].Value.(bson.D), bson.E{Key: "$lte", Value: after.Time})
		filter = append(filter,
			bson.E{Key: "$nor", Value: bson.A{bson.D{
				{Key: w.cfg.Time, Value: after.Time},
				{Key: "_id", Value: bson.D{{Key: "$gte", Value: after.ID}}},
			}}})
	}
	cur, err := w.children.Find(ctx, filter, options.Find().SetSort(w.order()).SetLimit(int64(limit)+1))
	if err != nil {
		return Page[C]{}, fmt.Errorf("subset: page: %w", err)
	}
	defer cur.Close(ctx)
	var p Page[C]
	var last bson.Raw
	for cur.Next(ctx) {
		if len(p.Children) == limit {
			p.Next = &Cursor{Time: last.Lookup(w.cfg.Time), ID: last.Lookup("_id")}
			break
		}
		var c C
		if err := cur.Decode(&c); err != nil {
			return Page[C]{}, fmt.Errorf("subset: page: %w", err)
		}
		p.Children = append(p.Children, c)
		last = append(last[:0], cur.Current...)
	}
	if err := cur.Err(); err != nil {
		return Page[C]{}, fmt.Errorf("subset: page: %w", err)
	}
	return p, nil
}
