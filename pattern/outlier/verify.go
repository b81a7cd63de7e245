package outlier

import (
	"context"
	"errors"
	"fmt"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo"

	"github.com/formworkdb/formwork/pattern"
	"github.com/formworkdb/formwork/pattern/bucket"
)

// Kind classifies a Problem.
type Kind int

const (
	// KindCount: the counter is missing, not a number, or differs from
	// the embedded length plus the overflow total. Repair fixes it.
	KindCount Kind = iota + 1
	// KindFlag: the flag is missing, not a boolean, or disagrees with the
	// presence of overflow buckets (set with none, or unset with some,
	// which hides them from GetAll). Repair fixes it.
	KindFlag
	// KindOverThreshold: the embedded list holds more than Threshold
	// elements. Repair moves the excess to new overflow buckets (see
	// moveExcess for its atomicity).
	KindOverThreshold
	// KindShape: the list is not an array. Reported only.
	KindShape
	// KindOrphan: overflow buckets whose parent does not exist. Reported
	// only: whether to delete them or recreate the parent is the
	// caller's decision.
	KindOrphan
)

// String returns the kind's name.
func (k Kind) String() string {
	switch k {
	case KindCount:
		return "count"
	case KindFlag:
		return "flag"
	case KindOverThreshold:
		return "over-threshold"
	case KindShape:
		return "shape"
	case KindOrphan:
		return "orphan"
	}
	return fmt.Sprintf("Kind(%d)", int(k))
}

// Problem is one inconsistency of one parent.
type Problem struct {
	// Parent is the parent's _id.
	Parent bson.RawValue
	// Kind says what is wrong.
	Kind Kind
	// Detail explains it in words.
	Detail string
	// Repaired is set by Repair when it fixed the problem.
	Repaired bool
}

// Report is the result of Verify or Repair.
type Report struct {
	// Parents counts the parents examined.
	Parents int
	// Problems lists the parents' problems, in the order found.
	Problems []Problem
	// Overflow gathers the overflow buckets' own problems (count against
	// array length, size, shape) for the parents examined.
	Overflow bucket.Report
}

// OK reports whether every problem found, in parents and overflow, is
// repaired (or none was found).
func (r Report) OK() bool {
	for _, p := range r.Problems {
		if !p.Repaired {
			return false
		}
	}
	return r.Overflow.OK()
}

// Verify checks every parent's counter and flag against its embedded list
// and its overflow buckets, the embedded length against Threshold, the
// overflow buckets themselves, and looks for overflow without a parent.
// It reads every parent and, per parent, its overflow buckets; it writes
// nothing.
func (s *Store[P, E]) Verify(ctx context.Context) (Report, error) {
	r, err := s.verify(ctx, false)
	if err != nil {
		return r, fmt.Errorf("outlier: verify: %w", err)
	}
	return r, nil
}

// Repair runs Verify and fixes what it can: overflow bucket counts first,
// then each parent's counter and flag, in one update conditional on the
// counter and list length it read (a parent created without a counter is
// adopted this way), then an embedded list past Threshold, whose excess
// moves to overflow. See the package documentation for Appends in flight.
func (s *Store[P, E]) Repair(ctx context.Context) (Report, error) {
	r, err := s.verify(ctx, true)
	if err != nil {
		return r, fmt.Errorf("outlier: repair: %w", err)
	}
	return r, nil
}

func (s *Store[P, E]) verify(ctx context.Context, repair bool) (Report, error) {
	var r Report
	c, err := s.parents.Find(ctx, bson.D{})
	if err != nil {
		return r, err
	}
	defer c.Close(ctx)
	for c.Next(ctx) {
		doc := append(bson.Raw(nil), c.Current...)
		r.Parents++
		ps, err := s.verifyParent(ctx, doc, repair, &r.Overflow)
		if err != nil {
			return r, err
		}
		r.Problems = append(r.Problems, ps...)
	}
	if err := c.Err(); err != nil {
		return r, err
	}
	orphans, err := s.orphans(ctx)
	if err != nil {
		return r, err
	}
	r.Problems = append(r.Problems, orphans...)
	return r, nil
}

// state is what a parent should say about itself.
type state struct {
	embedded int  // length of the embedded list (0 when missing)
	listOK   bool // list present and an array
	total    int  // embedded + overflow elements
	buckets  int  // overflow buckets
}

// verifyParent checks (and with repair, fixes) one parent.
func (s *Store[P, E]) verifyParent(ctx context.Context, doc bson.Raw, repair bool, ov *bucket.Report) ([]Problem, error) {
	ps, err := s.verifyCounters(ctx, doc, repair, ov)
	if err != nil || !repair {
		return ps, err
	}
	for i := range ps {
		if ps[i].Kind == KindOverThreshold {
			if ps[i].Repaired, err = s.moveExcess(ctx, doc.Lookup("_id")); err != nil {
				return nil, err
			}
		}
	}
	return ps, nil
}

// verifyCounters checks (and with repair, fixes) one parent's counter and
// flag.
func (s *Store[P, E]) verifyCounters(ctx context.Context, doc bson.Raw, repair bool, ov *bucket.Report) ([]Problem, error) {
	id := doc.Lookup("_id")
	var br bucket.Report
	var err error
	if repair {
		br, err = s.overflow.RepairOwner(ctx, id)
	} else {
		br, err = s.overflow.VerifyOwner(ctx, id)
	}
	if err != nil {
		return nil, err
	}
	ov.Buckets += br.Buckets
	ov.Elements += br.Elements
	ov.Problems = append(ov.Problems, br.Problems...)

	for attempt := 0; ; attempt++ {
		st, ps := s.check(doc, br)
		fixable := false
		for _, p := range ps {
			fixable = fixable || p.Kind == KindCount || p.Kind == KindFlag
		}
		if !repair || !fixable {
			return ps, nil
		}
		ok, err := s.fix(ctx, doc, st)
		if err != nil {
			return nil, err
		}
		if ok {
			for i := range ps {
				if ps[i].Kind == KindCount || ps[i].Kind == KindFlag {
					ps[i].Repaired = true
				}
			}
			return ps, nil
		}
		if attempt == 3 {
			return ps, nil
		}
		// The parent changed under us: read it (and its overflow) again.
		err = s.parents.FindOne(ctx, bson.D{{Key: "_id", Value: id}}).Decode(&doc)
		if errors.Is(err, mongo.ErrNoDocuments) {
			return nil, nil
		}
		if err != nil {
			return nil, err
		}
		if br, err = s.overflow.VerifyOwner(ctx, id); err != nil {
			return nil, err
		}
	}
}

// check compares one parent with its overflow report.
func (s *Store[P, E]) check(doc bson.Raw, br bucket.Report) (state, []Problem) {
	id := doc.Lookup("_id")
	var ps []Problem
	add := func(k Kind, format string, args ...any) {
		ps = append(ps, Problem{Parent: id, Kind: k, Detail: fmt.Sprintf(format, args...)})
	}
	st := state{buckets: br.Buckets}
	if v, err := doc.LookupErr(s.cfg.List); err != nil {
		st.listOK = false // missing: an empty list, which Repair writes
	} else if arr, ok := v.ArrayOK(); !ok {
		add(KindShape, "%s is %v, not an array", s.cfg.List, v.Type)
		return st, ps
	} else if vals, err := arr.Values(); err != nil {
		add(KindShape, "%s: %v", s.cfg.List, err)
		return st, ps
	} else {
		st.listOK, st.embedded = true, len(vals)
	}
	st.total = st.embedded + br.Elements
	if st.embedded > s.cfg.Threshold {
		add(KindOverThreshold, "%s embeds %d elements, Threshold is %d", s.cfg.List, st.embedded, s.cfg.Threshold)
	}
	switch v, err := doc.LookupErr(s.cfg.Count); {
	case err != nil:
		add(KindCount, "%s is missing; %d embedded + %d overflow", s.cfg.Count, st.embedded, br.Elements)
	case !v.IsNumber():
		add(KindCount, "%s is %v, not a number", s.cfg.Count, v.Type)
	default:
		if n, ok := v.AsInt64OK(); !ok || float64(n) != v.AsFloat64() || n != int64(st.total) {
			add(KindCount, "%s is %v; %d embedded + %d overflow", s.cfg.Count, v, st.embedded, br.Elements)
		}
	}
	want := st.buckets > 0
	switch v, err := doc.LookupErr(s.cfg.Flag); {
	case err != nil:
		add(KindFlag, "%s is missing; %d overflow buckets", s.cfg.Flag, st.buckets)
	case v.Type != bson.TypeBoolean:
		add(KindFlag, "%s is %v, not a boolean", s.cfg.Flag, v.Type)
	case v.Boolean() != want:
		add(KindFlag, "%s is %v; %d overflow buckets", s.cfg.Flag, v.Boolean(), st.buckets)
	}
	return st, ps
}

// fix writes the counter and flag st calls for, conditional on the
// counter and list doc holds; false means the parent changed meanwhile.
func (s *Store[P, E]) fix(ctx context.Context, doc bson.Raw, st state) (bool, error) {
	filter := bson.D{{Key: "_id", Value: doc.Lookup("_id")}}
	if v, err := doc.LookupErr(s.cfg.Count); err != nil {
		filter = append(filter, bson.E{Key: s.cfg.Count, Value: bson.D{{Key: "$exists", Value: false}}})
	} else {
		filter = append(filter, bson.E{Key: s.cfg.Count, Value: v})
	}
	set := bson.D{
		{Key: s.cfg.Count, Value: int32(st.total)},
		{Key: s.cfg.Flag, Value: st.buckets > 0},
	}
	if st.listOK {
		filter = append(filter, bson.E{Key: s.cfg.List, Value: bson.D{{Key: "$size", Value: st.embedded}}})
	} else {
		filter = append(filter, bson.E{Key: s.cfg.List, Value: bson.D{{Key: "$exists", Value: false}}})
		set = append(set, bson.E{Key: s.cfg.List, Value: bson.A{}})
	}
	r, err := s.parents.UpdateOne(ctx, filter, bson.D{{Key: "$set", Value: set}})
	if err != nil {
		return false, err
	}
	return r.MatchedCount == 1, nil
}

// orphans reports overflow owners without a parent.
func (s *Store[P, E]) orphans(ctx context.Context) ([]Problem, error) {
	owner := s.cfg.Overflow.Owner
	res := s.overflow.Collection().Distinct(ctx, owner, bson.D{})
	if err := res.Err(); err != nil {
		return nil, err
	}
	raw, err := res.Raw()
	if err != nil {
		return nil, err
	}
	vals, err := raw.Values()
	if err != nil {
		return nil, err
	}
	var ps []Problem
	for _, id := range vals {
		n, err := s.parents.CountDocuments(ctx, bson.D{{Key: "_id", Value: id}})
		if err != nil {
			return nil, err
		}
		if n == 0 {
			ps = append(ps, Problem{Parent: id, Kind: KindOrphan,
				Detail: fmt.Sprintf("overflow buckets with %s %v have no parent", owner, id)})
		}
	}
	return ps, nil
}

// errChanged aborts a move whose parent changed after it was read.
var errChanged = errors.New("parent changed during the move")

// moveExcess moves the embedded elements past Threshold of parent id to
// new overflow buckets (bucket.Store.Load) and trims the list, setting the
// flag; the counter, a total, does not change. It runs in pattern.Atomic:
// with transactions the new buckets and the trim commit together. Without
// them the buckets are inserted first and the list trimmed only while the
// parent is exactly as read; when it changed, the new buckets are deleted
// again and the next Repair retries, and a crash between the two leaves
// the excess both embedded and in overflow (duplicated, never lost; the
// counter then disagrees, which Verify reports). It reports whether the
// list ends within Threshold.
func (s *Store[P, E]) moveExcess(ctx context.Context, id bson.RawValue) (bool, error) {
	doc, err := s.parents.FindOne(ctx, bson.D{{Key: "_id", Value: id}}).Raw()
	if errors.Is(err, mongo.ErrNoDocuments) {
		return false, nil
	}
	if err != nil {
		return false, err
	}
	arr, ok := doc.Lookup(s.cfg.List).ArrayOK()
	if !ok {
		return false, nil
	}
	vals, err := arr.Values()
	if err != nil {
		return false, nil
	}
	if len(vals) <= s.cfg.Threshold {
		return true, nil
	}
	excess := make([]E, 0, len(vals)-s.cfg.Threshold)
	for _, v := range vals[s.cfg.Threshold:] {
		var e E
		if err := v.Unmarshal(&e); err != nil {
			return false, nil // not an E: leave it to the caller
		}
		excess = append(excess, e)
	}
	_, err = pattern.Atomic(ctx, s.parents.Database().Client(), func(ctx context.Context) error {
		ids, err := s.overflow.Load(ctx, id, excess)
		if err != nil {
			return err
		}
		trim := bson.A{bson.D{{Key: "$set", Value: bson.D{
			{Key: s.cfg.List, Value: bson.D{{Key: "$slice", Value: bson.A{"$" + s.cfg.List, s.cfg.Threshold}}}},
			{Key: s.cfg.Flag, Value: true},
		}}}}
		same := bson.D{{Key: "_id", Value: id}, {Key: "$expr", Value: bson.D{{Key: "$eq", Value: bson.A{
			"$$ROOT", bson.D{{Key: "$literal", Value: doc}},
		}}}}}
		r, err := s.parents.UpdateOne(ctx, same, trim)
		if err != nil {
			return err
		}
		if r.MatchedCount == 0 {
			undo := bson.D{{Key: "_id", Value: bson.D{{Key: "$in", Value: ids}}}}
			if _, err := s.overflow.Collection().DeleteMany(ctx, undo); err != nil {
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
