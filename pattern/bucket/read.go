package bucket

import (
	"context"
	"errors"
	"fmt"
	"time"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo"
	"go.mongodb.org/mongo-driver/v2/mongo/options"
)

// Cursor marks where a page ended. The zero Cursor starts at the owner's
// newest bucket. A Cursor is a plain value: it can be kept, copied and
// rebuilt from its fields (to carry it through a web page, say).
type Cursor struct {
	// OpenedAt is the openedAt of the oldest bucket read so far.
	OpenedAt time.Time
	// IDs are the _ids of the buckets read so far whose openedAt equals
	// OpenedAt; the next page excludes them instead of using a strict
	// $lt, which would skip a bucket opened in the same millisecond.
	IDs []bson.RawValue
}

// IsZero reports whether c is the zero Cursor (start at the newest).
func (c Cursor) IsZero() bool { return len(c.IDs) == 0 }

// advance returns the cursor after reading bucket in.
func (c Cursor) advance(in Info) Cursor {
	if !c.IsZero() && in.OpenedAt.Equal(c.OpenedAt) {
		ids := append(append([]bson.RawValue(nil), c.IDs...), in.ID)
		return Cursor{OpenedAt: c.OpenedAt, IDs: ids}
	}
	return Cursor{OpenedAt: in.OpenedAt, IDs: []bson.RawValue{in.ID}}
}

// Page is one page of an owner's elements.
type Page[E any] struct {
	// Elements are the page's elements, oldest first: bucket by bucket,
	// each bucket's in the order they were appended.
	Elements []E
	// Buckets are the buckets the page holds, in the order of Elements.
	// It has one bucket, or several when open buckets (transient doubles,
	// see the package documentation) were merged; it is empty when the
	// owner has no buckets older than the cursor, which ends the history.
	Buckets []Info
	// Next is the cursor for the next, older page.
	Next Cursor
	// DocsRead counts the documents the read fetched: len(Buckets), plus
	// one when the page ends in an open bucket, because the next bucket
	// has to be read to know it is not open too.
	DocsRead int
}

// Page returns the owner's page that follows after, newest first: the
// zero Cursor gives the newest page, and each Page.Next the one before
// it. A page is one bucket, except that a run of open buckets (count <
// Size) is merged into one page. Each bucket is read with
// find({owner, openedAt: {$lte: t}, _id: {$nin: seen}}).sort({openedAt: -1}).limit(1),
// an IXSCAN on {owner: 1, openedAt: -1} without a SORT stage. Buckets
// appended to after the cursor was taken are read with their current
// contents; buckets opened after it belong to newer pages and are not
// returned.
func (s *Store[E]) Page(ctx context.Context, owner any, after Cursor) (Page[E], error) {
	var p Page[E]
	var docs []bson.Raw
	cur := after
	for {
		doc, err := s.older(ctx, owner, cur)
		if err != nil {
			return Page[E]{}, fmt.Errorf("bucket: page: %w", err)
		}
		if doc == nil {
			break
		}
		p.DocsRead++
		in, err := s.decodeInfo(doc)
		if err != nil {
			return Page[E]{}, fmt.Errorf("bucket: page: %w", err)
		}
		open := in.Count < s.cfg.Size
		if len(docs) > 0 && !open {
			break // a full bucket starts the next page
		}
		docs = append(docs, doc)
		p.Buckets = append(p.Buckets, in)
		cur = cur.advance(in)
		if !open {
			break
		}
	}
	p.Next = cur
	// Oldest bucket first, so Elements read in arrival order.
	for i, j := 0, len(docs)-1; i < j; i, j = i+1, j-1 {
		docs[i], docs[j] = docs[j], docs[i]
		p.Buckets[i], p.Buckets[j] = p.Buckets[j], p.Buckets[i]
	}
	for _, doc := range docs {
		es, err := s.decodeElements(doc)
		if err != nil {
			return Page[E]{}, fmt.Errorf("bucket: page: %w", err)
		}
		p.Elements = append(p.Elements, es...)
	}
	return p, nil
}

// PageFilter returns the filter Page uses to read the bucket that follows
// cur; with sort {openedAt: -1} and limit 1 it is the keyset query.
func (s *Store[E]) PageFilter(owner any, cur Cursor) bson.D {
	f := bson.D{{Key: s.cfg.Owner, Value: owner}}
	if !cur.IsZero() {
		f = append(f,
			bson.E{Key: s.cfg.OpenedAt, Value: bson.D{{Key: "$lte", Value: cur.OpenedAt}}},
			bson.E{Key: "_id", Value: bson.D{{Key: "$nin", Value: cur.IDs}}})
	}
	return f
}

// PageSort returns the sort of the page read: {openedAt: -1}.
func (s *Store[E]) PageSort() bson.D { return bson.D{{Key: s.cfg.OpenedAt, Value: -1}} }

// older reads the newest bucket of owner after cur, or nil.
func (s *Store[E]) older(ctx context.Context, owner any, cur Cursor) (bson.Raw, error) {
	var doc bson.Raw
	err := s.coll.FindOne(ctx, s.PageFilter(owner, cur), options.FindOne().SetSort(s.PageSort())).Decode(&doc)
	if errors.Is(err, mongo.ErrNoDocuments) {
		return nil, nil
	}
	return doc, err
}

// All returns every element of the owner, oldest bucket first, in one
// query over the page index scanned backwards. It holds the whole history
// in memory; use Page for long histories.
func (s *Store[E]) All(ctx context.Context, owner any) ([]E, error) {
	opts := options.Find().SetSort(bson.D{{Key: s.cfg.OpenedAt, Value: 1}})
	c, err := s.coll.Find(ctx, bson.D{{Key: s.cfg.Owner, Value: owner}}, opts)
	if err != nil {
		return nil, fmt.Errorf("bucket: all: %w", err)
	}
	defer c.Close(ctx)
	var out []E
	for c.Next(ctx) {
		es, err := s.decodeElements(c.Current)
		if err != nil {
			return nil, fmt.Errorf("bucket: all: %w", err)
		}
		out = append(out, es...)
	}
	if err := c.Err(); err != nil {
		return nil, fmt.Errorf("bucket: all: %w", err)
	}
	return out, nil
}

// Buckets returns the stored description of every bucket of the owner,
// newest first.
func (s *Store[E]) Buckets(ctx context.Context, owner any) ([]Info, error) {
	opts := options.Find().SetSort(s.PageSort()).
		SetProjection(bson.D{{Key: s.cfg.OpenedAt, Value: 1}, {Key: s.cfg.Count, Value: 1},
			{Key: s.cfg.MinTime, Value: 1}, {Key: s.cfg.MaxTime, Value: 1}})
	c, err := s.coll.Find(ctx, bson.D{{Key: s.cfg.Owner, Value: owner}}, opts)
	if err != nil {
		return nil, fmt.Errorf("bucket: buckets: %w", err)
	}
	defer c.Close(ctx)
	var out []Info
	for c.Next(ctx) {
		in, err := s.decodeInfo(c.Current)
		if err != nil {
			return nil, fmt.Errorf("bucket: buckets: %w", err)
		}
		out = append(out, in)
	}
	if err := c.Err(); err != nil {
		return nil, fmt.Errorf("bucket: buckets: %w", err)
	}
	return out, nil
}
