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

// Sentinel errors, the values every pattern package shares (see package
// pattern); match them with errors.Is.
var (
	// ErrParentNotFound is wrapped by Insert and InsertMany when a
	// referencing document names a source document that does not exist.
	ErrParentNotFound = pattern.ErrParentNotFound
	// ErrNotFound is wrapped by Update, Delete, Sync and Copy when the
	// source document they name does not exist.
	ErrNotFound = pattern.ErrNotFound
	// ErrHasChildren is wrapped when a source is deleted under the Refuse
	// policy while live referencing documents still refer to it.
	ErrHasChildren = pattern.ErrHasChildren
	// ErrInvalidConfig is wrapped by Config.Validate.
	ErrInvalidConfig = pattern.ErrInvalidConfig
)

// ErrVolatile is wrapped by Config.Validate, together with
// ErrInvalidConfig, when Fields names a field that Volatile marks as
// changing too often to copy.
var ErrVolatile = errors.New("field is marked volatile")

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
	// package modifies or deletes a document it matches. Validate checks
	// it is a well-formed filter.
	Frozen bson.D
	// OrderBy is the order in which List returns one source's referencing
	// documents, for example {createdAt: -1}; it follows <Field>._id in
	// the index. Values are 1 or -1. Optional.
	OrderBy bson.D
	// OnDelete is what the delete of a source does to its live
	// referencing documents: Refuse (the zero value), Cascade or Detach.
	OnDelete Policy
	// DetachMark, used by Detach, names a field set to true inside the
	// reference, which is then kept as it was ("customer.deleted": true).
	// Empty: Detach removes the whole reference.
	DetachMark string
}

// Validate reports the first problem with c, wrapping ErrInvalidConfig:
// an empty or dotted Field or field name, "_id" among Fields, a
// duplicate, a copied field that is volatile (also wrapping ErrVolatile),
// a Frozen filter mongod would refuse (an unknown operator, an argument of
// the wrong shape, at any depth), an OrderBy direction other than 1 or -1,
// an unknown OnDelete, or a DetachMark that is a copied field.
func (c Config) Validate() error {
	if err := c.validate(); err != nil {
		return fmt.Errorf("extref: config: %w", err)
	}
	return nil
}

// validate is Validate without the package prefix.
func (c Config) validate() error {
	bad := func(what string, err error) error { return fmt.Errorf("%s: %w: %w", what, err, ErrInvalidConfig) }
	if err := fieldName(c.Field); err != nil {
		return bad("Field", err)
	}
	if c.Field == "_id" {
		return bad("Field", errors.New(`"_id" cannot hold a reference`))
	}
	if len(c.Fields) == 0 {
		return bad("Fields", errors.New("copy at least one field"))
	}
	volatile := make(map[string]bool, len(c.Volatile))
	for _, v := range c.Volatile {
		volatile[v] = true
	}
	seen := make(map[string]bool, len(c.Fields))
	for _, f := range c.Fields {
		if err := fieldName(f); err != nil {
			return bad("Fields", err)
		}
		if f == "_id" {
			return bad("Fields", errors.New(`"_id" is always copied`))
		}
		if seen[f] {
			return bad("Fields", fmt.Errorf("%q listed twice", f))
		}
		seen[f] = true
		if volatile[f] {
			return bad("Fields", fmt.Errorf("%q: %w", f, ErrVolatile))
		}
	}
	if len(c.Frozen) > 0 {
		if err := checkFilter(c.Frozen); err != nil {
			return bad("Frozen", err)
		}
	}
	for _, e := range c.OrderBy {
		if err := fieldPath(e.Key); err != nil {
			return bad("OrderBy", err)
		}
		if d, ok := direction(e.Value); !ok || (d != 1 && d != -1) {
			return bad("OrderBy", fmt.Errorf("%q: direction must be 1 or -1", e.Key))
		}
	}
	if c.OnDelete < Refuse || c.OnDelete > Detach {
		return bad("OnDelete", fmt.Errorf("unknown policy %d", int(c.OnDelete)))
	}
	if c.DetachMark != "" {
		if err := fieldName(c.DetachMark); err != nil {
			return bad("DetachMark", err)
		}
		if c.DetachMark == "_id" || seen[c.DetachMark] {
			return bad("DetachMark", fmt.Errorf("%q is a copied field", c.DetachMark))
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
// collection (documents of type R, an Order) to one source collection
// (documents of type S, a Customer); C is the type of the embedded copy
// (a CustomerRef with the _id and the copied fields). Each may be the
// user's struct (bson tags respected) or bson.D.
//
// A Reference is a pattern.Dependent of the source collection: a
// pattern.Source of S declared with it keeps the copies up to date on
// every write of a source document. It holds no state besides its
// configuration and is safe for concurrent use.
type Reference[S, R, C any] struct {
	sources *mongo.Collection
	refs    *mongo.Collection
	cfg     Config
	copied  map[string]bool
}

// New returns a Reference copying cfg.Fields of documents in sources into
// cfg.Field of documents in refs. It returns cfg.Validate's error and does
// not touch the database.
func New[S, R, C any](sources, refs *mongo.Collection, cfg Config) (*Reference[S, R, C], error) {
	if sources == nil || refs == nil {
		return nil, fmt.Errorf("extref: new: nil collection: %w", ErrInvalidConfig)
	}
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	r := &Reference[S, R, C]{sources: sources, refs: refs, cfg: cfg, copied: make(map[string]bool)}
	for _, f := range cfg.Fields {
		r.copied[f] = true
	}
	return r, nil
}

// Config returns the Reference's configuration.
func (r *Reference[S, R, C]) Config() Config { return r.cfg }

// IndexKeys returns the key pattern EnsureIndexes creates on the
// referencing collection: {<Field>._id: 1} followed by Config.OrderBy.
func (r *Reference[S, R, C]) IndexKeys() bson.D {
	keys := bson.D{{Key: r.idPath(), Value: 1}}
	return append(keys, r.cfg.OrderBy...)
}

// EnsureIndexes creates the index of IndexKeys on the referencing
// collection. It is idempotent; an existing index with the same keys and
// other options fails with IndexOptionsConflict (85). It then has the
// server parse the Frozen filter, with a point query on an _id that
// cannot exist, so that what Validate leaves to the server (the
// expression of an $expr) fails here, wrapping ErrInvalidConfig, rather
// than in the first fan-out.
func (r *Reference[S, R, C]) EnsureIndexes(ctx context.Context) error {
	if _, err := r.refs.Indexes().CreateOne(ctx, mongo.IndexModel{Keys: r.IndexKeys()}); err != nil {
		return fmt.Errorf("extref: ensure indexes: %w", err)
	}
	if len(r.cfg.Frozen) == 0 {
		return nil
	}
	probe := r.live(bson.D{{Key: "_id", Value: bson.NewObjectID()}})
	err := r.refs.FindOne(ctx, probe).Err()
	var ce mongo.ServerError
	switch {
	case err == nil, errors.Is(err, mongo.ErrNoDocuments):
		return nil
	case errors.As(err, &ce):
		return fmt.Errorf("extref: ensure indexes: the server refuses Frozen: %w: %w", err, ErrInvalidConfig)
	}
	return fmt.Errorf("extref: ensure indexes: %w", err)
}

// client is the client both collections are reached through.
func (r *Reference[S, R, C]) client() *mongo.Client { return r.sources.Database().Client() }

// idPath is the dotted path of the referenced _id: "customer._id".
func (r *Reference[S, R, C]) idPath() string { return r.cfg.Field + "._id" }

// live returns filter restricted to referencing documents that are not
// frozen snapshots.
func (r *Reference[S, R, C]) live(filter bson.D) bson.D {
	if len(r.cfg.Frozen) == 0 {
		return filter
	}
	return append(filter, bson.E{Key: "$nor", Value: bson.A{r.cfg.Frozen}})
}

// tracked returns the filter of the live referencing documents of source
// id that this package maintains: not frozen, not detached.
func (r *Reference[S, R, C]) tracked(id any) bson.D {
	f := bson.D{{Key: r.idPath(), Value: id}}
	if r.cfg.DetachMark != "" {
		f = append(f, bson.E{Key: r.cfg.Field + "." + r.cfg.DetachMark, Value: bson.D{{Key: "$ne", Value: true}}})
	}
	return r.live(f)
}

// projection projects a source document onto _id and the copied fields.
func (r *Reference[S, R, C]) projection() bson.D {
	p := bson.D{{Key: "_id", Value: 1}}
	for _, f := range r.cfg.Fields {
		p = append(p, bson.E{Key: f, Value: 1})
	}
	return p
}

// reference builds the embedded reference from a source document: _id
// first, then the copied fields in Config order.
func (r *Reference[S, R, C]) reference(src bson.Raw) bson.D {
	ref := bson.D{{Key: "_id", Value: src.Lookup("_id")}}
	for _, f := range r.cfg.Fields {
		if v, err := src.LookupErr(f); err == nil {
			ref = append(ref, bson.E{Key: f, Value: v})
		}
	}
	return ref
}

// sameCopy reports whether two source documents give the same copy:
// every copied field missing from both, or equal (same BSON type and
// bytes) in both.
func (r *Reference[S, R, C]) sameCopy(a, b bson.Raw) bool {
	for _, f := range r.cfg.Fields {
		va, ea := a.LookupErr(f)
		vb, eb := b.LookupErr(f)
		if (ea == nil) != (eb == nil) || (ea == nil && !va.Equal(vb)) {
			return false
		}
	}
	return true
}
