package attribute

import (
	"context"
	"errors"
	"fmt"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo"
	"go.mongodb.org/mongo-driver/v2/mongo/options"
)

// Get returns document id. It wraps ErrNotFound when there is none.
func (s *Store[D]) Get(ctx context.Context, id any) (D, error) {
	var out D
	err := s.coll.FindOne(ctx, bson.D{{Key: "_id", Value: id}}).Decode(&out)
	if errors.Is(err, mongo.ErrNoDocuments) {
		return out, fmt.Errorf("attribute: get: document %v: %w", id, ErrNotFound)
	}
	if err != nil {
		return out, fmt.Errorf("attribute: get: %w", err)
	}
	return out, nil
}

// Attrs returns document id's attributes in stored order, reading the
// attribute field only. It wraps ErrNotFound when there is no document.
func (s *Store[D]) Attrs(ctx context.Context, id any) ([]Attr, error) {
	doc, err := s.coll.FindOne(ctx, bson.D{{Key: "_id", Value: id}},
		options.FindOne().SetProjection(bson.D{{Key: s.cfg.Field, Value: 1}})).Raw()
	if errors.Is(err, mongo.ErrNoDocuments) {
		return nil, fmt.Errorf("attribute: attrs: document %v: %w", id, ErrNotFound)
	}
	if err != nil {
		return nil, fmt.Errorf("attribute: attrs: %w", err)
	}
	v, err := doc.LookupErr(s.cfg.Field)
	if err != nil {
		return nil, nil
	}
	attrs, err := s.decodeField(v)
	if err != nil {
		return nil, fmt.Errorf("attribute: attrs: %v: %w", id, err)
	}
	return attrs, nil
}

// Value returns the value of document id's attribute name, reading that
// attribute only (an $elemMatch projection, or the sub-document field). It
// wraps ErrMissing when the document lacks it and ErrNotFound when there
// is no document.
func (s *Store[D]) Value(ctx context.Context, id any, name string) (any, error) {
	if err := checkName(name, s.wildcard); err != nil {
		return nil, fmt.Errorf("attribute: value: %w", err)
	}
	proj := bson.D{{Key: s.cfg.Field, Value: bson.D{{Key: "$elemMatch", Value: bson.D{{Key: s.cfg.Key, Value: name}}}}}}
	if s.wildcard {
		proj = bson.D{{Key: s.fieldPath(name), Value: 1}}
	}
	doc, err := s.coll.FindOne(ctx, bson.D{{Key: "_id", Value: id}}, options.FindOne().SetProjection(proj)).Raw()
	if errors.Is(err, mongo.ErrNoDocuments) {
		return nil, fmt.Errorf("attribute: value: document %v: %w", id, ErrNotFound)
	}
	if err != nil {
		return nil, fmt.Errorf("attribute: value: %w", err)
	}
	var attrs []Attr
	if v, err := doc.LookupErr(s.cfg.Field); err == nil {
		if attrs, err = s.decodeField(v); err != nil {
			return nil, fmt.Errorf("attribute: value: %v: %w", id, err)
		}
	}
	for _, a := range attrs {
		if a.Name == name {
			return a.Value, nil
		}
	}
	return nil, fmt.Errorf("attribute: value: %q of %v: %w", name, id, ErrMissing)
}

// decodeField reads the attributes stored in the attribute field's value
// v: an array of elements, or in the wildcard form a sub-document; null
// holds none.
func (s *Store[D]) decodeField(v bson.RawValue) ([]Attr, error) {
	if v.Type == bson.TypeNull {
		return nil, nil
	}
	var out []Attr
	if s.wildcard {
		sub, ok := v.DocumentOK()
		if !ok {
			return nil, fmt.Errorf("%s is %v, not a document", s.cfg.Field, v.Type)
		}
		elems, err := sub.Elements()
		if err != nil {
			return nil, err
		}
		for _, e := range elems {
			var x any
			if err := e.Value().Unmarshal(&x); err != nil {
				return nil, err
			}
			out = append(out, Attr{Name: e.Key(), Value: x})
		}
		return out, nil
	}
	arr, ok := v.ArrayOK()
	if !ok {
		return nil, fmt.Errorf("%s is %v, not an array", s.cfg.Field, v.Type)
	}
	vals, err := arr.Values()
	if err != nil {
		return nil, err
	}
	for i, ev := range vals {
		el, ok := ev.DocumentOK()
		if !ok {
			return nil, fmt.Errorf("%s.%d is %v, not a document", s.cfg.Field, i, ev.Type)
		}
		name, ok := el.Lookup(s.cfg.Key).StringValueOK()
		if !ok {
			return nil, fmt.Errorf("%s.%d has no string %q", s.cfg.Field, i, s.cfg.Key)
		}
		var x any
		if rv, err := el.LookupErr(s.cfg.Value); err == nil {
			if err := rv.Unmarshal(&x); err != nil {
				return nil, err
			}
		}
		out = append(out, Attr{Name: name, Value: x})
	}
	return out, nil
}
