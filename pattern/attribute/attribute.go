package attribute

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo"

	"github.com/formworkdb/formwork/pattern"
)

// Sentinel errors; match them with errors.Is. ErrNotFound and
// ErrInvalidConfig are the values every pattern package shares (see
// package pattern).
var (
	// ErrNotFound is returned (wrapped) when the document does not exist.
	ErrNotFound = pattern.ErrNotFound
	// ErrMissing is returned (wrapped) by Replace, Remove and Value when
	// the document exists without the attribute. It wraps ErrNotFound
	// (the element a write names does not exist), so errors.Is(err,
	// ErrNotFound) holds for both; errors.Is(err, ErrMissing) tells them
	// apart.
	ErrMissing = fmt.Errorf("attribute missing: %w", pattern.ErrNotFound)
	// ErrInvalidConfig is wrapped by Config.Validate, New and NewWildcard.
	ErrInvalidConfig = pattern.ErrInvalidConfig
	// ErrExists is returned (wrapped) by Add when the attribute is there,
	// and by Insert for an attribute given twice.
	ErrExists = errors.New("attribute exists")
	// ErrValue is returned (wrapped) for a value of the wrong kind, a
	// number stored as a string under NumericStrings Reject, or a value
	// that is not a scalar.
	ErrValue = errors.New("invalid attribute value")
	// ErrUndeclared is returned (wrapped) under Config.Strict for an
	// attribute not in Config.Kinds.
	ErrUndeclared = errors.New("undeclared attribute")
)

// Kind is the declared kind of an attribute's values.
type Kind int

const (
	// String values are Go strings.
	String Kind = iota + 1
	// Number values are Go integers, floats or bson.Decimal128; they
	// compare with each other whatever their BSON type.
	Number
	// Bool values are Go bools.
	Bool
	// Date values are time.Time or bson.DateTime.
	Date
)

// String returns the kind's name.
func (k Kind) String() string {
	switch k {
	case String:
		return "string"
	case Number:
		return "number"
	case Bool:
		return "bool"
	case Date:
		return "date"
	}
	return fmt.Sprintf("Kind(%d)", int(k))
}

// Policy says what happens to a string that holds a number.
type Policy int

const (
	// Reject fails the write or query with ErrValue.
	Reject Policy = iota
	// Normalize converts the string to a number: int64 when it is an
	// integer, float64 otherwise.
	Normalize
)

// Config describes attributes.
type Config struct {
	// Field names the attribute array (New: "attrs" if empty) or
	// sub-document (NewWildcard: "props" if empty).
	Field string
	// Key and Value name the fields of an element in the array form;
	// "k" and "v" if empty. NewWildcard rejects them.
	Key, Value string
	// Kinds declares the kind of an attribute's values, by attribute
	// name. An attribute not listed accepts any scalar, except a string
	// holding a number (see NumericStrings).
	Kinds map[string]Kind
	// Strict rejects attributes not in Kinds with ErrUndeclared.
	Strict bool
	// NumericStrings decides the fate of a string holding a number
	// ("500", "-2.5e3") given for a Number attribute or an undeclared
	// one. A String attribute keeps such strings ("02134" as a zip code).
	NumericStrings Policy
}

// Validate reports whether c is usable for the array form; its error
// wraps ErrInvalidConfig.
func (c Config) Validate() error { return c.validate(false) }

// validate checks c for the array or the wildcard form.
func (c Config) validate(wildcard bool) error {
	if err := c.check(wildcard); err != nil {
		return fmt.Errorf("%w: %w", err, ErrInvalidConfig)
	}
	return nil
}

// check is validate without the sentinel.
func (c Config) check(wildcard bool) error {
	c = c.withDefaults(wildcard)
	if wildcard && (c.Key != "" || c.Value != "") {
		return errors.New("attribute: config: Key and Value apply to the array form only")
	}
	names := []struct{ what, name string }{{"Field", c.Field}}
	if !wildcard {
		names = append(names, struct{ what, name string }{"Key", c.Key}, struct{ what, name string }{"Value", c.Value})
	}
	for _, n := range names {
		if n.name == "_id" || strings.HasPrefix(n.name, "$") || strings.Contains(n.name, ".") {
			return fmt.Errorf("attribute: config: %s: %q is not a plain field name", n.what, n.name)
		}
	}
	if !wildcard && c.Key == c.Value {
		return fmt.Errorf("attribute: config: Key and Value are both %q", c.Key)
	}
	for name, k := range c.Kinds {
		if k < String || k > Date {
			return fmt.Errorf("attribute: config: Kinds[%q]: unknown %v", name, k)
		}
		if err := checkName(name, wildcard); err != nil {
			return fmt.Errorf("attribute: config: Kinds: %w", err)
		}
	}
	if c.NumericStrings != Reject && c.NumericStrings != Normalize {
		return fmt.Errorf("attribute: config: unknown NumericStrings policy %d", c.NumericStrings)
	}
	return nil
}

// withDefaults fills empty names.
func (c Config) withDefaults(wildcard bool) Config {
	if c.Field == "" {
		c.Field = "attrs"
		if wildcard {
			c.Field = "props"
		}
	}
	if !wildcard {
		if c.Key == "" {
			c.Key = "k"
		}
		if c.Value == "" {
			c.Value = "v"
		}
	}
	return c
}

// checkName rejects attribute names the form cannot store: empty ones,
// and, in the wildcard form where the name is a field name, names with
// '.' or a leading '$'.
func checkName(name string, wildcard bool) error {
	if name == "" {
		return errors.New("empty attribute name")
	}
	if wildcard && (strings.Contains(name, ".") || strings.HasPrefix(name, "$")) {
		return fmt.Errorf("attribute name %q cannot be a field name (no '.', no leading '$')", name)
	}
	return nil
}

// Store reads and writes the documents of one collection, of type D (the
// user's struct holding the attribute array, or bson.D), and their
// attributes. It is safe for concurrent use.
type Store[D any] struct {
	coll     *mongo.Collection
	cfg      Config
	wildcard bool
}

// New returns a Store for the array form, attrs: [{k, v}]. It validates
// cfg and does not touch the database. D's attribute field is typically
// []Attr, whose bson tags are the default "k" and "v".
func New[D any](coll *mongo.Collection, cfg Config) (*Store[D], error) {
	return build[D](coll, cfg, false)
}

// NewWildcard returns a Store for the sub-document form, props: {name:
// value}, indexed by {"props.$**": 1}. Attribute names must then be valid
// field names. The query builder and the verbs are the same.
func NewWildcard[D any](coll *mongo.Collection, cfg Config) (*Store[D], error) {
	return build[D](coll, cfg, true)
}

// build validates cfg and returns a Store of the form.
func build[D any](coll *mongo.Collection, cfg Config, wildcard bool) (*Store[D], error) {
	if coll == nil {
		return nil, fmt.Errorf("attribute: new: nil collection: %w", ErrInvalidConfig)
	}
	if err := cfg.validate(wildcard); err != nil {
		return nil, err
	}
	return &Store[D]{coll: coll, cfg: cfg.withDefaults(wildcard), wildcard: wildcard}, nil
}

// Config returns the Store's configuration, with the default names
// filled in.
func (s *Store[D]) Config() Config { return s.cfg }

// Collection returns the Store's collection.
func (s *Store[D]) Collection() *mongo.Collection { return s.coll }

// Wildcard reports whether the Store uses the sub-document form.
func (s *Store[D]) Wildcard() bool { return s.wildcard }

// Index returns the keys of the one index the pattern needs:
// {"attrs.k": 1, "attrs.v": 1}, or {"props.$**": 1}.
func (s *Store[D]) Index() bson.D {
	if s.wildcard {
		return bson.D{{Key: s.cfg.Field + ".$**", Value: 1}}
	}
	return bson.D{{Key: s.keyPath(), Value: 1}, {Key: s.valuePath(), Value: 1}}
}

// EnsureIndexes creates the index returned by Index. It is idempotent.
func (s *Store[D]) EnsureIndexes(ctx context.Context) error {
	if _, err := s.coll.Indexes().CreateOne(ctx, mongo.IndexModel{Keys: s.Index()}); err != nil {
		return fmt.Errorf("attribute: ensure indexes: %w", err)
	}
	return nil
}

// keyPath is the dotted path of the elements' names: "attrs.k".
func (s *Store[D]) keyPath() string { return s.cfg.Field + "." + s.cfg.Key }

// valuePath is the dotted path of the elements' values: "attrs.v".
func (s *Store[D]) valuePath() string { return s.cfg.Field + "." + s.cfg.Value }

// fieldPath returns "props.<name>" in the wildcard form.
func (s *Store[D]) fieldPath(name string) string { return s.cfg.Field + "." + name }
