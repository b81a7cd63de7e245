package subset

import (
	"context"
	"errors"
	"fmt"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo/options"

	"github.com/formworkdb/formwork/pattern"
)

// maxProblems bounds the problems a Report lists; Found counts them all.
const maxProblems = 1000

// Kind says what a Problem is.
type Kind int

const (
	// KindWindow: a parent's window is not exactly the copies of its
	// newest Config.Size children, in order (a lost push, a stale copy,
	// a wrong order, more or fewer than N). Repair refills it.
	KindWindow Kind = iota + 1
	// KindOrphan: children reference a parent that does not exist.
	// Reported unless Config.OnParentDelete is Detach, under which they
	// are expected; Repair deletes them under Cascade (finishing a
	// cascade cut short) and leaves them under Refuse, where deleting
	// children or recreating the parent is the caller's decision.
	KindOrphan
	// KindTimeType: a child's Config.Time is missing or of another type
	// than Config.TimeType, so the child sorts apart from the others.
	// Reported only: which time it should have is the caller's decision.
	KindTimeType
)

// String returns the kind's name.
func (k Kind) String() string {
	switch k {
	case KindWindow:
		return "window"
	case KindOrphan:
		return "orphan"
	case KindTimeType:
		return "time-type"
	}
	return fmt.Sprintf("Kind(%d)", int(k))
}

// Problem is one inconsistency found by Verify or Repair.
type Problem struct {
	// Kind says what is wrong.
	Kind Kind
	// Parent is the parent's _id (for KindTimeType, the child's parent
	// link; zero when the child has none).
	Parent bson.RawValue
	// Child is the child's _id, for KindTimeType.
	Child bson.RawValue
	// Count is the number of orphaned children, for KindOrphan.
	Count int64
	// Repaired says whether Repair fixed it.
	Repaired bool
}

// String describes the problem in one line.
func (p Problem) String() string {
	fix := ""
	if p.Repaired {
		fix = " (repaired)"
	}
	switch p.Kind {
	case KindWindow:
		return fmt.Sprintf("parent %v: window differs from its newest children%s", p.Parent, fix)
	case KindOrphan:
		return fmt.Sprintf("parent %v does not exist; %d children reference it%s", p.Parent, p.Count, fix)
	case KindTimeType:
		return fmt.Sprintf("child %v of parent %v: time field missing or of the wrong type", p.Child, p.Parent)
	}
	return p.Kind.String()
}

// Report is the outcome of Verify or Repair.
type Report struct {
	// Checked counts the parents compared.
	Checked int64
	// Found counts the problems found, and Repaired those fixed.
	Found, Repaired int64
	// Problems lists the first 1000 problems found, windows in parent
	// _id order, then orphans, then children breaking the time rule.
	Problems []Problem
	// Detached counts children whose parent does not exist under the
	// Detach policy, where that is no problem.
	Detached int64
}

// OK reports whether nothing is left to fix.
func (r Report) OK() bool { return r.Found == r.Repaired }

// add records a problem.
func (r *Report) add(p Problem) {
	r.Found++
	if p.Repaired {
		r.Repaired++
	}
	if len(r.Problems) < maxProblems {
		r.Problems = append(r.Problems, p)
	}
}

// Verify compares every parent's window with the newest Config.Size
// children in the child collection (one index query per parent), finds
// children whose parent does not exist, and children breaking the time
// rule. It writes nothing.
func (w *Window[P, C]) Verify(ctx context.Context) (Report, error) {
	rep, err := w.check(ctx, false)
	if err != nil {
		return rep, fmt.Errorf("subset: verify: %w", err)
	}
	return rep, nil
}

// Repair runs Verify's checks and fixes what it can: it refills every
// window that differs (by compare-and-set, so it is safe while the
// windows take writes) and, under Cascade, deletes orphaned children.
func (w *Window[P, C]) Repair(ctx context.Context) (Report, error) {
	rep, err := w.check(ctx, true)
	if err != nil {
		return rep, fmt.Errorf("subset: repair: %w", err)
	}
	return rep, nil
}

// Backfill builds every parent's window from the child collection, for
// children loaded without the window (an import, a new window on an old
// collection): one pass over the parents, one index query and at most
// one write per parent. It returns the number of windows written. It is
// Repair without the orphan and time checks, and as safe under
// concurrent writes.
func (w *Window[P, C]) Backfill(ctx context.Context) (int64, error) {
	var rep Report
	if err := w.windows(ctx, &rep, true); err != nil {
		return rep.Repaired, fmt.Errorf("subset: backfill: %w", err)
	}
	return rep.Repaired, nil
}

// Check is Verify (repair false) or Repair (repair true) summarised as a
// pattern.Result (pattern.Dependent).
func (w *Window[P, C]) Check(ctx context.Context, repair bool) (pattern.Result, error) {
	rep, err := w.check(ctx, repair)
	res := pattern.Result{Name: w.Name(), Checked: int(rep.Checked), Problems: int(rep.Found), Repaired: int(rep.Repaired)}
	for _, p := range rep.Problems {
		if len(res.Details) == 200 {
			break
		}
		res.Details = append(res.Details, p.String())
	}
	if err != nil {
		return res, fmt.Errorf("subset: check: %w", err)
	}
	return res, nil
}

// check runs the three checks, repairing when asked.
func (w *Window[P, C]) check(ctx context.Context, repair bool) (Report, error) {
	var rep Report
	if err := w.windows(ctx, &rep, repair); err != nil {
		return rep, err
	}
	if err := w.orphans(ctx, &rep, repair); err != nil {
		return rep, err
	}
	return rep, w.badTimes(ctx, &rep)
}

// windows compares each parent's window with its newest children, in
// _id order, and with repair writes the newest children by
// compare-and-set against the window as read (refill's loop when that
// loses a race).
func (w *Window[P, C]) windows(ctx context.Context, rep *Report, repair bool) error {
	cur, err := w.parents.Find(ctx, bson.D{}, options.Find().
		SetProjection(bson.D{{Key: w.cfg.Array, Value: 1}}).
		SetSort(bson.D{{Key: "_id", Value: 1}}))
	if err != nil {
		return err
	}
	defer cur.Close(ctx)
	for cur.Next(ctx) {
		rep.Checked++
		doc := append(bson.Raw(nil), cur.Current...) // Current is reused by Next
		id := doc.Lookup("_id")
		top, err := w.newest(ctx, id)
		if err != nil {
			return err
		}
		stored, lerr := doc.LookupErr(w.cfg.Array)
		if sameArray(stored, top) {
			continue
		}
		p := Problem{Kind: KindWindow, Parent: id}
		if repair {
			wrote, err := w.swapArray(ctx, id, stored, lerr == nil, top)
			if err != nil {
				return err
			}
			p.Repaired = wrote
			if !p.Repaired {
				_, err := w.refill(ctx, id, nil)
				if err != nil && !errors.Is(err, ErrParentNotFound) {
					return err
				}
				p.Repaired = true // refilled, or deleted meanwhile
			}
		}
		rep.add(p)
	}
	return cur.Err()
}

// orphans finds the parent links of the child collection that name no
// parent: one $group over the children, one existence check per parent
// named. Under Cascade, repair deletes those children.
func (w *Window[P, C]) orphans(ctx context.Context, rep *Report, repair bool) error {
	cur, err := w.children.Aggregate(ctx, bson.A{
		bson.D{{Key: "$group", Value: bson.D{{Key: "_id", Value: "$" + w.cfg.Parent}, {Key: "n", Value: bson.D{{Key: "$sum", Value: 1}}}}}},
		bson.D{{Key: "$sort", Value: bson.D{{Key: "_id", Value: 1}}}},
	})
	if err != nil {
		return err
	}
	defer cur.Close(ctx)
	for cur.Next(ctx) {
		group := append(bson.Raw(nil), cur.Current...)
		parent := group.Lookup("_id")
		ok, err := w.parentExists(ctx, parent)
		if err != nil {
			return err
		}
		if ok {
			continue
		}
		p := Problem{Kind: KindOrphan, Parent: parent, Count: group.Lookup("n").AsInt64()}
		if w.cfg.OnParentDelete == Detach {
			rep.Detached += p.Count
			continue
		}
		if repair && w.cfg.OnParentDelete == Cascade {
			if _, err := w.children.DeleteMany(ctx, bson.D{{Key: w.cfg.Parent, Value: parent}}); err != nil {
				return err
			}
			p.Repaired = true
		}
		rep.add(p)
	}
	return cur.Err()
}

// badTimes lists the children breaking the time rule.
func (w *Window[P, C]) badTimes(ctx context.Context, rep *Report) error {
	cur, err := w.children.Find(ctx, w.cfg.badTimeFilter(), options.Find().
		SetProjection(bson.D{{Key: "_id", Value: 1}, {Key: w.cfg.Parent, Value: 1}}).
		SetSort(bson.D{{Key: "_id", Value: 1}}))
	if err != nil {
		return err
	}
	defer cur.Close(ctx)
	for cur.Next(ctx) {
		doc := append(bson.Raw(nil), cur.Current...)
		p := Problem{Kind: KindTimeType, Child: doc.Lookup("_id")}
		if v, err := doc.LookupErr(w.cfg.Parent); err == nil {
			p.Parent = v
		}
		rep.add(p)
	}
	return cur.Err()
}
