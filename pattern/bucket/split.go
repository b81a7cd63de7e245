package bucket

import (
	"context"
	"errors"
	"fmt"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo"

	"github.com/formworkdb/formwork/pattern"
)

// errChanged aborts a split whose bucket changed after it was read.
var errChanged = errors.New("bucket changed during the split")

// split moves the elements past Size of bucket id into new buckets of
// Size (same owner and openedAt, count and bounds computed), keeping the
// first Size in place. It runs in pattern.Atomic: with transactions the
// inserts and the trim commit together or not at all. Without them the
// new buckets are inserted first and the original is then trimmed only if
// it is still exactly as read; when it changed the inserts are deleted
// again, and a crash between insert and trim leaves the excess elements in
// both buckets (duplicated, never lost) for the caller to resolve. It
// reports whether the bucket ends up split.
func (s *Store[E]) split(ctx context.Context, id bson.RawValue) (bool, error) {
	var doc bson.Raw
	err := s.coll.FindOne(ctx, bson.D{{Key: "_id", Value: id}}).Decode(&doc)
	if errors.Is(err, mongo.ErrNoDocuments) {
		return false, nil
	}
	if err != nil {
		return false, err
	}
	arr, ok := doc.Lookup(s.cfg.Elements).ArrayOK()
	if !ok {
		return false, nil
	}
	vals, err := arr.Values()
	if err != nil || len(vals) <= s.cfg.Size {
		return err == nil, nil
	}
	_, err = pattern.Atomic(ctx, s.coll.Database().Client(), func(ctx context.Context) error {
		var ids bson.A
		var docs []any
		for from := s.cfg.Size; from < len(vals); from += s.cfg.Size {
			chunk := bson.A{}
			for _, v := range vals[from:min(from+s.cfg.Size, len(vals))] {
				chunk = append(chunk, v)
			}
			nid := bson.NewObjectID()
			ids = append(ids, nid)
			d := bson.D{{Key: "_id", Value: nid}, {Key: s.cfg.Owner, Value: doc.Lookup(s.cfg.Owner)},
				{Key: s.cfg.Count, Value: int32(len(chunk))}, {Key: s.cfg.Elements, Value: chunk}}
			if v, err := doc.LookupErr(s.cfg.OpenedAt); err == nil {
				d = append(d, bson.E{Key: s.cfg.OpenedAt, Value: v})
			}
			docs = append(docs, d)
		}
		if _, err := s.coll.InsertMany(ctx, docs); err != nil {
			return err
		}
		newOnes := bson.D{{Key: "_id", Value: bson.D{{Key: "$in", Value: ids}}}}
		if _, err := s.coll.UpdateMany(ctx, newOnes, bson.A{bson.D{{Key: "$set", Value: s.derived()}}}); err != nil {
			return err
		}
		trim := bson.A{
			bson.D{{Key: "$set", Value: bson.D{{Key: s.cfg.Elements, Value: bson.D{{Key: "$slice", Value: bson.A{"$" + s.cfg.Elements, s.cfg.Size}}}}}}},
			bson.D{{Key: "$set", Value: s.derived()}},
		}
		r, err := s.coll.UpdateOne(ctx, unchanged(id, doc), trim)
		if err != nil {
			return err
		}
		if r.MatchedCount == 0 {
			if _, err := s.coll.DeleteMany(ctx, newOnes); err != nil {
				return fmt.Errorf("%w; removing the copies: %w", errChanged, err)
			}
			return errChanged
		}
		return nil
	})
	if errors.Is(err, errChanged) {
		return false, nil
	}
	return err == nil, err
}

// unchanged matches the document id only while it is exactly doc.
func unchanged(id bson.RawValue, doc bson.Raw) bson.D {
	return bson.D{{Key: "_id", Value: id}, {Key: "$expr", Value: bson.D{{Key: "$eq", Value: bson.A{
		"$$ROOT", bson.D{{Key: "$literal", Value: doc}},
	}}}}}
}
