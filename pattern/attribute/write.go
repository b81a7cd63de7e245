package attribute

import (
	"context"
	"errors"
	"fmt"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo"
	"go.mongodb.org/mongo-driver/v2/mongo/options"
)

// Attr is one attribute: a name and a scalar value.
type Attr struct {
	Name  string
	Value any
}

// Insert inserts doc (a struct, bson.D or map; it may not hold the
// attribute field) with the attributes attrs, checked and normalized as
// by Add, and returns the inserted _id. Names must be distinct.
func (s *Store) Insert(ctx context.Context, doc any, attrs ...Attr) (any, error) {
	raw, err := bson.Marshal(doc)
	if err != nil {
		return nil, fmt.Errorf("attribute: insert: %w", err)
	}
	if _, err := bson.Raw(raw).LookupErr(s.cfg.Field); err == nil {
		return nil, fmt.Errorf("attribute: insert: the document sets %q itself", s.cfg.Field)
	}
	elems, err := bson.Raw(raw).Elements()
	if err != nil {
		return nil, fmt.Errorf("attribute: insert: %w", err)
	}
	out := make(bson.D, 0, len(elems)+1)
	for _, e := range elems {
		out = append(out, bson.E{Key: e.Key(), Value: e.Value()})
	}
	seen := map[string]bool{}
	arr, sub := bson.A{}, bson.D{}
	for _, a := range attrs {
		if seen[a.Name] {
			return nil, fmt.Errorf("attribute: insert: %w: %q given twice", ErrExists, a.Name)
		}
		seen[a.Name] = true
		v, err := s.value(a.Name, a.Value)
		if err != nil {
			return nil, fmt.Errorf("attribute: insert: %w", err)
		}
		arr = append(arr, s.element(a.Name, v))
		sub = append(sub, bson.E{Key: a.Name, Value: v})
	}
	if s.wildcard {
		out = append(out, bson.E{Key: s.cfg.Field, Value: sub})
	} else {
		out = append(out, bson.E{Key: s.cfg.Field, Value: arr})
	}
	r, err := s.coll.InsertOne(ctx, out)
	if err != nil {
		return nil, fmt.Errorf("attribute: insert: %w", err)
	}
	return r.InsertedID, nil
}

// element returns {k: name, v: v}.
func (s *Store) element(name string, v any) bson.D {
	return bson.D{{Key: s.cfg.Key, Value: name}, {Key: s.cfg.Value, Value: v}}
}

// has returns the filter "document id has attribute name" (or, with
// present false, "has not").
func (s *Store) has(id any, name string, present bool) bson.D {
	if s.wildcard {
		return bson.D{{Key: "_id", Value: id}, {Key: s.fieldPath(name), Value: bson.D{{Key: "$exists", Value: present}}}}
	}
	if present {
		return bson.D{{Key: "_id", Value: id}, {Key: s.keyPath(), Value: name}}
	}
	return bson.D{{Key: "_id", Value: id}, {Key: s.keyPath(), Value: bson.D{{Key: "$ne", Value: name}}}}
}

// Add gives document id the attribute name with value v, in one update
// guarded so that the attribute cannot appear twice. It returns
// ErrExists when the attribute is there, ErrNotFound when the document is
// not, ErrValue or ErrUndeclared for a value Config refuses (all wrapped).
func (s *Store) Add(ctx context.Context, id any, name string, v any) error {
	if err := s.add(ctx, id, name, v); err != nil {
		return fmt.Errorf("attribute: add: %w", err)
	}
	return nil
}

func (s *Store) add(ctx context.Context, id any, name string, v any) error {
	nv, err := s.value(name, v)
	if err != nil {
		return err
	}
	var upd bson.D
	if s.wildcard {
		upd = bson.D{{Key: "$set", Value: bson.D{{Key: s.fieldPath(name), Value: nv}}}}
	} else {
		upd = bson.D{{Key: "$push", Value: bson.D{{Key: s.cfg.Field, Value: s.element(name, nv)}}}}
	}
	r, err := s.coll.UpdateOne(ctx, s.has(id, name, false), upd)
	if err != nil {
		return err
	}
	if r.MatchedCount == 1 {
		return nil
	}
	return s.why(ctx, id, name, ErrExists)
}

// Replace changes the value of document id's attribute name to v with the
// positional operator ({$set: {"attrs.$.v": v}}). It returns ErrMissing
// when the document lacks the attribute, ErrNotFound when the document is
// not there, ErrValue or ErrUndeclared for a refused value (all wrapped).
func (s *Store) Replace(ctx context.Context, id any, name string, v any) error {
	if err := s.replace(ctx, id, name, v); err != nil {
		return fmt.Errorf("attribute: replace: %w", err)
	}
	return nil
}

func (s *Store) replace(ctx context.Context, id any, name string, v any) error {
	nv, err := s.value(name, v)
	if err != nil {
		return err
	}
	path := s.cfg.Field + ".$." + s.cfg.Value
	if s.wildcard {
		path = s.fieldPath(name)
	}
	r, err := s.coll.UpdateOne(ctx, s.has(id, name, true), bson.D{{Key: "$set", Value: bson.D{{Key: path, Value: nv}}}})
	if err != nil {
		return err
	}
	if r.MatchedCount == 1 {
		return nil
	}
	return s.why(ctx, id, name, ErrMissing)
}

// Set gives document id the attribute name with value v, replacing its
// value when it has it. In the wildcard form it is one $set; in the array
// form it is Replace, then Add when the attribute is missing, retried
// when a concurrent writer adds or removes it in between. No step can
// make a duplicate.
func (s *Store) Set(ctx context.Context, id any, name string, v any) error {
	if s.wildcard {
		nv, err := s.value(name, v)
		if err != nil {
			return fmt.Errorf("attribute: set: %w", err)
		}
		r, err := s.coll.UpdateOne(ctx, bson.D{{Key: "_id", Value: id}},
			bson.D{{Key: "$set", Value: bson.D{{Key: s.fieldPath(name), Value: nv}}}})
		if err != nil {
			return fmt.Errorf("attribute: set: %w", err)
		}
		if r.MatchedCount == 0 {
			return fmt.Errorf("attribute: set: %w: %v", ErrNotFound, id)
		}
		return nil
	}
	for range 4 {
		err := s.replace(ctx, id, name, v)
		if !errors.Is(err, ErrMissing) {
			if err != nil {
				return fmt.Errorf("attribute: set: %w", err)
			}
			return nil
		}
		err = s.add(ctx, id, name, v)
		if !errors.Is(err, ErrExists) {
			if err != nil {
				return fmt.Errorf("attribute: set: %w", err)
			}
			return nil
		}
	}
	return fmt.Errorf("attribute: set: %q of %v keeps changing under concurrent writers", name, id)
}

// Remove deletes document id's attribute name ($pull of its element, or
// $unset of its field). It returns ErrMissing or ErrNotFound, wrapped.
func (s *Store) Remove(ctx context.Context, id any, name string) error {
	if err := checkName(name, s.wildcard); err != nil {
		return fmt.Errorf("attribute: remove: %w", err)
	}
	var upd bson.D
	if s.wildcard {
		upd = bson.D{{Key: "$unset", Value: bson.D{{Key: s.fieldPath(name), Value: ""}}}}
	} else {
		upd = bson.D{{Key: "$pull", Value: bson.D{{Key: s.cfg.Field, Value: bson.D{{Key: s.cfg.Key, Value: name}}}}}}
	}
	r, err := s.coll.UpdateOne(ctx, s.has(id, name, true), upd)
	if err != nil {
		return fmt.Errorf("attribute: remove: %w", err)
	}
	if r.MatchedCount == 1 {
		return nil
	}
	return fmt.Errorf("attribute: remove: %w", s.why(ctx, id, name, ErrMissing))
}

// why explains an update that matched nothing: the document is missing,
// or else the attribute condition failed (cause).
func (s *Store) why(ctx context.Context, id any, name string, cause error) error {
	n, err := s.coll.CountDocuments(ctx, bson.D{{Key: "_id", Value: id}}, options.Count().SetLimit(1))
	if err != nil {
		return err
	}
	if n == 0 {
		return fmt.Errorf("%w: %v", ErrNotFound, id)
	}
	return fmt.Errorf("%w: %q of %v", cause, name, id)
}

// Get returns document id's attributes in stored order. It returns
// ErrNotFound, wrapped, when the document is not there.
func (s *Store) Get(ctx context.Context, id any) ([]Attr, error) {
	var doc bson.Raw
	err := s.coll.FindOne(ctx, bson.D{{Key: "_id", Value: id}},
		options.FindOne().SetProjection(bson.D{{Key: s.cfg.Field, Value: 1}})).Decode(&doc)
	if errors.Is(err, mongo.ErrNoDocuments) {
		return nil, fmt.Errorf("attribute: get: %w: %v", ErrNotFound, id)
	}
	if err != nil {
		return nil, fmt.Errorf("attribute: get: %w", err)
	}
	attrs, err := s.decode(doc)
	if err != nil {
		return nil, fmt.Errorf("attribute: get: %v: %w", id, err)
	}
	return attrs, nil
}

// decode reads the attributes of a stored document.
func (s *Store) decode(doc bson.Raw) ([]Attr, error) {
	v, err := doc.LookupErr(s.cfg.Field)
	if err != nil {
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
