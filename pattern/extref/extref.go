package extref

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo"

	"github.com/formworkdb/formwork/pattern"
)

// ErrVolatile is wrapped by Config.Validate when Fields names a field that
// Volatile marks as changing too often to copy.
var ErrVolatile = errors.New("field is marked volatile")

// ErrSourceNotFound is wrapped by the verbs that read a source document
// that does not exist.
var ErrSourceNotFound = errors.New("source document not found")

// Config describes one extended reference. Its slices and documents are
// owned by the caller and must not change after New.
type Config struct {
	// Field names the embedded reference in referencing documents, for
	// example "customer". It is a top-level field name.
	Field string
	// Fields lists the top-level source fields copied into the reference
	// besides _id, for example []string{"name"}. A field missing from the
	// source is missing from the copy.
	Fields []string
	// Volatile lists source fields that change too often to be copied
	// (a balance, a stock level). Validate rejects a Config that copies one.
	Volatile []string
	// Frozen, when not empty, is a query filter matching referencing
	// documents that are snapshots, for example
	// {status: {$in: ["delivered", "cancelled"]}}. No write of this
	// package modifies a document it matches.
	Frozen bson.D
	// OrderBy is the order in which List returns one source's referencing
	// documents, for example {createdAt: -1}; it follows <Field>._id in
	// the index. Values are 1 or -1. Optional.
	OrderBy bson.D
}

// Validate reports the first problem with c: an empty or dotted Field or
// field name, "_id" among Fields, a duplicate, a copied field that is
// volatile (wrapping ErrVolatile), or an OrderBy direction other than 1
// or -1.
func (c Config) Validate() error {
	if err := fieldName(c.Field); err != nil {
		return fmt.Errorf("extref: config: Field: %w", err)
	}
	if c.Field == "_id" {
		return errors.New(`extref: config: Field: "_id" cannot hold a reference`)
	}
	if len(c.Fields) == 0 {
		return errors.New("extref: config: Fields: copy at least one field")
	}
	volatile := make(map[string]bool, len(c.Volatile))
	for _, v := range c.Volatile {
		volatile[v] = true
	}
	seen := make(map[string]bool, len(c.Fields))
	for _, f := range c.Fields {
		if err := fieldName(f); err != nil {
			return fmt.Errorf("extref: config: Fields: %w", err)
		}
		if f == "_id" {
			return errors.New(`extref: config: Fields: "_id" is always copied`)
		}
		if seen[f] {
			return fmt.Errorf("extref: config: Fields: %q listed twice", f)
		}
		seen[f] = true
		if volatile[f] {
			return fmt.Errorf("extref: config: Fields: %q: %w", f, ErrVolatile)
		}
	}
	if len(c.Frozen) > 0 {
		if err := checkFilter(c.Frozen); err != nil {
			return fmt.Errorf("extref: config: Frozen: %w: %w", err, pattern.ErrInvalidConfig)
		}
	}
	for _, e := range c.OrderBy {
		if err := fieldPath(e.Key); err != nil {
			return fmt.Errorf("extref: config: OrderBy: %w", err)
		}
		if d, ok := direction(e.Value); !ok || (d != 1 && d != -1) {
			return fmt.Errorf("extref: config: OrderBy: %q: direction must be 1 or -1", e.Key)
		}
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

// fieldPath checks a dotted path.
func fieldPath(s string) error {
	for _, p := range strings.Split(s, ".") {
		if p == "" || strings.HasPrefix(p, "$") {
			return fmt.Errorf("%q: invalid field path", s)
		}
	}
	return nil
}

// direction reads an index direction written as any Go integer type.
func direction(v any) (int64, bool) {
	switch n := v.(type) {
	case int:
		return int64(n), true
	case int32:
		return int64(n), true
	case int64:
		return n, true
	}
	return 0, false
}

// Reference maintains the extended reference from one referencing
// collection to one source collection. It holds no state besides its
// configuration and is safe for concurrent use.
type Reference struct {
	sources *mongo.Collection
	refs    *mongo.Collection
	cfg     Config
	copied  map[string]bool
}

// New returns a Reference copying cfg.Fields of documents in sources into
// cfg.Field of documents in refs. It returns cfg.Validate's error.
func New(sources, refs *mongo.Collection, cfg Config) (*Reference, error) {
	if sources == nil || refs == nil {
		return nil, errors.New("extref: new: nil collection")
	}
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	r := &Reference{sources: sources, refs: refs, cfg: cfg, copied: make(map[string]bool)}
	for _, f := range cfg.Fields {
		r.copied[f] = true
	}
	return r, nil
}

// IndexKeys returns the key pattern EnsureIndexes creates on the
// referencing collection: {<Field>._id: 1} followed by Config.OrderBy.
func (r *Reference) IndexKeys() bson.D {
	keys := bson.D{{Key: r.idPath(), Value: 1}}
	return append(keys, r.cfg.OrderBy...)
}

// EnsureIndexes creates the index of IndexKeys on the referencing
// collection. It is idempotent; an existing index with the same keys and
// other options fails with IndexOptionsConflict (85).
func (r *Reference) EnsureIndexes(ctx context.Context) error {
	if _, err := r.refs.Indexes().CreateOne(ctx, mongo.IndexModel{Keys: r.IndexKeys()}); err != nil {
		return fmt.Errorf("extref: ensure indexes: %w", err)
	}
	return nil
}

// idPath is the dotted path of the referenced _id: "customer._id".
func (r *Reference) idPath() string { return r.cfg.Field + "._id" }

// live returns filter restricted to referencing documents that are not
// frozen snapshots.
func (r *Reference) live(filter bson.D) bson.D {
	if len(r.cfg.Frozen) == 0 {
		return filter
	}
	return append(filter, bson.E{Key: "$nor", Value: bson.A{r.cfg.Frozen}})
}

// projection projects a source document onto _id and the copied fields.
func (r *Reference) projection() bson.D {
	p := bson.D{{Key: "_id", Value: 1}}
	for _, f := range r.cfg.Fields {
		p = append(p, bson.E{Key: f, Value: 1})
	}
	return p
}

// reference builds the embedded reference from a projected source
// document: _id first, then the copied fields in Config order.
func (r *Reference) reference(src bson.Raw) bson.D {
	ref := bson.D{{Key: "_id", Value: src.Lookup("_id")}}
	for _, f := range r.cfg.Fields {
		if v, err := src.LookupErr(f); err == nil {
			ref = append(ref, bson.E{Key: f, Value: v})
		}
	}
	return ref
}
