package attribute

import (
	"context"
	"errors"
	"fmt"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo/options"
)

// Attr is one attribute: a name and a scalar value. Its bson tags are
// the array form's default element names, so a document struct can hold
// its attributes as []Attr (with Config.Key and Value left empty).
type Attr struct {
	Name  string `bson:"k"`
	Value any    `bson:"v"`
}

// Insert inserts doc with its attributes: those doc holds in the
// attribute field (an array of elements, or in the wildcard form a
// sub-document; null or absent for none) followed by attrs. Every
// attribute is checked and normalized as by Add, and names must be
// distinct (ErrExists). It returns the document as stored, with an
// ObjectID _id in front when doc had none and numeric strings normalized.
func (s *Store[D]) Insert(ctx context.Context, doc D, attrs ...Attr) (D, error) {
	var out D
	raw, err := s.prepare(doc, attrs)
	if err != nil {
		return out, fmt.Errorf("attribute: insert: %w", err)
	}
	if _, err := s.coll.InsertOne(ctx, raw); err != nil {
		return out, fmt.Errorf("attribute: insert: %w", err)
	}
	if err := bson.Unmarshal(raw, &out); err != nil {
		return out, fmt.Errorf("attribute: insert: %w", err)
	}
	return out, nil
}

// InsertMany is the bulk load of Insert: it checks and normalizes the
// attributes of every document, then inserts them all in one ordered
// insertMany, and returns them as stored. A document with a refused
// attribute fails the whole call before anything is written; a failure
// of the insertMany itself (a duplicate _id) leaves the documents before
// the failing one stored.
func (s *Store[D]) InsertMany(ctx context.Context, docs []D) ([]D, error) {
	if len(docs) == 0 {
		return nil, nil
	}
	raws := make([]any, len(docs))
	for i, d := range docs {
		raw, err := s.prepare(d, nil)
		if err != nil {
			return nil, fmt.Errorf("attribute: insert many: document %d: %w", i, err)
		}
		raws[i] = raw
	}
	if _, err := s.coll.InsertMany(ctx, raws); err != nil {
		return nil, fmt.Errorf("attribute: insert many: %w", err)
	}
	out := make([]D, len(docs))
	for i, raw := range raws {
		if err := bson.Unmarshal(raw.(bson.Raw), &out[i]); err != nil {
			return nil, fmt.Errorf("attribute: insert many: %w", err)
		}
	}
	return out, nil
}

// prepare marshals doc with its attributes and extra checked, normalized
// and stored in this Store's form, in the attribute field's place (or
// last), and an ObjectID _id in front when doc has none.
func (s *Store[D]) prepare(doc D, extra []Attr) (bson.Raw, error) {
	b, err := bson.Marshal(doc)
	if err != nil {
		return nil, err
	}
	elems, err := bson.Raw(b).Elements()
	if err != nil {
		return nil, err
	}
	var attrs []Attr
	at, hasID := -1, false
	out := make(bson.D, 0, len(elems)+2)
	for _, e := range elems {
		switch e.Key() {
		case s.cfg.Field:
			attrs, err = s.decodeField(e.Value())
			if err != nil {
				return nil, err
			}
			at = len(out)
		case "_id":
			hasID = true
		}
		out = append(out, bson.E{Key: e.Key(), Value: e.Value()})
	}
	attrs = append(attrs, extra...)
	seen := make(map[string]bool, len(attrs))
	arr, sub := make(bson.A, 0, len(attrs)), make(bson.D, 0, len(attrs))
	for _, a := range attrs {
		if seen[a.Name] {
			return nil, fmt.Errorf("%w: %q given twice", ErrExists, a.Name)
		}
		seen[a.Name] = true
		v, err := s.value(a.Name, a.Value)
		if err != nil {
			return nil, err
		}
		arr = append(arr, s.element(a.Name, v))
		sub = append(sub, bson.E{Key: a.Name, Value: v})
	}
	field := bson.E{Key: s.cfg.Field, Value: arr}
	if s.wildcard {
		field.Value = sub
	}
	if at < 0 {
		out = append(out, field)
	} else {
		out[at] = field
	}
	if !hasID {
		out = append(bson.D{{Key: "_id", Value: bson.NewObjectID()}}, out...)
	}
	b, err = bson.Marshal(out)
	return bson.Raw(b), err
}

// element returns {k: name, v: v}.
func (s *Store[D]) element(name string, v any) bson.D {
	return bson.D{{Key: s.cfg.Key, Value: name}, {Key: s.cfg.Value, Value: v}}
}

// has returns the filter "document id has attribute name" (or, with
// present false, "has not").
func (s *Store[D]) has(id any, name string, present bool) bson.D {
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
func (s *Store[D]) Add(ctx context.Context, id any, name string, v any) error {
	if err := s.add(ctx, id, name, v); err != nil {
		return fmt.Errorf("attribute: add: %w", err)
	}
	return nil
}

func (s *Store[D]) add(ctx context.Context, id any, name string, v any) error {
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
func (s *Store[D]) Replace(ctx context.Context, id any, name string, v any) error {
	if err := s.replace(ctx, id, name, v); err != nil {
		return fmt.Errorf("attribute: replace: %w", err)
	}
	return nil
}

func (s *Store[D]) replace(ctx context.Context, id any, name string, v any) error {
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
func (s *Store[D]) Set(ctx context.Context, id any, name string, v any) error {
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
			return fmt.Errorf("attribute: set: document %v: %w", id, ErrNotFound)
		}
		return nil
	}
	// Replace, else add: each a single-document conditional update. A
	// concurrent Remove or Set can make both miss; retry, bounded.
	for range maxSetAttempts {
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

// maxSetAttempts bounds Set's replace-else-add retries under concurrent
// writers of the same attribute.
const maxSetAttempts = 64

// Remove deletes document id's attribute name ($pull of its element, or
// $unset of its field). It returns ErrMissing or ErrNotFound, wrapped.
func (s *Store[D]) Remove(ctx context.Context, id any, name string) error {
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
func (s *Store[D]) why(ctx context.Context, id any, name string, cause error) error {
	n, err := s.coll.CountDocuments(ctx, bson.D{{Key: "_id", Value: id}}, options.Count().SetLimit(1))
	if err != nil {
		return err
	}
	if n == 0 {
		return fmt.Errorf("document %v: %w", id, ErrNotFound)
	}
	return fmt.Errorf("%q of %v: %w", name, id, cause)
}
