package tree

import (
	"context"
	"errors"
	"fmt"
	"regexp"
	"strings"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo"
)

// Tree is a hierarchy of documents of type T in one collection, kept as
// parent references plus the representations Config asks for. T is the
// user's struct (bson tags respected) or bson.D. A Tree holds no state
// besides its configuration and is safe for concurrent use; concurrent
// moves of overlapping subtrees need transactions (see doc.go).
type Tree[T any] struct {
	coll *mongo.Collection
	cfg  Config
}

// New returns a Tree over coll. It returns cfg.Validate's error, which
// wraps ErrInvalidConfig.
func New[T any](coll *mongo.Collection, cfg Config) (*Tree[T], error) {
	if coll == nil {
		return nil, fmt.Errorf("tree: new: %w: nil collection", ErrInvalidConfig)
	}
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	return &Tree[T]{coll: coll, cfg: cfg.withDefaults()}, nil
}

// Config returns the configuration, with defaults filled in.
func (t *Tree[T]) Config() Config { return t.cfg }

// Collection returns the tree's collection.
func (t *Tree[T]) Collection() *mongo.Collection { return t.coll }

// Name says which tree this is: "tree <coll>".
func (t *Tree[T]) Name() string { return "tree " + t.coll.Name() }

// EnsureIndexes creates {<Parent>: 1} ($graphLookup's connectToField for
// descendants, and Children), and {<Children>: 1}, {<Ancestors>: 1} and
// {<Path>: 1} for the representations kept. Ancestors walk the _id index.
// It is idempotent.
func (t *Tree[T]) EnsureIndexes(ctx context.Context) error {
	var models []mongo.IndexModel
	for _, f := range []string{t.cfg.Parent, t.cfg.Children, t.cfg.Ancestors, t.cfg.Path} {
		if f != "" {
			models = append(models, mongo.IndexModel{Keys: bson.D{{Key: f, Value: 1}}})
		}
	}
	if _, err := t.coll.Indexes().CreateMany(ctx, models); err != nil {
		return fmt.Errorf("tree: ensure indexes: %w", err)
	}
	return nil
}

// Get reads node id as a T. It wraps ErrNotFound.
func (t *Tree[T]) Get(ctx context.Context, id any) (T, error) {
	var v T
	err := t.coll.FindOne(ctx, bson.D{{Key: "_id", Value: id}}).Decode(&v)
	if errors.Is(err, mongo.ErrNoDocuments) {
		return v, fmt.Errorf("tree: get %v: %w", id, ErrNotFound)
	}
	if err != nil {
		return v, fmt.Errorf("tree: get %v: %w", id, err)
	}
	return v, nil
}

// PathPrefix returns the regular expression matching every path that
// starts with prefix: "^" and prefix with every metacharacter escaped
// (regexp.QuoteMeta), so "." or "(" in a node's _id stays literal and
// the query stays an anchored, case-sensitive prefix that an index scans
// as one tight range.
func PathPrefix(prefix string) string { return "^" + regexp.QuoteMeta(prefix) }

// pathBelow returns the path prefix of id's descendants given id's own
// path: path + id + Separator.
func (t *Tree[T]) pathBelow(path, id string) string { return path + id + t.cfg.Separator }

// checkID refuses an _id a materialized path cannot hold.
func (t *Tree[T]) checkID(id bson.RawValue) error {
	if id.Type == 0 {
		return fmt.Errorf("%w: no _id", ErrBadID)
	}
	if t.cfg.Path == "" {
		return nil
	}
	s, ok := id.StringValueOK()
	if !ok || s == "" || strings.Contains(s, t.cfg.Separator) {
		return fmt.Errorf("%w: %v: a materialized path needs a non-empty string without %q", ErrBadID, id, t.cfg.Separator)
	}
	return nil
}

// key returns a map key for a BSON value: its type and bytes.
func key(v bson.RawValue) string { return string(rune(v.Type)) + string(v.Value) }

// literal wraps v so a pipeline takes it as a constant, never as a
// field path or an expression.
func literal(v any) bson.D { return bson.D{{Key: "$literal", Value: v}} }
