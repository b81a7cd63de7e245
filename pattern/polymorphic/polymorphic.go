package polymorphic

import (
	"context"
	"errors"
	"fmt"
	"reflect"
	"slices"
	"strings"
	"sync"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo"
	"go.mongodb.org/mongo-driver/v2/mongo/options"

	"github.com/formworkdb/formwork/pattern"
)

// Sentinel errors; match them with errors.Is. ErrNotFound and
// ErrInvalidConfig are the values every pattern package shares.
var (
	// ErrNotFound: the document a read or write names does not exist as
	// the variant asked for.
	ErrNotFound = pattern.ErrNotFound
	// ErrInvalidConfig is wrapped by Config.Validate, New and Register.
	ErrInvalidConfig = pattern.ErrInvalidConfig
	// ErrUnknownVariant: a stored document's discriminator names no
	// registered variant (or it has none), or a Go value's type is not a
	// registered variant's.
	ErrUnknownVariant = errors.New("unknown variant")
	// ErrWrongVariant: a filter or a value names another variant than
	// the one it is given to.
	ErrWrongVariant = errors.New("wrong variant")
)

// Validation actions and levels, as collMod and create spell them.
const (
	ActionError   = "error"
	ActionWarn    = "warn"
	LevelStrict   = "strict"
	LevelModerate = "moderate"
)

// Config describes a polymorphic collection.
type Config struct {
	// Field is the discriminator field; "type" if empty. Top-level, no
	// dots, no $.
	Field string
	// ValidationAction is what the server does with a document the
	// generated validator rejects: ActionError (the default) fails the
	// write with code 121, ActionWarn logs it and writes.
	ValidationAction string
	// ValidationLevel is LevelStrict (the default: every insert and
	// update) or LevelModerate (updates of documents already invalid
	// are not checked).
	ValidationLevel string
	// Indexes are the collection-wide indexes, on fields every variant
	// has (the owner, the creation time); they are not partial.
	Indexes []mongo.IndexModel
}

// withDefaults fills the empty fields.
func (c Config) withDefaults() Config {
	if c.Field == "" {
		c.Field = "type"
	}
	if c.ValidationAction == "" {
		c.ValidationAction = ActionError
	}
	if c.ValidationLevel == "" {
		c.ValidationLevel = LevelStrict
	}
	return c
}

// Validate reports whether c is usable; its error wraps ErrInvalidConfig.
func (c Config) Validate() error {
	c = c.withDefaults()
	if err := plainField(c.Field); err != nil {
		return fmt.Errorf("polymorphic: config: Field: %w: %w", err, ErrInvalidConfig)
	}
	if c.Field == "_id" {
		return fmt.Errorf("polymorphic: config: Field: the discriminator cannot be _id: %w", ErrInvalidConfig)
	}
	if c.ValidationAction != ActionError && c.ValidationAction != ActionWarn {
		return fmt.Errorf("polymorphic: config: ValidationAction %q: want %q or %q: %w", c.ValidationAction, ActionError, ActionWarn, ErrInvalidConfig)
	}
	if c.ValidationLevel != LevelStrict && c.ValidationLevel != LevelModerate {
		return fmt.Errorf("polymorphic: config: ValidationLevel %q: want %q or %q: %w", c.ValidationLevel, LevelStrict, LevelModerate, ErrInvalidConfig)
	}
	return nil
}

// plainField checks a top-level field name.
func plainField(name string) error {
	if name == "" || strings.ContainsAny(name, ".$\x00") {
		return fmt.Errorf("%q is not a plain top-level field name", name)
	}
	return nil
}

// Collection is a collection holding several variants told apart by a
// discriminator field, each decoded into its own Go type. It is safe for
// concurrent use once its variants are registered.
type Collection struct {
	coll *mongo.Collection
	cfg  Config

	mu       sync.RWMutex
	variants []*variant
	byName   map[string]*variant
	byType   map[reflect.Type]*variant
}

// variant is one registered variant.
type variant struct {
	name    string
	typ     reflect.Type
	indexes []Index
	decode  func(bson.Raw) (any, error)
}

// New declares coll as a polymorphic collection. Register its variants
// before using it.
func New(coll *mongo.Collection, cfg Config) (*Collection, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	return &Collection{coll: coll, cfg: cfg.withDefaults(),
		byName: map[string]*variant{}, byType: map[reflect.Type]*variant{}}, nil
}

// Collection returns the underlying collection.
func (c *Collection) Collection() *mongo.Collection { return c.coll }

// Field returns the discriminator field.
func (c *Collection) Field() string { return c.cfg.Field }

// Variants returns the registered variants' names in registration order.
func (c *Collection) Variants() []string {
	c.mu.RLock()
	defer c.mu.RUnlock()
	out := make([]string, len(c.variants))
	for i, v := range c.variants {
		out[i] = v.name
	}
	return out
}

// lookup returns the variant named name.
func (c *Collection) lookup(name string) (*variant, bool) {
	c.mu.RLock()
	defer c.mu.RUnlock()
	v, ok := c.byName[name]
	return v, ok
}

// Discriminator returns the discriminator of a stored document, and
// false when it has none or it is not a string.
func (c *Collection) Discriminator(doc bson.Raw) (string, bool) {
	return doc.Lookup(c.cfg.Field).StringValueOK()
}

// Decode decodes a stored document into its variant's Go type (a T
// value, not a pointer). It wraps ErrUnknownVariant.
func (c *Collection) Decode(doc bson.Raw) (any, error) {
	name, ok := c.Discriminator(doc)
	if !ok {
		return nil, fmt.Errorf("polymorphic: document %v has no string %s: %w", doc.Lookup("_id"), c.cfg.Field, ErrUnknownVariant)
	}
	v, ok := c.lookup(name)
	if !ok {
		return nil, fmt.Errorf("polymorphic: document %v: %s %q: %w", doc.Lookup("_id"), c.cfg.Field, name, ErrUnknownVariant)
	}
	return v.decode(doc)
}

// Insert inserts value, a registered variant's type or a pointer to one,
// with its discriminator, and returns the _id (an ObjectID when value
// had none). It wraps ErrUnknownVariant.
func (c *Collection) Insert(ctx context.Context, value any) (any, error) {
	t := reflect.TypeOf(value)
	for t != nil && t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	c.mu.RLock()
	v, ok := c.byType[t]
	c.mu.RUnlock()
	if !ok {
		return nil, fmt.Errorf("polymorphic: insert %v: %w", t, ErrUnknownVariant)
	}
	doc, err := c.stamp(v.name, value)
	if err != nil {
		return nil, err
	}
	if _, err := c.coll.InsertOne(ctx, doc); err != nil {
		return nil, err
	}
	return idOf(doc), nil
}

// Find returns every document filter matches, each decoded into its
// variant's type: the read that spans variants ("all of this customer's
// payment methods"). A document of an unknown variant fails the read with
// ErrUnknownVariant.
func (c *Collection) Find(ctx context.Context, filter bson.D, opts ...options.Lister[options.FindOptions]) ([]any, error) {
	if filter == nil {
		filter = bson.D{}
	}
	cur, err := c.coll.Find(ctx, filter, opts...)
	if err != nil {
		return nil, err
	}
	defer cur.Close(ctx)
	var out []any
	for cur.Next(ctx) {
		v, err := c.Decode(cur.Current)
		if err != nil {
			return out, err
		}
		out = append(out, v)
	}
	return out, cur.Err()
}

// EnsureIndexes creates the collection-wide indexes and every variant's
// partial indexes.
func (c *Collection) EnsureIndexes(ctx context.Context) error {
	models := append([]mongo.IndexModel(nil), c.cfg.Indexes...)
	c.mu.RLock()
	for _, v := range c.variants {
		for _, ix := range v.indexes {
			models = append(models, c.model(v.name, ix))
		}
	}
	c.mu.RUnlock()
	if len(models) == 0 {
		return nil
	}
	_, err := c.coll.Indexes().CreateMany(ctx, models)
	return err
}

// stamp marshals value with the discriminator name as its first field
// (after _id when it has one). A value whose own discriminator field
// names another variant fails with ErrWrongVariant.
func (c *Collection) stamp(name string, value any) (bson.Raw, error) {
	raw, err := pattern.WithID(value)
	if err != nil {
		return nil, err
	}
	return c.stampRaw(name, raw, nil)
}

// stampRaw is stamp of a marshalled value; a non-nil id replaces its _id.
func (c *Collection) stampRaw(name string, raw bson.Raw, id any) (bson.Raw, error) {
	var d bson.D
	if err := bson.Unmarshal(raw, &d); err != nil {
		return nil, err
	}
	out := make(bson.D, 0, len(d)+2)
	hasID := false
	for _, e := range d {
		if e.Key == "_id" {
			hasID = true
			if id != nil {
				e.Value = id
			}
		}
		if e.Key != c.cfg.Field {
			out = append(out, e)
			continue
		}
		if s, ok := e.Value.(string); !ok || (s != "" && s != name) {
			return nil, fmt.Errorf("polymorphic: a %s value says %s %v: %w", name, c.cfg.Field, e.Value, ErrWrongVariant)
		}
	}
	if id != nil && !hasID {
		out = slices.Insert(out, 0, bson.E{Key: "_id", Value: id})
	}
	at := 0
	if len(out) > 0 && out[0].Key == "_id" {
		at = 1
	}
	out = slices.Insert(out, at, bson.E{Key: c.cfg.Field, Value: name})
	return bson.Marshal(out)
}

// idOf returns the _id of doc as a Go value.
func idOf(doc bson.Raw) any {
	var v any
	_ = doc.Lookup("_id").Unmarshal(&v)
	return v
}
