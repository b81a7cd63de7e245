package bucket

import (
	"context"
	"fmt"

	"go.mongodb.org/mongo-driver/v2/bson"
)

// Kind classifies a Problem.
type Kind int

const (
	// KindCount: count is missing, not a number, or differs from the
	// length of the elements array. Repair fixes it.
	KindCount Kind = iota + 1
	// KindOverSize: the array holds more than Size elements (written
	// outside the Store, or Size lowered). Repair moves the excess into
	// new buckets (see split for its atomicity).
	KindOverSize
	// KindShape: elements is missing or not an array, openedAt is
	// missing or not a date, or, with Config.Time, an element has no
	// date there. Repair leaves it alone.
	KindShape
	// KindBounds: with Config.Time, minTime or maxTime differs from the
	// smallest or largest element time (a missing bound hides the bucket
	// from Range). Repair recomputes them.
	KindBounds
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
	case KindBounds:
		return "bounds"
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

// Repair runs Verify and fixes what it can. A wrong count or wrong bounds
// are recomputed from the bucket's array in one pipeline update of that
// bucket ({$set: {count: {$size: "$elements"}, minTime: {$min: …}, …}}),
// so an Append, Remove or Replace landing in between is never undone. An
// oversized bucket is split: its excess moves to new buckets (see split).
// Problems it cannot fix stay in the report with Repaired false.
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
		if repair {
			if err := s.repairBucket(ctx, doc, ps); err != nil {
				return r, err
			}
		}
		r.Problems = append(r.Problems, ps...)
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
	if s.cfg.Time != "" {
		s.checkBounds(doc, vals, add)
	}
	return ps, n
}

// checkBounds adds the problems of the time bounds of a bucket with
// elements vals: elements without a date, bounds that are not the
// smallest and largest date.
func (s *Store[E]) checkBounds(doc bson.Raw, vals []bson.RawValue, add func(Kind, string)) {
	var span timeSpan
	undated := 0
	for _, v := range vals {
		t, ok := bson.RawValue{}, false
		if d, isDoc := v.DocumentOK(); isDoc {
			t = d.Lookup(s.cfg.Time)
			_, ok = t.DateTimeOK()
		}
		if !ok {
			undated++
			continue
		}
		span = span.widen(bson.DateTime(t.DateTime()))
	}
	if undated > 0 {
		add(KindShape, fmt.Sprintf("%d elements have no date in %q", undated, s.cfg.Time))
	}
	for _, b := range []struct {
		name string
		want bson.DateTime
	}{{s.cfg.MinTime, span.min}, {s.cfg.MaxTime, span.max}} {
		v, err := doc.LookupErr(b.name)
		switch {
		case err != nil && span.set:
			add(KindBounds, fmt.Sprintf("%s is missing, want %v", b.name, b.want.Time().UTC()))
		case err != nil:
		case !span.set:
			add(KindBounds, fmt.Sprintf("%s is %v, want none: no dated element", b.name, v))
		case v.Type != bson.TypeDateTime || v.DateTime() != int64(b.want):
			add(KindBounds, fmt.Sprintf("%s is %v, want %v", b.name, v, b.want.Time().UTC()))
		}
	}
}

// repairBucket fixes the problems ps of the bucket doc, marking those it
// fixed.
func (s *Store[E]) repairBucket(ctx context.Context, doc bson.Raw, ps []Problem) error {
	recompute, over := false, false
	for _, p := range ps {
		recompute = recompute || p.Kind == KindCount || p.Kind == KindBounds
		over = over || p.Kind == KindOverSize
	}
	if recompute {
		ok, err := s.recompute(ctx, doc)
		if err != nil {
			return err
		}
		for i := range ps {
			if ps[i].Kind == KindCount || ps[i].Kind == KindBounds {
				ps[i].Repaired = ok
			}
		}
	}
	if over {
		ok, err := s.split(ctx, doc.Lookup("_id"))
		if err != nil {
			return err
		}
		for i := range ps {
			if ps[i].Kind == KindOverSize {
				ps[i].Repaired = ok
			}
		}
	}
	return nil
}

// recompute sets count and, with Config.Time, the bounds of the bucket doc
// was read from to what its array holds at the moment of the update: one
// pipeline update of that bucket, so a concurrent write is never undone.
// It reports whether the bucket still exists with an array.
func (s *Store[E]) recompute(ctx context.Context, doc bson.Raw) (bool, error) {
	filter := bson.D{{Key: "_id", Value: doc.Lookup("_id")}, {Key: s.cfg.Elements, Value: bson.D{{Key: "$type", Value: "array"}}}}
	r, err := s.coll.UpdateOne(ctx, filter, bson.A{bson.D{{Key: "$set", Value: s.derived()}}})
	if err != nil {
		return false, err
	}
	return r.MatchedCount == 1, nil
}
