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
// open bucket may open one each. With Config.Time, e must carry a BSON
// date there, and the bucket's bounds take it in the same update.
func (s *Store[E]) Append(ctx context.Context, owner any, e E) (opened bool, err error) {
	span, err := s.inspect(e, timeSpan{})
	if err != nil {
		return false, fmt.Errorf("bucket: append: %w", err)
	}
	opened, err = s.push(ctx, owner, e, 1, span)
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
	var span timeSpan
	for _, e := range es {
		if span, err = s.inspect(e, span); err != nil {
			return false, fmt.Errorf("bucket: append many: %w", err)
		}
	}
	opened, err = s.push(ctx, owner, bson.D{{Key: "$each", Value: es}}, len(es), span)
	if err != nil {
		return false, fmt.Errorf("bucket: append many: %w", err)
	}
	return opened, nil
}

// push runs the upsert that adds k elements (value is one element, or a
// $each modifier for several) whose times span span.
func (s *Store[E]) push(ctx context.Context, owner any, value any, k int, span timeSpan) (bool, error) {
	filter, upd := s.appendWrite(owner, value, k, span)
	r, err := s.coll.UpdateOne(ctx, filter, upd, options.UpdateOne().SetUpsert(true))
	if err != nil {
		return false, err
	}
	return r.UpsertedCount > 0, nil
}

// appendWrite returns the filter and update of the upsert that adds k
// elements. The filter's count range is bounded by the append index
// {owner: 1, count: 1}, so full buckets are never examined.
func (s *Store[E]) appendWrite(owner any, value any, k int, span timeSpan) (bson.D, bson.D) {
	filter := bson.D{
		{Key: s.cfg.Owner, Value: owner},
		// $lte Size-k: room for all k elements; for k = 1 this is $lt Size.
		{Key: s.cfg.Count, Value: bson.D{{Key: "$lte", Value: int64(s.cfg.Size - k)}}},
	}
	upd := bson.D{
		{Key: "$push", Value: bson.D{{Key: s.cfg.Elements, Value: value}}},
		{Key: "$inc", Value: bson.D{{Key: s.cfg.Count, Value: int32(k)}}},
	}
	// count is not in $setOnInsert: $inc already creates it on insert, and
	// the same path in two operators is ConflictingUpdateOperators (40).
	if s.cfg.Time != "" {
		// $min/$max create a missing bound and otherwise widen it, in the
		// same atomic update as the push.
		upd = append(upd,
			bson.E{Key: "$min", Value: bson.D{{Key: s.cfg.MinTime, Value: span.min}}},
			bson.E{Key: "$max", Value: bson.D{{Key: s.cfg.MaxTime, Value: span.max}}},
			bson.E{Key: "$setOnInsert", Value: bson.D{{Key: s.cfg.OpenedAt, Value: span.min}}})
	} else {
		upd = append(upd, bson.E{Key: "$setOnInsert", Value: bson.D{{Key: s.cfg.OpenedAt, Value: s.cfg.Clock().UTC()}}})
	}
	return filter, upd
}

// timeSpan is the smallest and largest element time of an append.
type timeSpan struct {
	min, max bson.DateTime
	set      bool
}

// widen returns sp extended to t.
func (sp timeSpan) widen(t bson.DateTime) timeSpan {
	if !sp.set {
		return timeSpan{min: t, max: t, set: true}
	}
	sp.min, sp.max = min(sp.min, t), max(sp.max, t)
	return sp
}

// inspect makes sure that e marshals to a document carrying the id with
// Config.ElementID set, so Find can reach it later, and a BSON date at
// Config.Time with Time set; it returns sp widened to that date.
func (s *Store[E]) inspect(e E, sp timeSpan) (timeSpan, error) {
	if s.cfg.ElementID == "" && s.cfg.Time == "" {
		return sp, nil
	}
	doc, err := bson.Marshal(e)
	if err != nil {
		return sp, fmt.Errorf("element is not a document: %w", err)
	}
	if s.cfg.ElementID != "" {
		if _, err := bson.Raw(doc).LookupErr(s.cfg.ElementID); err != nil {
			return sp, fmt.Errorf("element has no %q field", s.cfg.ElementID)
		}
	}
	if s.cfg.Time != "" {
		v, err := bson.Raw(doc).LookupErr(s.cfg.Time)
		if err != nil {
			return sp, fmt.Errorf("element has no %q field", s.cfg.Time)
		}
		t, ok := v.DateTimeOK()
		if !ok {
			return sp, fmt.Errorf("element's %q is %v, not a date", s.cfg.Time, v.Type)
		}
		sp = sp.widen(bson.DateTime(t))
	}
	return sp, nil
}
