package computed

import (
	"context"
	"errors"
	"fmt"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo"
	"go.mongodb.org/mongo-driver/v2/mongo/options"

	"github.com/formworkdb/formwork/pattern"
)

// Rollup keeps, in each parent document of type P, running statistics
// (Config.Stats) of a numeric field of its children of type C. P and C
// are the user's structs (bson tags respected) or bson.D.
//
// A Rollup is a pattern.Dependent and a pattern.BatchApplier of the child
// collection, so it composes with other copies through pattern.NewSource;
// its own verbs (Insert, Edit, Move, Delete …) run on a Source of its
// own with the Rollup as the only Dependent. It holds no state besides
// its configuration and is safe for concurrent use.
type Rollup[P, C any] struct {
	parents  *mongo.Collection
	children *mongo.Collection
	cfg      Config
	src      *pattern.Source[C]
}

// Interface checks.
var (
	_ pattern.Dependent    = (*Rollup[bson.D, bson.D])(nil)
	_ pattern.BatchApplier = (*Rollup[bson.D, bson.D])(nil)
)

// New returns a Rollup of the children collection into the parents
// collection. It returns cfg.Validate's error, which wraps
// ErrInvalidConfig.
func New[P, C any](parents, children *mongo.Collection, cfg Config) (*Rollup[P, C], error) {
	if parents == nil || children == nil {
		return nil, fmt.Errorf("computed: new: %w: nil collection", ErrInvalidConfig)
	}
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	r := &Rollup[P, C]{parents: parents, children: children, cfg: cfg.withDefaults()}
	r.src = pattern.NewSource[C](children, r)
	return r, nil
}

// Config returns the configuration, with defaults filled in.
func (r *Rollup[P, C]) Config() Config { return r.cfg }

// Parents returns the parent collection.
func (r *Rollup[P, C]) Parents() *mongo.Collection { return r.parents }

// Children returns the child collection.
func (r *Rollup[P, C]) Children() *mongo.Collection { return r.children }

// Source returns the Source the Rollup's own verbs write through: the
// child collection with this Rollup as its only Dependent. To maintain
// other copies from the same writes, declare one Source with all of them
// (pattern.NewSource[C](children, window, rollup)) instead.
func (r *Rollup[P, C]) Source() *pattern.Source[C] { return r.src }

// Name says which copy this is: "computed <parents>.<Target>".
func (r *Rollup[P, C]) Name() string {
	return "computed " + r.parents.Name() + "." + r.cfg.Target
}

// EnsureIndexes creates {<Parent>: 1, <Value>: 1} on the child
// collection: the parent prefix serves Recompute, Check and DeleteParent,
// the value suffix finds a parent's smallest and largest value without a
// scan when Min or Max must be recomputed. It is idempotent.
func (r *Rollup[P, C]) EnsureIndexes(ctx context.Context) error {
	_, err := r.children.Indexes().CreateOne(ctx, mongo.IndexModel{
		Keys: bson.D{{Key: r.cfg.Parent, Value: 1}, {Key: r.cfg.Value, Value: 1}}})
	if err != nil {
		return fmt.Errorf("computed: ensure indexes: %w", err)
	}
	return nil
}

// path returns the dotted path of one stored field of the totals.
func (r *Rollup[P, C]) path(field string) string { return r.cfg.Target + "." + field }

// Get reads parent's totals: one document, projected to the totals. It
// wraps ErrParentNotFound.
func (r *Rollup[P, C]) Get(ctx context.Context, parent any) (Totals, error) {
	doc, err := r.parents.FindOne(ctx, bson.D{{Key: "_id", Value: parent}},
		options.FindOne().SetProjection(bson.D{{Key: r.cfg.Target, Value: 1}})).Raw()
	if errors.Is(err, mongo.ErrNoDocuments) {
		return Totals{}, fmt.Errorf("computed: get %v: %w", parent, ErrParentNotFound)
	}
	if err != nil {
		return Totals{}, fmt.Errorf("computed: get: %w", err)
	}
	s, err := r.storedOf(doc)
	if err != nil {
		return Totals{}, fmt.Errorf("computed: get %v: %w", parent, err)
	}
	return s.totals(), nil
}

// Parent reads the whole parent document id as a P, totals included. It
// wraps ErrParentNotFound.
func (r *Rollup[P, C]) Parent(ctx context.Context, id any) (P, error) {
	var p P
	err := r.parents.FindOne(ctx, bson.D{{Key: "_id", Value: id}}).Decode(&p)
	if errors.Is(err, mongo.ErrNoDocuments) {
		return p, fmt.Errorf("computed: parent %v: %w", id, ErrParentNotFound)
	}
	if err != nil {
		return p, fmt.Errorf("computed: parent %v: %w", id, err)
	}
	return p, nil
}
