package outlier

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo"

	"github.com/formworkdb/formwork/pattern/bucket"
)

var (
	// ErrNoParent is returned (wrapped) when the parent does not exist.
	ErrNoParent = errors.New("no such parent")
	// ErrNoCounter is returned (wrapped) by Append when the parent exists
	// but its counter is missing or not a number; Repair adopts it.
	ErrNoCounter = errors.New("parent has no numeric counter")
)

// Config describes the parents and their overflow.
type Config struct {
	// Threshold is the most elements a parent embeds; at least 1.
	Threshold int
	// List names the embedded array; "items" if empty.
	List string
	// Count names the parent's total of elements; "count" if empty.
	Count string
	// Flag names the parent's "has overflow" boolean; "hasOverflow" if
	// empty.
	Flag string
	// Overflow configures the overflow buckets. Its defaults: Owner
	// "parentId", Elements the same name as List, Size 1000. ElementID is
	// passed through (it enables element lookups on the buckets).
	Overflow bucket.Config
}

// withDefaults returns c with empty names and sizes defaulted.
func (c Config) withDefaults() Config {
	def := func(s *string, v string) {
		if *s == "" {
			*s = v
		}
	}
	def(&c.List, "items")
	def(&c.Count, "count")
	def(&c.Flag, "hasOverflow")
	def(&c.Overflow.Owner, "parentId")
	def(&c.Overflow.Elements, c.List)
	if c.Overflow.Size == 0 {
		c.Overflow.Size = 1000
	}
	return c
}

// Validate reports whether c, with its defaults, is usable: Threshold at
// least 1, plain and distinct parent field names (no '.', no leading '$',
// not "_id"), and a valid overflow bucket configuration.
func (c Config) Validate() error {
	c = c.withDefaults()
	if c.Threshold < 1 {
		return fmt.Errorf("outlier: config: Threshold must be at least 1, got %d", c.Threshold)
	}
	seen := map[string]string{}
	for _, n := range []struct{ what, name string }{{"List", c.List}, {"Count", c.Count}, {"Flag", c.Flag}} {
		switch {
		case n.name == "_id", strings.HasPrefix(n.name, "$"), strings.Contains(n.name, "."):
			return fmt.Errorf("outlier: config: %s: %q is not a plain field name", n.what, n.name)
		}
		if prev, dup := seen[n.name]; dup {
			return fmt.Errorf("outlier: config: %s and %s are both %q", prev, n.what, n.name)
		}
		seen[n.name] = n.what
	}
	if err := c.Overflow.Validate(); err != nil {
		return fmt.Errorf("outlier: config: Overflow: %w", err)
	}
	return nil
}

// Store embeds elements of type E in parents and diverts the outliers'
// excess to overflow buckets. It is safe for concurrent use.
type Store[E any] struct {
	parents  *mongo.Collection
	overflow *bucket.Store[E]
	cfg      Config
}

// New returns a Store over the parents collection and the overflow
// collection. It validates cfg and does not touch the database.
func New[E any](parents, overflow *mongo.Collection, cfg Config) (*Store[E], error) {
	if parents == nil || overflow == nil {
		return nil, errors.New("outlier: new: nil collection")
	}
	if parents.Database().Name() == overflow.Database().Name() && parents.Name() == overflow.Name() {
		return nil, errors.New("outlier: new: parents and overflow must be different collections")
	}
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	cfg = cfg.withDefaults()
	ov, err := bucket.New[E](overflow, cfg.Overflow)
	if err != nil {
		return nil, fmt.Errorf("outlier: new: %w", err)
	}
	return &Store[E]{parents: parents, overflow: ov, cfg: cfg}, nil
}

// Config returns the Store's configuration with defaults applied.
func (s *Store[E]) Config() Config { return s.cfg }

// Overflow returns the bucket store holding the overflow, owned by parent
// _id.
func (s *Store[E]) Overflow() *bucket.Store[E] { return s.overflow }

// EnsureIndexes creates the overflow index {parentId: 1, openedAt: -1}
// (and the overflow element index when Overflow.ElementID is set).
func (s *Store[E]) EnsureIndexes(ctx context.Context) error {
	if err := s.overflow.EnsureIndexes(ctx); err != nil {
		return fmt.Errorf("outlier: ensure indexes: %w", err)
	}
	return nil
}

// Create inserts the parent with the given _id and fields (a struct,
// bson.D or map; nil for none), with count 0, an empty list and the flag
// false. fields may not set _id or the pattern's fields. A parent that
// exists already fails with DuplicateKey (11000, see
// mongo.IsDuplicateKeyError).
func (s *Store[E]) Create(ctx context.Context, id any, fields any) error {
	doc := bson.D{{Key: "_id", Value: id}}
	if fields != nil {
		raw, err := bson.Marshal(fields)
		if err != nil {
			return fmt.Errorf("outlier: create: fields: %w", err)
		}
		elems, err := bson.Raw(raw).Elements()
		if err != nil {
			return fmt.Errorf("outlier: create: fields: %w", err)
		}
		for _, e := range elems {
			switch k := e.Key(); k {
			case "_id", s.cfg.List, s.cfg.Count, s.cfg.Flag:
				return fmt.Errorf("outlier: create: fields may not set %q", k)
			default:
				doc = append(doc, bson.E{Key: k, Value: e.Value()})
			}
		}
	}
	doc = append(doc,
		bson.E{Key: s.cfg.Count, Value: int32(0)},
		bson.E{Key: s.cfg.Flag, Value: false},
		bson.E{Key: s.cfg.List, Value: bson.A{}})
	if _, err := s.parents.InsertOne(ctx, doc); err != nil {
		return fmt.Errorf("outlier: create: %w", err)
	}
	return nil
}
