package pattern

import (
	"context"
	"errors"
	"fmt"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo"
	"go.mongodb.org/mongo-driver/v2/mongo/options"
)

// BatchApplier is implemented by a Dependent that applies many changes
// more cheaply together than one by one (a bulk load); Source.InsertMany
// and Source.AppliedMany use it when present.
type BatchApplier interface {
	ApplyMany(ctx context.Context, cs []Change) error
}

// Settler is implemented by a Dependent that writes its copy from a read
// of other documents (a subset window refilled from the newest
// children). Two writers that change different documents can then both
// commit on what they read before the other's write: snapshot isolation
// orders only writes to one document (write skew), and without
// transactions nothing orders them at all. Settle, called with each
// change once its write is over (after the commit), reads again what that
// change could have left stale and rewrites it by compare-and-set.
type Settler interface {
	Settle(ctx context.Context, c Change) error
}

// Source is a collection of documents of type C with the Dependents
// derived from it. Each of its writes changes the source document and
// then applies the Change to every Dependent, inside one transaction where
// the deployment has them (see Atomic). Without transactions the source,
// always written first, stays the truth, and Check with repair rebuilds
// any copy a failure left behind.
type Source[C any] struct {
	coll *mongo.Collection
	deps []Dependent
}

// NewSource declares coll as the source of deps. C is the user's child
// struct (bson tags respected) or bson.D.
func NewSource[C any](coll *mongo.Collection, deps ...Dependent) *Source[C] {
	return &Source[C]{coll: coll, deps: deps}
}

// Collection returns the source collection.
func (s *Source[C]) Collection() *mongo.Collection { return s.coll }

// Dependents returns the declared copies, in declaration order.
func (s *Source[C]) Dependents() []Dependent { return s.deps }

// EnsureIndexes creates every Dependent's indexes.
func (s *Source[C]) EnsureIndexes(ctx context.Context) error {
	for _, d := range s.deps {
		if err := d.EnsureIndexes(ctx); err != nil {
			return fmt.Errorf("%s: %w", d.Name(), err)
		}
	}
	return nil
}

// Applied hands a write the application already made on the source to
// every Dependent: for code that cannot route its writes through the
// Source, and for change-stream-driven maintenance. Outside a session it
// also settles the change (see Settled); a caller that runs it inside
// its own transaction calls Settled after committing.
func (s *Source[C]) Applied(ctx context.Context, c Change) error {
	if err := s.apply(ctx, c); err != nil {
		return err
	}
	if mongo.SessionFromContext(ctx) != nil {
		return nil
	}
	return s.Settled(ctx, c)
}

// apply hands c to every Dependent.
func (s *Source[C]) apply(ctx context.Context, c Change) error {
	for _, d := range s.deps {
		if err := d.Apply(ctx, c); err != nil {
			return fmt.Errorf("%s: %s %v applied to the source, not to this copy (run Check with repair): %w",
				d.Name(), c.Op, c.ID(), err)
		}
	}
	return nil
}

// Settled hands changes whose writes are over (committed) to every
// Dependent that is a Settler, so that a copy written from a read that a
// concurrent writer made stale is read and written again. Source's own
// writes call it after their transaction commits.
func (s *Source[C]) Settled(ctx context.Context, cs ...Change) error {
	for _, d := range s.deps {
		st, ok := d.(Settler)
		if !ok {
			continue
		}
		for _, c := range cs {
			if err := st.Settle(ctx, c); err != nil {
				return fmt.Errorf("%s: settling %s %v (run Check with repair): %w", d.Name(), c.Op, c.ID(), err)
			}
		}
	}
	return nil
}

// AppliedMany hands several writes already made to every Dependent,
// through ApplyMany where a Dependent has it, and settles them as Applied
// does.
func (s *Source[C]) AppliedMany(ctx context.Context, cs []Change) error {
	if len(cs) == 0 {
		return nil
	}
	for _, d := range s.deps {
		var err error
		if b, ok := d.(BatchApplier); ok {
			err = b.ApplyMany(ctx, cs)
		} else {
			for _, c := range cs {
				if err = d.Apply(ctx, c); err != nil {
					break
				}
			}
		}
		if err != nil {
			return fmt.Errorf("%s: %d writes applied to the source, not all to this copy (run Check with repair): %w",
				d.Name(), len(cs), err)
		}
	}
	if mongo.SessionFromContext(ctx) != nil {
		return nil
	}
	return s.Settled(ctx, cs...)
}

// atomic runs fn in a transaction where the deployment has them.
func (s *Source[C]) atomic(ctx context.Context, fn func(ctx context.Context) error) error {
	_, err := Atomic(ctx, s.coll.Database().Client(), fn)
	return err
}

// Insert inserts child, giving it an ObjectID _id when it has none, and
// applies the insert to every Dependent. It returns the _id.
func (s *Source[C]) Insert(ctx context.Context, child C) (any, error) {
	doc, err := WithID(child)
	if err != nil {
		return nil, err
	}
	err = s.atomic(ctx, func(ctx context.Context) error {
		if _, err := s.coll.InsertOne(ctx, doc); err != nil {
			return err
		}
		return s.apply(ctx, Change{Op: Insert, After: doc})
	})
	if err != nil {
		return nil, err
	}
	return idOf(doc), nil
}

// InsertMany inserts children in one insertMany (ordered) and applies the
// inserts to every Dependent, in bulk where the Dependent can: the bulk
// load and backfill path.
func (s *Source[C]) InsertMany(ctx context.Context, children []C) ([]any, error) {
	docs := make([]any, len(children))
	cs := make([]Change, len(children))
	ids := make([]any, len(children))
	for i, c := range children {
		doc, err := WithID(c)
		if err != nil {
			return nil, err
		}
		docs[i], cs[i], ids[i] = doc, Change{Op: Insert, After: doc}, idOf(doc)
	}
	if len(docs) == 0 {
		return ids, nil
	}
	err := s.atomic(ctx, func(ctx context.Context) error {
		if _, err := s.coll.InsertMany(ctx, docs); err != nil {
			return err
		}
		return s.AppliedMany(ctx, cs)
	})
	if err != nil {
		return nil, err
	}
	return ids, nil
}

// Update applies update (operators or a pipeline) to the source document
// id, applies the change to every Dependent and returns the document as
// it now is. The before and after images come from a compare-and-set on
// the whole document, so each Dependent sees exactly this write's change
// even when other writers update the same document. A change of the
// parent field is a move to another parent. It wraps ErrNotFound.
func (s *Source[C]) Update(ctx context.Context, id any, update any) (C, error) {
	var out C
	var change Change
	err := s.atomic(ctx, func(ctx context.Context) error {
		before, after, err := s.swap(ctx, id, func(before bson.Raw) (*mongo.SingleResult, error) {
			return s.coll.FindOneAndUpdate(ctx, Unchanged(id, before), update,
				options.FindOneAndUpdate().SetReturnDocument(options.After)), nil
		})
		if err != nil {
			return err
		}
		if err := bson.Unmarshal(after, &out); err != nil {
			return err
		}
		change = Change{Op: Update, Before: before, After: after}
		return s.apply(ctx, change)
	})
	if err != nil {
		return out, err
	}
	return out, s.Settled(ctx, change)
}

// Replace replaces the source document id with child (whose _id, if set,
// must be id) and applies the change to every Dependent. It wraps
// ErrNotFound.
func (s *Source[C]) Replace(ctx context.Context, id any, child C) error {
	doc, err := bson.Marshal(child)
	if err != nil {
		return err
	}
	var change Change
	err = s.atomic(ctx, func(ctx context.Context) error {
		before, after, err := s.swap(ctx, id, func(before bson.Raw) (*mongo.SingleResult, error) {
			return s.coll.FindOneAndReplace(ctx, Unchanged(id, before), bson.Raw(doc),
				options.FindOneAndReplace().SetReturnDocument(options.After)), nil
		})
		if err != nil {
			return err
		}
		change = Change{Op: Update, Before: before, After: after}
		return s.apply(ctx, change)
	})
	if err != nil {
		return err
	}
	return s.Settled(ctx, change)
}

// Delete deletes the source document id and applies the delete to every
// Dependent. It returns the deleted document and wraps ErrNotFound.
func (s *Source[C]) Delete(ctx context.Context, id any) (C, error) {
	var out C
	var change Change
	err := s.atomic(ctx, func(ctx context.Context) error {
		gone, err := s.coll.FindOneAndDelete(ctx, bson.D{{Key: "_id", Value: id}}).Raw()
		if errors.Is(err, mongo.ErrNoDocuments) {
			return fmt.Errorf("delete %v: %w", id, ErrNotFound)
		}
		if err != nil {
			return err
		}
		if err := bson.Unmarshal(gone, &out); err != nil {
			return err
		}
		change = Change{Op: Delete, Before: gone}
		return s.apply(ctx, change)
	})
	if err != nil {
		return out, err
	}
	return out, s.Settled(ctx, change)
}

// Get reads the source document id. It wraps ErrNotFound.
func (s *Source[C]) Get(ctx context.Context, id any) (C, error) {
	var out C
	err := s.coll.FindOne(ctx, bson.D{{Key: "_id", Value: id}}).Decode(&out)
	if errors.Is(err, mongo.ErrNoDocuments) {
		return out, fmt.Errorf("get %v: %w", id, ErrNotFound)
	}
	return out, err
}

// Check checks (and with repair, repairs) every Dependent.
func (s *Source[C]) Check(ctx context.Context, repair bool) ([]Result, error) {
	out := make([]Result, 0, len(s.deps))
	for _, d := range s.deps {
		r, err := d.Check(ctx, repair)
		if err != nil {
			return out, fmt.Errorf("%s: %w", d.Name(), err)
		}
		out = append(out, r)
	}
	return out, nil
}

// maxSwaps bounds the compare-and-set retries of one Update under
// contention on one document.
const maxSwaps = 1000

// swap reads the document id, runs write with a filter matching it only
// while unchanged, and retries when another writer got there first. It
// returns the before and after images.
func (s *Source[C]) swap(ctx context.Context, id any, write func(before bson.Raw) (*mongo.SingleResult, error)) (before, after bson.Raw, err error) {
	for range maxSwaps {
		before, err = s.coll.FindOne(ctx, bson.D{{Key: "_id", Value: id}}).Raw()
		if errors.Is(err, mongo.ErrNoDocuments) {
			return nil, nil, fmt.Errorf("update %v: %w", id, ErrNotFound)
		}
		if err != nil {
			return nil, nil, err
		}
		res, err := write(before)
		if err != nil {
			return nil, nil, err
		}
		after, err = res.Raw()
		if errors.Is(err, mongo.ErrNoDocuments) {
			if err := ctx.Err(); err != nil {
				return nil, nil, err
			}
			continue // changed between the read and the write
		}
		if err != nil {
			return nil, nil, err
		}
		return before, after, nil
	}
	return nil, nil, fmt.Errorf("update %v: gave up after %d concurrent changes", id, maxSwaps)
}

// Unchanged is a filter matching the document id only while it is
// exactly before (every field, in order): the compare-and-set condition
// of a write that must not overwrite a concurrent change.
func Unchanged(id any, before bson.Raw) bson.D {
	return bson.D{{Key: "_id", Value: id}, {Key: "$expr", Value: bson.D{{Key: "$eq", Value: bson.A{
		"$$ROOT", bson.D{{Key: "$literal", Value: before}},
	}}}}}
}

// WithID marshals child and gives it a new ObjectID _id in front when it
// has none, as the driver would, so that a Change (or a copy) carries the
// stored _id.
func WithID(child any) (bson.Raw, error) {
	doc, err := bson.Marshal(child)
	if err != nil {
		return nil, err
	}
	if _, err := bson.Raw(doc).LookupErr("_id"); err == nil {
		return doc, nil
	}
	var d bson.D
	if err := bson.Unmarshal(doc, &d); err != nil {
		return nil, err
	}
	d = append(bson.D{{Key: "_id", Value: bson.NewObjectID()}}, d...)
	return bson.Marshal(d)
}

// idOf returns the _id of doc as a Go value.
func idOf(doc bson.Raw) any {
	var v any
	_ = doc.Lookup("_id").Unmarshal(&v)
	return v
}
