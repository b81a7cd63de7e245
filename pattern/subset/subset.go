package subset

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo"
)

// ErrParentNotFound is wrapped by the verbs given a parent _id that does
// not exist.
var ErrParentNotFound = errors.New("parent document not found")

// ErrChildNotFound is wrapped by Edit and Delete given a child _id that
// does not exist.
var ErrChildNotFound = errors.New("child document not found")

// ErrContention is wrapped by the verbs that refill a subset when other
// writes kept changing the parent's array for maxAttempts attempts.
var ErrContention = errors.New("subset changed concurrently on every attempt")

// maxAttempts bounds the compare-and-set loop of a refill.
const maxAttempts = 16

// Config describes one subset. Its slices are owned by the caller and must
// not change after New.
type Config struct {
	// Parent is the child field holding the parent's _id, e.g. "productId".
	Parent string
	// Time is the child field that orders children, newest largest, e.g.
	// "at". All children should hold values of one BSON type (dates).
	Time string
	// Array is the parent field holding the subset, e.g. "recentReviews".
	Array string
	// Size is N, the number of newest children embedded. At least 1.
	Size int
	// Fields, when not nil, lists the child fields copied besides _id and
	// Time; when nil a copy is the whole child without Parent.
	Fields []string
}

// Validate reports the first problem with c: an empty, dotted or
// $-prefixed field name, Parent or Time equal to "_id", Size below 1, or
// Fields naming _id, Parent or Time, or a field twice.
func (c Config) Validate() error {
	for _, f := range []struct{ name, v string }{{"Parent", c.Parent}, {"Time", c.Time}, {"Array", c.Array}} {
		if err := fieldName(f.v); err != nil {
			return fmt.Errorf("subset: config: %s: %w", f.name, err)
		}
		if f.v == "_id" {
			return fmt.Errorf(`subset: config: %s: cannot be "_id"`, f.name)
		}
	}
	if c.Parent == c.Time {
		return errors.New("subset: config: Parent and Time name the same field")
	}
	if c.Size < 1 {
		return fmt.Errorf("subset: config: Size %d: keep at least 1", c.Size)
	}
	seen := map[string]bool{}
	for _, f := range c.Fields {
		if err := fieldName(f); err != nil {
			return fmt.Errorf("subset: config: Fields: %w", err)
		}
		if f == "_id" || f == c.Parent || f == c.Time || seen[f] {
			return fmt.Errorf("subset: config: Fields: %q is implied, the parent link, or listed twice", f)
		}
		seen[f] = true
	}
	return nil
}

// fieldName checks a top-level field name.
func fieldName(s string) error {
	if s == "" {
		return errors.New("empty field name")
	}
	if strings.ContainsAny(s, ".$") {
		return fmt.Errorf("%q: a top-level field name has no '.' or '$'", s)
	}
	return nil
}

// Window keeps the newest Config.Size children of each parent embedded in
// the parent. It holds no state besides its configuration and is safe for
// concurrent use.
type Window struct {
	parents  *mongo.Collection
	children *mongo.Collection
	cfg      Config
	keep     map[string]bool // copied fields when cfg.Fields is set
}

// New returns a Window embedding children of the children collection in
// documents of the parents collection. It returns cfg.Validate's error.
func New(parents, children *mongo.Collection, cfg Config) (*Window, error) {
	if parents == nil || children == nil {
		return nil, errors.New("subset: new: nil collection")
	}
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	w := &Window{parents: parents, children: children, cfg: cfg}
	if cfg.Fields != nil {
		w.keep = map[string]bool{"_id": true, cfg.Time: true}
		for _, f := range cfg.Fields {
			w.keep[f] = true
		}
	}
	return w, nil
}

// IndexKeys returns the key pattern EnsureIndexes creates on the child
// collection: {<Parent>: 1, <Time>: -1, _id: -1}.
func (w *Window) IndexKeys() bson.D {
	return bson.D{{Key: w.cfg.Parent, Value: 1}, {Key: w.cfg.Time, Value: -1}, {Key: "_id", Value: -1}}
}

// EnsureIndexes creates the index of IndexKeys on the child collection.
// It is idempotent.
func (w *Window) EnsureIndexes(ctx context.Context) error {
	if _, err := w.children.Indexes().CreateOne(ctx, mongo.IndexModel{Keys: w.IndexKeys()}); err != nil {
		return fmt.Errorf("subset: ensure indexes: %w", err)
	}
	return nil
}

// order is the order of the embedded array and of the pages: newest
// first, _id breaking ties.
func (w *Window) order() bson.D {
	return bson.D{{Key: w.cfg.Time, Value: -1}, {Key: "_id", Value: -1}}
}

// copyOf builds the embedded copy of a child, in the child's field order.
func (w *Window) copyOf(child bson.Raw) (bson.Raw, error) {
	elems, err := child.Elements()
	if err != nil {
		return nil, err
	}
	out := bson.D{}
	for _, e := range elems {
		k := e.Key()
		if k == w.cfg.Parent || (w.keep != nil && !w.keep[k]) {
			continue
		}
		out = append(out, bson.E{Key: k, Value: e.Value()})
	}
	return bson.Marshal(out)
}

// copied reports whether a top-level child field is part of the copy.
func (w *Window) copied(field string) bool {
	if field == w.cfg.Parent {
		return false
	}
	return w.keep == nil || w.keep[field]
}
