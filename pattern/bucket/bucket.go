package bucket

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo"

	"github.com/formworkdb/formwork/pattern"
)

// Sentinel errors, the pattern package's own values; match them with
// errors.Is.
var (
	// ErrNotFound is returned (wrapped) by Find, Replace, Update and
	// Remove when no bucket of the owner holds an element with the id.
	ErrNotFound = pattern.ErrNotFound
	// ErrInvalidConfig is returned (wrapped) by Validate and New, and by
	// the element verbs when Config.ElementID is not set.
	ErrInvalidConfig = pattern.ErrInvalidConfig
)

// Config describes a bucketed collection. Field names default as noted.
type Config struct {
	// Size is the most elements one bucket holds; it must be at least 1.
	Size int
	// Owner names the field holding whose elements a bucket contains;
	// "owner" if empty.
	Owner string
	// Elements names the array of elements; "elements" if empty.
	Elements string
	// Count names the number of elements in the array; "count" if empty.
	Count string
	// OpenedAt names the time the bucket was opened; "openedAt" if empty.
	// With Time set it is the time of the first element(s) the bucket
	// received, from the elements themselves; otherwise Clock's time.
	OpenedAt string
	// Time names the date field inside each element (a tick's "at"). It
	// makes every bucket carry the bounds of its elements' times in
	// MinTime and MaxTime, kept by $min/$max in the append itself, makes
	// Append reject elements without a BSON date there, and enables
	// Range with the index {owner: 1, maxTime: 1, minTime: 1}. Empty
	// disables them.
	Time string
	// MinTime and MaxTime name the bucket's time bounds; "minTime" and
	// "maxTime" if empty. Used only with Time.
	MinTime, MaxTime string
	// ElementID names the field inside each element that identifies it.
	// It enables Find, Replace, Update and Remove, makes Append reject elements
	// without it, and adds the index {owner: 1, "elements.<id>": 1}.
	// Empty disables those verbs.
	ElementID string
	// Clock gives the time stored in openedAt when a bucket opens
	// without Config.Time; time.Now if nil. BSON dates keep milliseconds, so buckets opened
	// within one millisecond share an openedAt (Page handles ties).
	Clock func() time.Time
}

// withDefaults returns c with empty names replaced by their defaults.
func (c Config) withDefaults() Config {
	def := func(s *string, v string) {
		if *s == "" {
			*s = v
		}
	}
	def(&c.Owner, "owner")
	def(&c.Elements, "elements")
	def(&c.Count, "count")
	def(&c.OpenedAt, "openedAt")
	def(&c.MinTime, "minTime")
	def(&c.MaxTime, "maxTime")
	if c.Clock == nil {
		c.Clock = time.Now
	}
	return c
}

// Validate reports whether c, with its defaults applied, describes a
// usable collection: Size at least 1, field names that are plain
// (no '.', not starting with '$', not "_id") and distinct. Its errors wrap
// ErrInvalidConfig.
func (c Config) Validate() error {
	if err := c.validate(); err != nil {
		return fmt.Errorf("bucket: config: %w: %w", ErrInvalidConfig, err)
	}
	return nil
}

func (c Config) validate() error {
	c = c.withDefaults()
	if c.Size < 1 {
		return fmt.Errorf("Size must be at least 1, got %d", c.Size)
	}
	names := []struct{ what, name string }{
		{"Owner", c.Owner}, {"Elements", c.Elements}, {"Count", c.Count}, {"OpenedAt", c.OpenedAt},
	}
	if c.Time != "" {
		names = append(names, struct{ what, name string }{"MinTime", c.MinTime}, struct{ what, name string }{"MaxTime", c.MaxTime})
	}
	seen := map[string]string{}
	for _, n := range names {
		if err := plainField(n.name); err != nil {
			return fmt.Errorf("%s: %w", n.what, err)
		}
		if prev, dup := seen[n.name]; dup {
			return fmt.Errorf("%s and %s are both %q", prev, n.what, n.name)
		}
		seen[n.name] = n.what
	}
	for _, n := range []struct{ what, name string }{{"ElementID", c.ElementID}, {"Time", c.Time}} {
		if n.name != "" {
			if err := plainField(n.name); err != nil {
				return fmt.Errorf("%s: %w", n.what, err)
			}
		}
	}
	if c.Time != "" && c.Time == c.ElementID {
		return fmt.Errorf("ElementID and Time are both %q", c.Time)
	}
	return nil
}

// plainField rejects names that a query or update would read as a path or
// an operator.
func plainField(name string) error {
	switch {
	case name == "_id":
		return errors.New(`"_id" is reserved`)
	case strings.HasPrefix(name, "$"):
		return fmt.Errorf("%q starts with '$'", name)
	case strings.Contains(name, "."):
		return fmt.Errorf("%q contains '.'", name)
	}
	return nil
}

// Store appends elements of type E into buckets of one collection and
// reads them back. E is any type the driver marshals as a BSON value (a
// struct, a bson.D, a string…); with Config.ElementID set it must marshal
// as a document. A Store is safe for concurrent use, and any number of
// Stores, in any number of processes, may share the collection.
type Store[E any] struct {
	coll *mongo.Collection
	cfg  Config
}

// New returns a Store over coll. It validates cfg and does not touch the
// database; call EnsureIndexes once before relying on the reads' plans.
func New[E any](coll *mongo.Collection, cfg Config) (*Store[E], error) {
	if coll == nil {
		return nil, fmt.Errorf("bucket: new: %w: nil collection", ErrInvalidConfig)
	}
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	return &Store[E]{coll: coll, cfg: cfg.withDefaults()}, nil
}

// Collection returns the collection the Store writes to.
func (s *Store[E]) Collection() *mongo.Collection { return s.coll }

// Config returns the Store's configuration with defaults applied.
func (s *Store[E]) Config() Config { return s.cfg }

// PageIndex returns the keys of the index that serves page reads:
// {owner: 1, openedAt: -1}.
func (s *Store[E]) PageIndex() bson.D {
	return bson.D{{Key: s.cfg.Owner, Value: 1}, {Key: s.cfg.OpenedAt, Value: -1}}
}

// AppendIndex returns the keys of the index that serves the append
// filter {owner, count: {$lte: Size-k}}: {owner: 1, count: 1}. Its bounds
// on count stop below the full buckets, so an append examines only the
// owner's open buckets, however long the history.
func (s *Store[E]) AppendIndex() bson.D {
	return bson.D{{Key: s.cfg.Owner, Value: 1}, {Key: s.cfg.Count, Value: 1}}
}

// TimeIndex returns the keys of the index that serves Range, with
// Config.Time: {owner: 1, maxTime: 1, minTime: 1}; nil without Time.
func (s *Store[E]) TimeIndex() bson.D {
	if s.cfg.Time == "" {
		return nil
	}
	return bson.D{{Key: s.cfg.Owner, Value: 1}, {Key: s.cfg.MaxTime, Value: 1}, {Key: s.cfg.MinTime, Value: 1}}
}

// elementPath returns "elements.<id>".
func (s *Store[E]) elementPath() string { return s.cfg.Elements + "." + s.cfg.ElementID }

// EnsureIndexes creates the page index, the append index, with
// Config.ElementID the element index {owner: 1, "elements.<id>": 1}, and
// with Config.Time the time index. It is idempotent; an existing index
// with the same keys and other options fails with IndexOptionsConflict
// (85) or IndexKeySpecsConflict (86).
func (s *Store[E]) EnsureIndexes(ctx context.Context) error {
	models := []mongo.IndexModel{{Keys: s.PageIndex()}, {Keys: s.AppendIndex()}}
	if s.cfg.Time != "" {
		models = append(models, mongo.IndexModel{Keys: s.TimeIndex()})
	}
	if s.cfg.ElementID != "" {
		models = append(models, mongo.IndexModel{
			Keys: bson.D{{Key: s.cfg.Owner, Value: 1}, {Key: s.elementPath(), Value: 1}},
		})
	}
	if _, err := s.coll.Indexes().CreateMany(ctx, models); err != nil {
		return fmt.Errorf("bucket: ensure indexes: %w", err)
	}
	return nil
}

// Info describes one bucket as stored.
type Info struct {
	// ID is the bucket's _id.
	ID bson.RawValue
	// OpenedAt is when the bucket was opened, in UTC at millisecond
	// precision.
	OpenedAt time.Time
	// Count is the stored count field.
	Count int
	// MinTime and MaxTime are the bounds of the elements' times, with
	// Config.Time; zero when the bucket is empty or Time is not set.
	MinTime, MaxTime time.Time
}

// decodeInfo reads the bucket fields of a stored bucket.
func (s *Store[E]) decodeInfo(doc bson.Raw) (Info, error) {
	var in Info
	id, err := doc.LookupErr("_id")
	if err != nil {
		return in, errors.New("bucket without _id")
	}
	in.ID = id
	if v, err := doc.LookupErr(s.cfg.OpenedAt); err == nil {
		t, ok := v.TimeOK()
		if !ok {
			return in, fmt.Errorf("bucket %v: %s is %v, not a date", id, s.cfg.OpenedAt, v.Type)
		}
		in.OpenedAt = t.UTC()
	}
	if v, err := doc.LookupErr(s.cfg.Count); err == nil {
		n, ok := v.AsInt64OK()
		if !ok {
			return in, fmt.Errorf("bucket %v: %s is %v, not a number", id, s.cfg.Count, v.Type)
		}
		in.Count = int(n)
	}
	if s.cfg.Time != "" {
		for _, b := range []struct {
			name string
			to   *time.Time
		}{{s.cfg.MinTime, &in.MinTime}, {s.cfg.MaxTime, &in.MaxTime}} {
			if v, err := doc.LookupErr(b.name); err == nil {
				if t, ok := v.TimeOK(); ok {
					*b.to = t.UTC()
				}
			}
		}
	}
	return in, nil
}

// decodeElements decodes the elements array of a stored bucket.
func (s *Store[E]) decodeElements(doc bson.Raw) ([]E, error) {
	v, err := doc.LookupErr(s.cfg.Elements)
	if err != nil {
		return nil, nil
	}
	arr, ok := v.ArrayOK()
	if !ok {
		return nil, fmt.Errorf("bucket %v: %s is %v, not an array", doc.Lookup("_id"), s.cfg.Elements, v.Type)
	}
	vals, err := arr.Values()
	if err != nil {
		return nil, err
	}
	out := make([]E, len(vals))
	for i, rv := range vals {
		if err := rv.Unmarshal(&out[i]); err != nil {
			return nil, fmt.Errorf("bucket %v: element %d: %w", doc.Lookup("_id"), i, err)
		}
	}
	return out, nil
}
