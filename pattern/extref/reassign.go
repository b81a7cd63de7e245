package extref

import (
	"context"
	"errors"
	"fmt"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo"
	"go.mongodb.org/mongo-driver/v2/mongo/options"
)

// ErrFrozen is wrapped by Reassign when the referencing document is a
// frozen snapshot, which no write of the package modifies.
var ErrFrozen = errors.New("referencing document is frozen")

// Reassign moves the referencing document id to the source sourceID (an
// order to another customer): one findAndModify sets its reference to
// that source's copy, and it returns the document as it now is. Like
// Insert it then re-reads the source, rewriting the copy if the source
// changed meanwhile; if the source was deleted meanwhile it puts the
// previous reference back and wraps ErrParentNotFound. It wraps
// ErrParentNotFound when the source does not exist, ErrNotFound when the
// document does not, and ErrFrozen when the document is frozen.
func (r *Reference[S, R, C]) Reassign(ctx context.Context, id, sourceID any) (R, error) {
	var out R
	src, err := r.readSource(ctx, sourceID)
	if errors.Is(err, ErrNotFound) {
		return out, fmt.Errorf("extref: reassign: source %v: %w", sourceID, ErrParentNotFound)
	}
	if err != nil {
		return out, fmt.Errorf("extref: reassign: %w", err)
	}
	filter := r.live(bson.D{{Key: "_id", Value: id}})
	before, err := r.refs.FindOneAndUpdate(ctx, filter,
		bson.D{{Key: "$set", Value: bson.D{{Key: r.cfg.Field, Value: r.reference(src)}}}},
		options.FindOneAndUpdate().SetProjection(bson.D{{Key: r.cfg.Field, Value: 1}})).Raw()
	if errors.Is(err, mongo.ErrNoDocuments) {
		n, cerr := r.refs.CountDocuments(ctx, bson.D{{Key: "_id", Value: id}}, options.Count().SetLimit(1))
		switch {
		case cerr != nil:
			err = cerr
		case n == 0:
			err = fmt.Errorf("document %v: %w", id, ErrNotFound)
		default:
			err = fmt.Errorf("document %v: %w", id, ErrFrozen)
		}
		return out, fmt.Errorf("extref: reassign: %w", err)
	}
	if err != nil {
		return out, fmt.Errorf("extref: reassign: %w", err)
	}
	if err := r.settleMoved(ctx, id, src, before.Lookup(r.cfg.Field)); err != nil {
		return out, fmt.Errorf("extref: reassign: %w", err)
	}
	err = r.refs.FindOne(ctx, bson.D{{Key: "_id", Value: id}}).Decode(&out)
	if err != nil {
		return out, fmt.Errorf("extref: reassign: %w", err)
	}
	return out, nil
}

// settleMoved re-reads the source src a reassigned document id now
// copies until the copy is current; if the source is gone it restores
// the document's previous reference (prev, absent when it had none).
func (r *Reference[S, R, C]) settleMoved(ctx context.Context, id any, src bson.Raw, prev bson.RawValue) error {
	which := bson.D{{Key: "_id", Value: id}, {Key: r.idPath(), Value: src.Lookup("_id")}}
	for range maxRounds {
		now, err := r.readSource(ctx, src.Lookup("_id"))
		if errors.Is(err, ErrNotFound) {
			upd := bson.D{{Key: "$unset", Value: bson.D{{Key: r.cfg.Field, Value: ""}}}}
			if prev.Type != 0 {
				upd = bson.D{{Key: "$set", Value: bson.D{{Key: r.cfg.Field, Value: prev}}}}
			}
			if _, err := r.refs.UpdateOne(ctx, which, upd); err != nil {
				return fmt.Errorf("source %v deleted meanwhile, and restoring the previous reference failed (run Check with repair): %w", src.Lookup("_id"), err)
			}
			return fmt.Errorf("source %v deleted meanwhile, previous reference restored: %w", src.Lookup("_id"), ErrParentNotFound)
		}
		if err != nil {
			return err
		}
		if r.sameCopy(src, now) {
			return nil
		}
		if _, err := r.refs.UpdateOne(ctx, r.live(which), r.copyUpdate(now)); err != nil {
			return err
		}
		src = now
	}
	return fmt.Errorf("source %v kept changing for %d rounds (run Sync)", src.Lookup("_id"), maxRounds)
}
