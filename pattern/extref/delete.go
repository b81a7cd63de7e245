package extref

import (
	"context"
	"errors"
	"fmt"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo"
	"go.mongodb.org/mongo-driver/v2/mongo/options"

	"github.com/formworkdb/formwork/pattern"
)

// Delete deletes the source document sourceID and applies Config.OnDelete
// to its live referencing documents; it returns the deleted document.
// Under Refuse it first checks that no live document refers to the
// source and fails with ErrHasChildren if one does; after deleting it
// checks again, and if an Insert slipped in between it puts the source
// back and fails the same way, so that no referencing document outlives
// its source. Cascade deletes the live referencing documents, Detach
// detaches them.
//
// With transactions the source delete and the policy's writes commit
// together, and a second pass after the commit catches a referencing
// document inserted concurrently outside the transaction's snapshot;
// without, the source goes first and Insert's own re-read of its source
// removes a document inserted meanwhile. It wraps ErrNotFound when there
// is no such source.
func (r *Reference[S, R, C]) Delete(ctx context.Context, sourceID any) (S, error) {
	var out S
	var gone bson.Raw
	transacted, err := pattern.Atomic(ctx, r.client(), func(ctx context.Context) error {
		if r.cfg.OnDelete == Refuse {
			if err := r.refuse(ctx, sourceID); err != nil {
				return err
			}
		}
		var err error
		gone, err = r.sources.FindOneAndDelete(ctx, bson.D{{Key: "_id", Value: sourceID}}).Raw()
		if errors.Is(err, mongo.ErrNoDocuments) {
			return fmt.Errorf("source %v: %w", sourceID, ErrNotFound)
		}
		if err != nil {
			return err
		}
		if err := bson.Unmarshal(gone, &out); err != nil {
			return err
		}
		if r.cfg.OnDelete != Refuse {
			_, err = r.release(ctx, sourceID)
		}
		return err
	})
	if err != nil {
		return out, fmt.Errorf("extref: delete: %w", err)
	}
	switch {
	case r.cfg.OnDelete == Refuse:
		if err := r.refuse(ctx, sourceID); err != nil {
			if _, rerr := r.sources.InsertOne(ctx, gone); rerr != nil {
				return out, fmt.Errorf("extref: delete: %w; putting the source back failed (run Check): %v", err, rerr)
			}
			return out, fmt.Errorf("extref: delete: a referencing document was inserted meanwhile, source put back: %w", err)
		}
	case transacted:
		if _, err := r.release(ctx, sourceID); err != nil {
			return out, fmt.Errorf("extref: delete: source deleted, second pass failed (run Check with repair): %w", err)
		}
	}
	return out, nil
}

// refuse fails with ErrHasChildren when a live referencing document
// refers to source id.
func (r *Reference[S, R, C]) refuse(ctx context.Context, id any) error {
	n, err := r.refs.CountDocuments(ctx, r.tracked(id))
	if err != nil {
		return err
	}
	if n > 0 {
		return fmt.Errorf("source %v: %d live referencing documents: %w", id, n, ErrHasChildren)
	}
	return nil
}

// release applies Cascade or Detach to the live referencing documents of
// the deleted source id and returns how many it deleted or detached.
func (r *Reference[S, R, C]) release(ctx context.Context, id any) (int64, error) {
	filter := r.tracked(id)
	if r.cfg.OnDelete == Cascade {
		res, err := r.refs.DeleteMany(ctx, filter)
		if err != nil {
			return 0, err
		}
		return res.DeletedCount, nil
	}
	upd := bson.D{{Key: "$unset", Value: bson.D{{Key: r.cfg.Field, Value: ""}}}}
	if r.cfg.DetachMark != "" {
		upd = bson.D{{Key: "$set", Value: bson.D{{Key: r.cfg.Field + "." + r.cfg.DetachMark, Value: true}}}}
	}
	res, err := r.refs.UpdateMany(ctx, filter, upd)
	if err != nil {
		return 0, err
	}
	return res.ModifiedCount, nil
}

// Name says what the copy is: "extref orders.customer".
func (r *Reference[S, R, C]) Name() string {
	return "extref " + r.refs.Name() + "." + r.cfg.Field
}

// Apply brings the referencing documents up to date with a write already
// made on the source collection (pattern.Dependent):
//   - Insert: nothing; a new source has no referencing documents yet.
//   - Update: when a copied field differs between Before and After, the
//     copy is fanned out to every live referencing document, re-reading
//     the source until the copy fanned out is its current one, so that
//     concurrent changes of one source converge on its last value. A
//     change of uncopied fields writes nothing.
//   - Delete: Config.OnDelete: Cascade deletes and Detach detaches the
//     live referencing documents; Refuse, after the fact, reports those
//     left dangling with ErrHasChildren (inside a pattern.Source write
//     with transactions, that aborts the delete).
//
// It is idempotent and safe for concurrent use.
func (r *Reference[S, R, C]) Apply(ctx context.Context, c pattern.Change) error {
	var err error
	switch c.Op {
	case pattern.Insert:
	case pattern.Update:
		if c.Before == nil || c.After == nil {
			return errors.New("extref: apply: an update needs the before and after images")
		}
		_, err = r.applyUpdate(ctx, c.Before, c.After)
	case pattern.Delete:
		if c.Before == nil {
			return errors.New("extref: apply: a delete needs the before image")
		}
		id := c.Before.Lookup("_id")
		if r.cfg.OnDelete == Refuse {
			err = r.refuse(ctx, id)
		} else {
			_, err = r.release(ctx, id)
		}
	default:
		return fmt.Errorf("extref: apply: unknown op %v", c.Op)
	}
	if err != nil {
		return fmt.Errorf("extref: apply %v: %w", c.Op, err)
	}
	return nil
}

// ensure Reference is a Dependent.
var _ pattern.Dependent = (*Reference[bson.D, bson.D, bson.D])(nil)

// exists reports whether the source document id exists.
func (r *Reference[S, R, C]) exists(ctx context.Context, id any) (bool, error) {
	n, err := r.sources.CountDocuments(ctx, bson.D{{Key: "_id", Value: id}}, options.Count().SetLimit(1))
	return n > 0, err
}
