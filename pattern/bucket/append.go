package bucket

import (
	"context"
	"fmt"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo/options"
)

// Append adds e to the owner's open bucket, opening a new bucket when none
// has room, in one update with upsert (see the package documentation). It
// reports whether it opened a bucket. Concurrent Appends never lose an
// element and never fill a bucket past Size; two of them that both find no
// open bucket may open one each.
func (s *Store[E]) Append(ctx context.Context, owner any, e E) (opened bool, err error) {
	if err := s.checkElement(e); err != nil {
		return false, fmt.Errorf("bucket: append: %w", err)
	}
	opened, err = s.push(ctx, owner, e, 1)
	if err != nil {
		return false, fmt.Errorf("bucket: append: %w", err)
	}
	return opened, nil
}

// AppendMany adds es, in order, to one bucket of the owner: an open bucket
// with room for all of them, or a new one. len(es) must be between 1 and
// Size. It reports whether it opened a bucket.
func (s *Store[E]) AppendMany(ctx context.Context, owner any, es []E) (opened bool, err error) {
	if len(es) == 0 || len(es) > s.cfg.Size {
		return false, fmt.Errorf("bucket: append many: %d elements, want 1 to %d", len(es), s.cfg.Size)
	}
	for _, e := range es {
		if err := s.checkElement(e); err != nil {
			return false, fmt.Errorf("bucket: append many: %w", err)
		}
	}
	opened, err = s.push(ctx, owner, bson.D{{Key: "$each", Value: es}}, len(es))
	if err != nil {
		return false, fmt.Errorf("bucket: append many: %w", err)
	}
	return opened, nil
}

// push runs the upsert that adds k elements (value is one element, or a
// $each modifier for several).
func (s *Store[E]) push(ctx context.Context, owner any, value any, k int) (bool, error) {
	filter, upd := s.appendWrite(owner, value, k)
	r, err := s.coll.UpdateOne(ctx, filter, upd, options.UpdateOne().SetUpsert(true))
	if err != nil {
		return false, err
	}
	return r.UpsertedCount > 0, nil
}

// appendWrite returns the filter and update of the upsert that adds k
// elements.
func (s *Store[E]) appendWrite(owner any, value any, k int) (bson.D, bson.D) {
	filter := bson.D{
		{Key: s.cfg.Owner, Value: owner},
		// $lte Size-k: room for all k elements; for k = 1 this is $lt Size.
		{Key: s.cfg.Count, Value: bson.D{{Key: "$lte", Value: int64(s.cfg.Size - k)}}},
	}
	upd := bson.D{
		{Key: "$push", Value: bson.D{{Key: s.cfg.Elements, Value: value}}},
		{Key: "$inc", Value: bson.D{{Key: s.cfg.Count, Value: int32(k)}}},
		// count is not here: $inc already creates it on insert, and the
		// same path in two operators is ConflictingUpdateOperators (40).
		{Key: "$setOnInsert", Value: bson.D{{Key: s.cfg.OpenedAt, Value: s.cfg.Clock().UTC()}}},
	}
	return filter, upd
}

// checkElement makes sure that, with Config.ElementID set, e marshals to
// a document that carries the id, so Find can reach it later.
func (s *Store[E]) checkElement(e E) error {
	if s.cfg.ElementID == "" {
		return nil
	}
	doc, err := bson.Marshal(e)
	if err != nil {
		return fmt.Errorf("element is not a document: %w", err)
	}
	if _, err := bson.Raw(doc).LookupErr(s.cfg.ElementID); err != nil {
		return fmt.Errorf("element has no %q field", s.cfg.ElementID)
	}
	return nil
}
