package outlier

import (
	"context"
	"errors"
	"fmt"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo"
)

// Parent is a parent as read.
type Parent[P, E any] struct {
	// Doc is the parent document as stored, decoded into the user's
	// type (with the list, counter and flag where P has fields for
	// them).
	Doc P
	// Elements are the embedded elements and, from GetAll on a parent
	// with overflow, the overflow elements after them, oldest bucket
	// first.
	Elements []E
	// Count is the stored counter: the total of elements.
	Count int
	// HasOverflow is the stored flag.
	HasOverflow bool
	// OverflowRead reports whether the overflow collection was queried.
	OverflowRead bool
}

// Get reads the parent with _id id, one document: its fields, the
// embedded elements (at most Threshold), the counter and the flag. It
// returns ErrParentNotFound, wrapped, when there is none.
func (s *Store[P, E]) Get(ctx context.Context, id any) (Parent[P, E], error) {
	p, err := s.get(ctx, id)
	if err != nil {
		return Parent[P, E]{}, fmt.Errorf("outlier: get: %w", err)
	}
	return p, nil
}

// GetAll is Get followed, only when the parent's flag is set, by a read of
// its overflow buckets; Elements then holds every element.
func (s *Store[P, E]) GetAll(ctx context.Context, id any) (Parent[P, E], error) {
	p, err := s.get(ctx, id)
	if err != nil {
		return Parent[P, E]{}, fmt.Errorf("outlier: get all: %w", err)
	}
	if !p.HasOverflow {
		return p, nil
	}
	more, err := s.overflow.All(ctx, id)
	if err != nil {
		return Parent[P, E]{}, fmt.Errorf("outlier: get all: %w", err)
	}
	p.Elements = append(p.Elements, more...)
	p.OverflowRead = true
	return p, nil
}

func (s *Store[P, E]) get(ctx context.Context, id any) (Parent[P, E], error) {
	var p Parent[P, E]
	doc, err := s.parents.FindOne(ctx, bson.D{{Key: "_id", Value: id}}).Raw()
	if errors.Is(err, mongo.ErrNoDocuments) {
		return p, fmt.Errorf("parent %v: %w", id, ErrParentNotFound)
	}
	if err != nil {
		return p, err
	}
	if err := bson.Unmarshal(doc, &p.Doc); err != nil {
		return p, fmt.Errorf("parent %v: %w", id, err)
	}
	if v, err := doc.LookupErr(s.cfg.Count); err == nil {
		n, ok := v.AsInt64OK()
		if !ok {
			return p, fmt.Errorf("parent %v: %s is %v, not a number", id, s.cfg.Count, v.Type)
		}
		p.Count = int(n)
	}
	if v, err := doc.LookupErr(s.cfg.Flag); err == nil {
		p.HasOverflow = v.Type == bson.TypeBoolean && v.Boolean()
	}
	v, err := doc.LookupErr(s.cfg.List)
	if err != nil {
		return p, nil
	}
	arr, ok := v.ArrayOK()
	if !ok {
		return p, fmt.Errorf("parent %v: %s is %v, not an array", id, s.cfg.List, v.Type)
	}
	vals, err := arr.Values()
	if err != nil {
		return p, err
	}
	p.Elements = make([]E, len(vals))
	for i, rv := range vals {
		if err := rv.Unmarshal(&p.Elements[i]); err != nil {
			return p, fmt.Errorf("parent %v: element %d: %w", id, i, err)
		}
	}
	return p, nil
}
