package subset

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo"

	"github.com/formworkdb/formwork/pattern"
)

// Sentinel errors. The first four are package pattern's, shared by every
// pattern package; match them with errors.Is.
var (
	// ErrParentNotFound is wrapped by the verbs given a parent _id that
	// does not exist (Add, AddMany and Move name the parent of a child).
	ErrParentNotFound = pattern.ErrParentNotFound
	// ErrNotFound is wrapped by Edit, Move and Delete given a child _id
	// that does not exist.
	ErrNotFound = pattern.ErrNotFound
	// ErrHasChildren is wrapped by DeleteParent under the Refuse policy
	// when children still reference the parent.
	ErrHasChildren = pattern.ErrHasChildren
	// ErrInvalidConfig is wrapped by Config.Validate and New.
	ErrInvalidConfig = pattern.ErrInvalidConfig
	// ErrTimeType is wrapped when a child's Config.Time field is missing
	// or holds a value of another BSON type than Config.TimeType (a
	// string date where dates are used): such a child would sort apart
	// from the others and never show in the window, so it is refused.
	ErrTimeType = errors.New("time field of the wrong BSON type")
	// ErrContention is wrapped by the verbs that refill a window when
	// other writes kept changing the parent's array for maxAttempts
	// attempts.
	ErrContention = errors.New("window changed concurrently on every attempt")
)

// maxAttempts bounds the compare-and-set loop of a refill and of an edit.
const maxAttempts = 64

// Policy says what deleting a parent does to its children; it is
// pattern.Policy, shared by every package.
type Policy = pattern.Policy

// The parent-delete policies, as this package applies them:
const (
	// Refuse (the zero Policy) deletes a parent only when no child
	// references it; otherwise DeleteParent wraps ErrHasChildren.
	Refuse = pattern.Refuse
	// Cascade deletes the parent and all its children.
	Cascade = pattern.Cascade
	// Detach deletes the parent, and with it the window, and leaves its
	// children in the child collection, referencing a parent that no
	// longer exists. Check does not count them as problems.
	Detach = pattern.Detach
)

// Config describes one window. Its slices are owned by the caller and
// must not change after New.
type Config struct {
	// Parent is the child field holding the parent's _id, e.g. "productId".
	Parent string
	// Time is the child field that orders children, newest largest, e.g.
	// "at". Every child must hold it, with a value of TimeType.
	Time string
	// TimeType is the BSON type every Time value has; the zero value
	// means bson.TypeDateTime. It may be a date, a string (ISO 8601
	// text sorts by time), a timestamp, an ObjectID or a number; the
	// four numeric types (int32, int64, double, decimal128) are one
	// class, since MongoDB compares numbers by value across types.
	// A child with another type is refused with ErrTimeType.
	TimeType bson.Type
	// Array is the parent field holding the window, e.g. "recentReviews".
	Array string
	// Size is N, the number of newest children embedded. At least 1.
	Size int
	// Fields, when not nil, lists the child fields copied besides _id and
	// Time; when nil a copy is the whole child without Parent.
	Fields []string
	// OnParentDelete is what DeleteParent does with the children, and
	// how Check treats children whose parent does not exist.
	OnParentDelete Policy
}

// Validate reports the first problem with c, wrapping ErrInvalidConfig:
// an empty, dotted or $-prefixed field name, Parent or Time equal to
// "_id", Size below 1, Fields naming _id, Parent or Time, or a field
// twice, a TimeType that cannot order children, or an unknown Policy.
func (c Config) Validate() error {
	if err := c.validate(); err != nil {
		return fmt.Errorf("subset: config: %w: %w", ErrInvalidConfig, err)
	}
	return nil
}

// validate is Validate without the wrapping.
func (c Config) validate() error {
	for _, f := range []struct{ name, v string }{{"Parent", c.Parent}, {"Time", c.Time}, {"Array", c.Array}} {
		if err := fieldName(f.v); err != nil {
			return fmt.Errorf("%s: %w", f.name, err)
		}
		if f.v == "_id" {
			return fmt.Errorf(`%s: cannot be "_id"`, f.name)
		}
	}
	if c.Parent == c.Time {
		return errors.New("Parent and Time name the same field")
	}
	if c.Size < 1 {
		return fmt.Errorf("Size %d: keep at least 1", c.Size)
	}
	seen := map[string]bool{}
	for _, f := range c.Fields {
		if err := fieldName(f); err != nil {
			return fmt.Errorf("Fields: %w", err)
		}
		if f == "_id" || f == c.Parent || f == c.Time || seen[f] {
			return fmt.Errorf("Fields: %q is implied, the parent link, or listed twice", f)
		}
		seen[f] = true
	}
	if !orderable(c.timeType()) {
		return fmt.Errorf("TimeType %v cannot order children: use a date, string, timestamp, ObjectID or number", c.TimeType)
	}
	if c.OnParentDelete < Refuse || c.OnParentDelete > Detach {
		return fmt.Errorf("OnParentDelete: unknown %v", c.OnParentDelete)
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
// the parent. P is the parent's type and C the child's: the user's structs
// (bson tags respected) or bson.D. A copy in the window decodes into C
// with the Parent field (and fields outside Config.Fields) left zero.
//
// Window is a pattern.Dependent of the child collection, so a
// pattern.Source can maintain it together with other copies; its own
// verbs (Add, AddMany, Edit, Move, Delete, DeleteParent) write the child
// and the window in one call. It holds no state besides its
// configuration and is safe for concurrent use.
type Window[P, C any] struct {
	parents  *mongo.Collection
	children *mongo.Collection
	cfg      Config
	keep     map[string]bool // copied fields when cfg.Fields is set
}

// The interfaces a Window implements.
var (
	_ pattern.Dependent    = (*Window[bson.D, bson.D])(nil)
	_ pattern.BatchApplier = (*Window[bson.D, bson.D])(nil)
)

// New returns a Window embedding children of the children collection in
// documents of the parents collection. It returns cfg.Validate's error.
func New[P, C any](parents, children *mongo.Collection, cfg Config) (*Window[P, C], error) {
	if parents == nil || children == nil {
		return nil, fmt.Errorf("subset: new: %w: nil collection", ErrInvalidConfig)
	}
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	w := &Window[P, C]{parents: parents, children: children, cfg: cfg}
	if cfg.Fields != nil {
		w.keep = map[string]bool{"_id": true, cfg.Time: true}
		for _, f := range cfg.Fields {
			w.keep[f] = true
		}
	}
	return w, nil
}

// Config returns the window's configuration.
func (w *Window[P, C]) Config() Config { return w.cfg }

// Parents returns the parent collection.
func (w *Window[P, C]) Parents() *mongo.Collection { return w.parents }

// Children returns the child collection.
func (w *Window[P, C]) Children() *mongo.Collection { return w.children }

// Name says which copy the window is: "subset <parents>.<Array>".
func (w *Window[P, C]) Name() string {
	return "subset " + w.parents.Name() + "." + w.cfg.Array
}

// IndexKeys returns the key pattern EnsureIndexes creates on the child
// collection: {<Parent>: 1, <Time>: -1, _id: -1}.
func (w *Window[P, C]) IndexKeys() bson.D {
	return bson.D{{Key: w.cfg.Parent, Value: 1}, {Key: w.cfg.Time, Value: -1}, {Key: "_id", Value: -1}}
}

// EnsureIndexes creates the index of IndexKeys on the child collection.
// It is idempotent.
func (w *Window[P, C]) EnsureIndexes(ctx context.Context) error {
	if _, err := w.children.Indexes().CreateOne(ctx, mongo.IndexModel{Keys: w.IndexKeys()}); err != nil {
		return fmt.Errorf("subset: ensure indexes: %w", err)
	}
	return nil
}

// order is the order of the embedded array and of the pages: newest
// first, _id breaking ties.
func (w *Window[P, C]) order() bson.D {
	return bson.D{{Key: w.cfg.Time, Value: -1}, {Key: "_id", Value: -1}}
}

// copyOf builds the embedded copy of a child, in the child's field order.
func (w *Window[P, C]) copyOf(child bson.Raw) (bson.Raw, error) {
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

// client returns the client behind the collections, for pattern.Atomic.
func (w *Window[P, C]) client() *mongo.Client { return w.children.Database().Client() }
