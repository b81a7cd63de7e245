package bucket

import (
	"context"

	"fmt"
	"sort"
	"time"

	"go.mongodb.org/mongo-driver/v2/bson"
)

// RangeFilter returns the filter of the Range read: the owner's buckets
// whose bounds overlap [from, to), {owner, maxTime: {$gte: from},
// minTime: {$lt: to}}. On the time index {owner: 1, maxTime: 1, minTime: 1}
// both conditions are index bounds, so only the overlapping buckets are
// fetched.
func (s *Store[E]) RangeFilter(owner any, from, to time.Time) bson.D {
	return bson.D{
		{Key: s.cfg.Owner, Value: owner},
		{Key: s.cfg.MaxTime, Value: bson.D{{Key: "$gte", Value: from}}},
		{Key: s.cfg.MinTime, Value: bson.D{{Key: "$lt", Value: to}}},
	}
}

// Range returns the owner's elements whose time (Config.Time) t has
// from <= t < to, in time order (equal times in stored order). It reads
// the buckets overlapping the range (RangeFilter) and drops their
// elements outside it. It needs Config.Time.
func (s *Store[E]) Range(ctx context.Context, owner any, from, to time.Time) ([]E, error) {
	if s.cfg.Time == "" {
		return nil, fmt.Errorf("bucket: range: %w: Config.Time is not set", ErrInvalidConfig)
	}
	c, err := s.coll.Find(ctx, s.RangeFilter(owner, from, to))
	if err != nil {
		return nil, fmt.Errorf("bucket: range: %w", err)
	}
	defer c.Close(ctx)
	type hit struct {
		at bson.DateTime
		e  E
	}
	var hits []hit
	lo, hi := bson.NewDateTimeFromTime(from), bson.NewDateTimeFromTime(to)
	for c.Next(ctx) {
		arr, ok := c.Current.Lookup(s.cfg.Elements).ArrayOK()
		if !ok {
			continue
		}
		vals, err := arr.Values()
		if err != nil {
			return nil, fmt.Errorf("bucket: range: %w", err)
		}
		for _, v := range vals {
			doc, ok := v.DocumentOK()
			if !ok {
				continue
			}
			t, ok := doc.Lookup(s.cfg.Time).DateTimeOK()
			if !ok || bson.DateTime(t) < lo || bson.DateTime(t) >= hi {
				continue
			}
			var e E
			if err := v.Unmarshal(&e); err != nil {
				return nil, fmt.Errorf("bucket: range: bucket %v: %w", c.Current.Lookup("_id"), err)
			}
			hits = append(hits, hit{bson.DateTime(t), e})
		}
	}
	if err := c.Err(); err != nil {
		return nil, fmt.Errorf("bucket: range: %w", err)
	}
	sort.SliceStable(hits, func(i, j int) bool { return hits[i].at < hits[j].at })
	out := make([]E, len(hits))
	for i, h := range hits {
		out[i] = h.e
	}
	return out, nil
}
