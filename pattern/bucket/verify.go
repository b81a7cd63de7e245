package bucket

import (
	"context"
	"errors"
	"fmt"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo"
)

// Kind classifies a Problem.
type Kind int

const (
	// KindCount: count is missing, not a number, or differs from the
	// length of the elements array. Repair fixes it.
	KindCount Kind = iota + 1
	// KindOverSize: the array holds more than Size elements (written
	// outside the Store, or Size lowered). Repair reports it and leaves
	// the bucket alone: splitting it cannot be done in one atomic write.
	KindOverSize
	// KindShape: elements is missing or not an array, or openedAt is
	// missing or not a date. Repair leaves it alone.
	KindShape
)

// String returns the kind's name.
func (k Kind) String() string {
	switch k {
	case KindCount:
		return "count"
	case KindOverSize:
		return "oversize"
	case KindShape:
		return "shape"
	}
	return fmt.Sprintf("Kind(%d)", int(k))
}

// Problem is one inconsistency in one bucket.
type Problem struct {
	// ID and Owner identify the bucket.
	ID, Owner bson.RawValue
	// Kind says what is wrong.
	Kind Kind
	// Count is the stored count (the zero RawValue when missing).
	Count bson.RawValue
	// Len is the length of the elements array (0 when it is not one).
	Len int
	// Detail explains the problem in words.
	Detail string
	// Repaired is set by Repair when it fixed the problem.
	Repaired bool
}

// Report is the result of Verify or Repair.
type Report struct {
	// Buckets counts the buckets examined.
	Buckets int
	// Elements sums the lengths of their elements arrays.
	Elements int
	// Problems lists what is wrong, in the order found.
	Problems []Problem
}

// OK reports whether every problem found is repaired (or none was found).
func (r Report) OK() bool {
	for _, p := range r.Problems {
		if !p.Repaired {
			return false
		}
	}
	return true
}

// Verify reads every bucket of the collection and reports those whose
// count disagrees with len(elements), that hold more than Size elements,
// or whose shape is broken. It reads whole buckets, so it costs a
// collection scan; it writes nothing.
func (s *Store[E]) Verify(ctx context.Context) (Report, error) {
	r, err := s.verify(ctx, bson.D{}, false)
	if err != nil {
		return r, fmt.Errorf("bucket: verify: %w", err)
	}
	return r, nil
}

// VerifyOwner is Verify restricted to one owner's buckets.
func (s *Store[E]) VerifyOwner(ctx context.Context, owner any) (Report, error) {
	r, err := s.verify(ctx, bson.D{{Key: s.cfg.Owner, Value: owner}}, false)
	if err != nil {
		return r, fmt.Errorf("bucket: verify: %w", err)
	}
	return r, nil
}

// Repair runs Verify and sets count to len(elements) in every bucket
// where they disagree. Each fix is one update conditional on the count and
// array length it read ({_id, count: old, elements: {$size: n}}), so an
// Append that lands in between is never undone: the bucket is read again
// and the fix retried. Problems it cannot fix stay in the report with
// Repaired false.
func (s *Store[E]) Repair(ctx context.Context) (Report, error) {
	r, err := s.verify(ctx, bson.D{}, true)
	if err != nil {
		return r, fmt.Errorf("bucket: repair: %w", err)
	}
	return r, nil
}

// RepairOwner is Repair restricted to one owner's buckets.
func (s *Store[E]) RepairOwner(ctx context.Context, owner any) (Report, error) {
	r, err := s.verify(ctx, bson.D{{Key: s.cfg.Owner, Value: owner}}, true)
	if err != nil {
		return r, fmt.Errorf("bucket: repair: %w", err)
	}
	return r, nil
}

func (s *Store[E]) verify(ctx context.Context, filter bson.D, repair bool) (Report, error) {
	var r Report
	c, err := s.coll.Find(ctx, filter)
	if err != nil {
		return r, err
	}
	defer c.Close(ctx)
	for c.Next(ctx) {
		doc := append(bson.Raw(nil), c.Current...)
		r.Buckets++
		ps, n := s.check(doc)
		r.Elements += n
		for _, p := range ps {
			if repair && p.Kind == KindCount {
				if p.Repaired, err = s.fixCount(ctx, doc); err != nil {
					return r, err
				}
			}
			r.Problems = append(r.Problems, p)
		}
	}
	return r, c.Err()
}

// check returns the problems of one bucket and its array length.
func (s *Store[E]) check(doc bson.Raw) ([]Problem, int) {
	base := Problem{ID: doc.Lookup("_id"), Owner: doc.Lookup(s.cfg.Owner)}
	var ps []Problem
	add := func(k Kind, detail string) {
		p := base
		p.Kind, p.Detail = k, detail
		ps = append(ps, p)
	}
	if v, err := doc.LookupErr(s.cfg.OpenedAt); err != nil {
		add(KindShape, s.cfg.OpenedAt+" is missing")
	} else if v.Type != bson.TypeDateTime {
		add(KindShape, fmt.Sprintf("%s is %v, not a date", s.cfg.OpenedAt, v.Type))
	}
	v, err := doc.LookupErr(s.cfg.Elements)
	if err != nil {
		add(KindShape, s.cfg.Elements+" is missing")
		return ps, 0
	}
	arr, ok := v.ArrayOK()
	if !ok {
		add(KindShape, fmt.Sprintf("%s is %v, not an array", s.cfg.Elements, v.Type))
		return ps, 0
	}
	vals, err := arr.Values()
	if err != nil {
		add(KindShape, fmt.Sprintf("%s: %v", s.cfg.Elements, err))
		return ps, 0
	}
	n := len(vals)
	for i := range ps {
		ps[i].Len = n
	}
	base.Len = n
	cnt, err := doc.LookupErr(s.cfg.Count)
	base.Count = cnt
	switch {
	case err != nil:
		add(KindCount, fmt.Sprintf("%s is missing, %s has %d", s.cfg.Count, s.cfg.Elements, n))
	case !cnt.IsNumber():
		add(KindCount, fmt.Sprintf("%s is %v, not a number", s.cfg.Count, cnt.Type))
	default:
		if c, ok := cnt.AsInt64OK(); !ok || float64(c) != cnt.AsFloat64() || c != int64(n) {
			add(KindCount, fmt.Sprintf("%s is %v, %s has %d", s.cfg.Count, cnt, s.cfg.Elements, n))
		}
	}
	if n > s.cfg.Size {
		add(KindOverSize, fmt.Sprintf("%s has %d elements, Size is %d", s.cfg.Elements, n, s.cfg.Size))
	}
	return ps, n
}

// fixCount sets count to len(elements) in the bucket doc was read from,
// retrying on the current version when a concurrent write changed it. It
// reports whether the bucket ends up consistent.
func (s *Store[E]) fixCount(ctx context.Context, doc bson.Raw) (bool, error) {
	id := doc.Lookup("_id")
	for attempt := 0; attempt < 5; attempt++ {
		v, err := doc.LookupErr(s.cfg.Elements)
		if err != nil {
			return false, nil
		}
		arr, ok := v.ArrayOK()
		if !ok {
			return false, nil
		}
		vals, err := arr.Values()
		if err != nil {
			return false, nil
		}
		n := len(vals)
		filter := bson.D{{Key: "_id", Value: id}}
		if cnt, err := doc.LookupErr(s.cfg.Count); err != nil {
			filter = append(filter, bson.E{Key: s.cfg.Count, Value: bson.D{{Key: "$exists", Value: false}}})
		} else {
			if c, ok := cnt.AsInt64OK(); ok && cnt.IsNumber() && float64(c) == cnt.AsFloat64() && c == int64(n) {
				return true, nil // already consistent
			}
			filter = append(filter, bson.E{Key: s.cfg.Count, Value: cnt})
		}
		filter = append(filter, bson.E{Key: s.cfg.Elements, Value: bson.D{{Key: "$size", Value: n}}})
		upd := bson.D{{Key: "$set", Value: bson.D{{Key: s.cfg.Count, Value: int32(n)}}}}
		r, err := s.coll.UpdateOne(ctx, filter, upd)
		if err != nil {
			return false, err
		}
		if r.MatchedCount == 1 {
			return true, nil
		}
		// Changed under us: read the current version and try again.
		err = s.coll.FindOne(ctx, bson.D{{Key: "_id", Value: id}}).Decode(&doc)
		if errors.Is(err, mongo.ErrNoDocuments) {
			return false, nil
		}
		if err != nil {
			return false, err
		}
	}
	return false, nil
}
