package outlier

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo"

	"github.com/formworkdb/formwork/pattern"
	"github.com/formworkdb/formwork/pattern/bucket"
)

// Sentinel errors; match them with errors.Is. The first three are the
// pattern package's own values, shared by every pattern package.
var (
	// ErrParentNotFound is returned (wrapped) when the parent does not
	// exist.
	ErrParentNotFound = pattern.ErrParentNotFound
	// ErrNotFound is returned (wrapped) by Remove and Replace when the
	// parent holds no element with the id.
	ErrNotFound = pattern.ErrNotFound
	// ErrInvalidConfig is returned (wrapped) by Validate and New, and by
	// the element verbs without Config.ElementID.
	ErrInvalidConfig = pattern.ErrInvalidConfig
	// ErrNoCounter is returned (wrapped) by Append when the parent's
	// counter exists but is not a number (a parent without a counter is
	// initialised by its first Append instead); Repair fixes it.
	ErrNoCounter = errors.New("parent counter is not a number")
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
	// ElementID names the field inside each element that identifies it
	// (elements must then be documents carrying it). It enables Remove,
	// Replace and Feed, and is passed to the overflow buckets, which
	// index it. Empty disables them.
	ElementID string
	// Overflow configures the overflow buckets. Its defaults: Owner
	// "parentId", Elements the same name as List, Size 1000, ElementID
	// Config.ElementID (it may not differ).
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
	def(&c.Overflow.ElementID, c.ElementID)
	def(&c.ElementID, c.Overflow.ElementID)
	return c
}

// Validate reports whether c, with its defaults, is usable: Threshold at
// least 1, plain and distinct parent field names (no '.', no leading '$',
// not "_id"), and a valid overflow bucket configuration. Its errors wrap
// ErrInvalidConfig.
func (c Config) Validate() error {
	if err := c.validate(); err != nil {
		return fmt.Errorf("outlier: config: %w: %w", ErrInvalidConfig, err)
	}
	return nil
}

func (c Config) validate() error {
	if c.ElementID != "" && c.Overflow.ElementID != "" && c.ElementID != c.Overflow.ElementID {
		return fmt.Errorf("ElementID %q and Overflow.ElementID %q differ", c.ElementID, c.Overflow.ElementID)
	}
	c = c.withDefaults()
	if c.Threshold < 1 {
		return fmt.Errorf("Threshold must be at least 1, got %d", c.Threshold)
	}
	seen := map[string]string{}
	for _, n := range []struct{ what, name string }{{"List", c.List}, {"Count", c.Count}, {"Flag", c.Flag}} {
		switch {
		case n.name == "_id", strings.HasPrefix(n.name, "$"), strings.Contains(n.name, "."):
			return fmt.Errorf("%s: %q is not a plain field name", n.what, n.name)
		}
		if prev, dup := seen[n.name]; dup {
			return fmt.Errorf("%s and %s are both %q", prev, n.what, n.name)
		}
		seen[n.name] = n.what
	}
	if err := c.Overflow.Validate(); err != nil {
		return fmt.Errorf("Overflow: %w", err)
	}
	return nil
}

// Store embeds elements of type E in parents of type P and diverts the
// outliers' excess to overflow buckets. P is the user's parent struct
// (bson tags respected; its fields for the list, counter and flag, if
// any, are read back but written only by the Store) or bson.D; E is the
// element type, a struct, bson.D or any value the driver marshals. It is
// safe for concurrent use.
type Store[P, E any] struct {
	parents  *mongo.Collection
	overflow *bucket.Store[E]
	cfg      Config
}

// New returns a Store over the parents collection and the overflow
// collection. It validates cfg and does not touch the database.
func New[P, E any](parents, overflow *mongo.Collection, cfg Config) (*Store[P, E], error) {
	if parents == nil || overflow == nil {
		return nil, fmt.Errorf("outlier: new: %w: nil collection", ErrInvalidConfig)
	}
	if parents.Database().Name() == overflow.Database().Name() && parents.Name() == overflow.Name() {
		return nil, fmt.Errorf("outlier: new: %w: parents and overflow must be different collections", ErrInvalidConfig)
	}
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	cfg = cfg.withDefaults()
	ov, err := bucket.New[E](overflow, cfg.Overflow)
	if err != nil {
		return nil, fmt.Errorf("outlier: new: %w", err)
	}
	return &Store[P, E]{parents: parents, overflow: ov, cfg: cfg}, nil
}

// Config returns the Store's configuration with defaults applied.
func (s *Store[P, E]) Config() Config { return s.cfg }

// Overflow returns the bucket store holding the overflow, owned by parent
// _id.
func (s *Store[P, E]) Overflow() *bucket.Store[E] { return s.overflow }

// EnsureIndexes creates the overflow index {parentId: 1, openedAt: -1}
// (and the overflow element index when Overflow.ElementID is set).
func (s *Store[P, E]) EnsureIndexes(ctx context.Context) error {
	if err := s.overflow.EnsureIndexes(ctx); err != nil {
		return fmt.Errorf("outlier: ensure indexes: %w", err)
	}
	return nil
}

// Create inserts parent with count 0, an empty list and the flag false,
// and returns its _id: the one parent carries, or a new ObjectID. The
// list, counter and flag fields of parent, if it has them, are replaced.
// A parent that exists already fails with DuplicateKey (11000, see
// mongo.IsDuplicateKeyError). Parents inserted without Create work too:
// the first Append initialises them.
func (s *Store[P, E]) Create(ctx context.Context, parent P) (any, error) {
	raw, err := bson.Marshal(parent)
	if err != nil {
		return nil, fmt.Errorf("outlier: create: %w", err)
	}
	elems, err := bson.Raw(raw).Elements()
	if err != nil {
		return nil, fmt.Errorf("outlier: create: %w", err)
	}
	var id any = bson.NewObjectID()
	doc := bson.D{{Key: "_id", Value: id}}
	for _, e := range elems {
		switch k := e.Key(); k {
		case "_id":
			doc[0].Value = e.Value()
			id = e.Value()
		case s.cfg.List, s.cfg.Count, s.cfg.Flag:
		default:
			doc = append(doc, bson.E{Key: k, Value: e.Value()})
		}
	}
	doc = append(doc,
		bson.E{Key: s.cfg.Count, Value: int32(0)},
		bson.E{Key: s.cfg.Flag, Value: false},
		bson.E{Key: s.cfg.List, Value: bson.A{}})
	if _, err := s.parents.InsertOne(ctx, doc); err != nil {
		return nil, fmt.Errorf("outlier: create: %w", err)
	}
	if rv, ok := id.(bson.RawValue); ok {
		var v any
		if err := rv.Unmarshal(&v); err == nil {
			id = v
		}
	}
	return id, nil
}
