package versioning

import (
	"errors"
	"fmt"
	"reflect"
	"strings"
	"time"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo"

	"github.com/formworkdb/formwork/pattern"
)

// Sentinel errors; match them with errors.Is. ErrNotFound and
// ErrInvalidConfig are the values every pattern package shares.
var (
	// ErrNotFound: the document a read or write names does not exist.
	ErrNotFound = pattern.ErrNotFound
	// ErrInvalidConfig is wrapped by Config.Validate and New.
	ErrInvalidConfig = pattern.ErrInvalidConfig
	// ErrUnknownVersion: a stored document's version is not declared
	// (older than the first, newer than the last: written by newer
	// code), or is not a number.
	ErrUnknownVersion = errors.New("unknown schema version")
	// ErrUpgrade: a version's upgrade function failed on a document.
	ErrUpgrade = errors.New("upgrade failed")
)

// DefaultJobs is the collection, in the versioned collection's database,
// where Migrate records its progress.
const DefaultJobs = pattern.JobsCollection

// Version is one schema version of the collection's documents.
type Version struct {
	// Number is the value of the version field; versions are declared
	// oldest first with consecutive numbers.
	Number int
	// Schema is optional: a value of the struct this version's documents
	// have (Contact{}), from which the validator's branch for the version
	// is generated. Without it the branch checks only the version.
	Schema any
	// Up upgrades a document of the previous version to this one, in
	// memory: reads decode through it, and Upgrade and Migrate write its
	// result when Pipeline is nil. It need not set the version field. The
	// first version has none.
	Up func(doc bson.D) (bson.D, error)
	// Pipeline is optional: the same upgrade as update pipeline stages
	// ($set, $unset, $replaceWith…), run on the server with no read.
	// Upgrade and Migrate use it when every step from a document's
	// version to the newest has one. It must do what Up does.
	Pipeline []bson.D
}

// Config describes a versioned collection.
type Config struct {
	// Field is the version field; "schemaVersion" if empty.
	Field string
	// Versions are the live and past versions, oldest first; the last is
	// the one the store's type T has and every write produces.
	Versions []Version
	// Missing is the version of a document without the field (or with
	// null): the first version's number if 0, so collections that
	// predate versioning need no stamping pass.
	Missing int
	// TimeField optionally names a date field (creation or last write)
	// from which Report computes each version's oldest document; without
	// it the _id's ObjectID timestamp is used, when _id is one.
	TimeField string
	// Batch is the number of documents Migrate upgrades per round trip;
	// 500 if 0.
	Batch int
	// Throttle is Migrate's pause between batches, to leave the server
	// to the application.
	Throttle time.Duration
	// Jobs names the collection where Migrate records its progress;
	// DefaultJobs if empty.
	Jobs string
}

// withDefaults fills the empty fields.
func (c Config) withDefaults() Config {
	if c.Field == "" {
		c.Field = "schemaVersion"
	}
	if c.Missing == 0 && len(c.Versions) > 0 {
		c.Missing = c.Versions[0].Number
	}
	if c.Batch <= 0 {
		c.Batch = 500
	}
	if c.Jobs == "" {
		c.Jobs = DefaultJobs
	}
	return c
}

// Validate reports whether c is usable; its error wraps ErrInvalidConfig.
func (c Config) Validate() error {
	if err := c.check(); err != nil {
		return fmt.Errorf("versioning: config: %w: %w", err, ErrInvalidConfig)
	}
	return nil
}

// check is Validate without the sentinel.
func (c Config) check() error {
	c = c.withDefaults()
	if c.Field == "" || c.Field == "_id" || strings.ContainsAny(c.Field, ".$\x00") {
		return fmt.Errorf("Field %q: want a plain top-level field other than _id", c.Field)
	}
	if len(c.Versions) == 0 {
		return errors.New("no Versions")
	}
	for i, v := range c.Versions {
		if i > 0 && v.Number != c.Versions[i-1].Number+1 {
			return fmt.Errorf("version %d follows %d: numbers must be consecutive", v.Number, c.Versions[i-1].Number)
		}
		if i > 0 && v.Up == nil {
			return fmt.Errorf("version %d has no Up", v.Number)
		}
	}
	first, last := c.Versions[0].Number, c.Versions[len(c.Versions)-1].Number
	if c.Missing < first || c.Missing > last {
		return fmt.Errorf("Missing %d is not a declared version (%d…%d)", c.Missing, first, last)
	}
	if c.Throttle < 0 {
		return errors.New("negative Throttle")
	}
	if c.TimeField != "" && strings.ContainsAny(c.TimeField, "$\x00") {
		return fmt.Errorf("TimeField %q", c.TimeField)
	}
	return nil
}

// Store is a collection whose documents carry a schema version, read
// into T, the newest version's struct (bson tags respected) or bson.D.
// It is safe for concurrent use.
type Store[T any] struct {
	coll *mongo.Collection
	cfg  Config
}

// New declares coll as versioned by cfg, its documents read into T.
func New[T any](coll *mongo.Collection, cfg Config) (*Store[T], error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	return &Store[T]{coll: coll, cfg: cfg.withDefaults()}, nil
}

// Collection returns the underlying collection.
func (s *Store[T]) Collection() *mongo.Collection { return s.coll }

// Field returns the version field.
func (s *Store[T]) Field() string { return s.cfg.Field }

// Latest returns the newest version's number.
func (s *Store[T]) Latest() int { return s.cfg.Versions[len(s.cfg.Versions)-1].Number }

// first returns the oldest version's number.
func (s *Store[T]) first() int { return s.cfg.Versions[0].Number }

// version returns the declaration of version n.
func (s *Store[T]) version(n int) Version { return s.cfg.Versions[n-s.first()] }

// AtVersion returns the filter matching the documents at version n: a
// missing or null field counts as Config.Missing.
func (s *Store[T]) AtVersion(n int) bson.D {
	if n == s.cfg.Missing {
		return bson.D{{Key: s.cfg.Field, Value: bson.D{{Key: "$in", Value: bson.A{nil, n}}}}}
	}
	return bson.D{{Key: s.cfg.Field, Value: n}}
}

// Outdated returns the filter matching every document not at the newest
// version.
func (s *Store[T]) Outdated() bson.D {
	return bson.D{{Key: s.cfg.Field, Value: bson.D{{Key: "$ne", Value: s.Latest()}}}}
}

// versionOf returns a stored document's version.
func (s *Store[T]) versionOf(doc bson.Raw) (int, error) {
	v, err := doc.LookupErr(s.cfg.Field)
	if err != nil || v.Type == bson.TypeNull {
		return s.cfg.Missing, nil
	}
	n, ok := v.AsInt64OK()
	if !ok {
		if f, isF := v.DoubleOK(); isF && f == float64(int64(f)) {
			n, ok = int64(f), true
		}
	}
	if !ok || n < int64(s.first()) || n > int64(s.Latest()) {
		return 0, fmt.Errorf("versioning: document %v has %s %v (declared %d…%d): %w",
			doc.Lookup("_id"), s.cfg.Field, v, s.first(), s.Latest(), ErrUnknownVersion)
	}
	return int(n), nil
}

// typeOf returns v's type.
func typeOf(v any) reflect.Type { return reflect.TypeOf(v) }
