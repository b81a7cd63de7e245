package computed

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo"
	"go.mongodb.org/mongo-driver/v2/mongo/options"

	"github.com/formworkdb/formwork/pattern"
)

// Drift is one parent whose stored totals disagree with its children.
type Drift struct {
	ID     bson.RawValue // the parent's _id
	Stored Totals
	Want   Totals
	Why    string // the statistics that differ, e.g. "sum 9 want 13; min none want 4"
}

// Report is the outcome of Verify or Repair.
type Report struct {
	// Checked counts the parents compared.
	Checked int64
	// Drifted lists the parents whose stored totals are wrong, in _id
	// order.
	Drifted []Drift
	// Orphans counts counted children whose parent does not exist.
	Orphans int64
	// Repaired counts the parents Repair recomputed; under Cascade it
	// also counts the orphans Repair deleted.
	Repaired int64

	orphaned []bson.RawValue // the missing parents the orphans name
}

// maxDetails bounds the lines of a Check result.
const maxDetails = 200

// Verify computes every parent's totals from the children and reports
// the parents whose stored totals differ (a parent with no children must
// hold zero and no min or max), comparing only the kept statistics. The
// server groups the children per parent with one $group; Verify keeps one
// total per parent in memory and writes nothing. Totals being written
// while Verify runs may be reported.
func (r *Rollup[P, C]) Verify(ctx context.Context) (Report, error) {
	rep, err := r.verify(ctx)
	if err != nil {
		return rep, fmt.Errorf("computed: verify: %w", err)
	}
	return rep, nil
}

// Repair runs Verify and Recomputes every drifted parent (compare-and-
// set, so it is safe under writes); a parent deleted meanwhile is
// skipped. Under the Cascade policy it also deletes the orphaned
// children, finishing a cascade a failure interrupted.
func (r *Rollup[P, C]) Repair(ctx context.Context) (Report, error) {
	rep, err := r.verify(ctx)
	if err != nil {
		return rep, fmt.Errorf("computed: repair: %w", err)
	}
	for _, d := range rep.Drifted {
		if _, err := r.Recompute(ctx, d.ID); err != nil {
			if errors.Is(err, ErrParentNotFound) {
				continue
			}
			return rep, fmt.Errorf("computed: repair: %w", err)
		}
		rep.Repaired++
	}
	if rep.Orphans > 0 && r.cfg.OnParentDelete == Cascade {
		n, err := r.deleteOrphans(ctx, rep.orphaned)
		if err != nil {
			return rep, fmt.Errorf("computed: repair: %w", err)
		}
		rep.Repaired += n
	}
	return rep, nil
}

// Check is Verify (repair false) or Repair (repair true) as a
// pattern.Result. Orphaned children are problems under Cascade only;
// under Refuse and Detach they are listed but count nowhere and change no
// total.
func (r *Rollup[P, C]) Check(ctx context.Context, repair bool) (pattern.Result, error) {
	verb := r.Verify
	if repair {
		verb = r.Repair
	}
	rep, err := verb(ctx)
	res := pattern.Result{Name: r.Name(), Checked: int(rep.Checked), Problems: len(rep.Drifted), Repaired: int(rep.Repaired)}
	if r.cfg.OnParentDelete == Cascade {
		res.Problems += int(rep.Orphans)
	}
	for _, d := range rep.Drifted {
		if len(res.Details) < maxDetails {
			res.Details = append(res.Details, fmt.Sprintf("parent %v: %s", d.ID, d.Why))
		}
	}
	if rep.Orphans > 0 {
		res.Details = append(res.Details, fmt.Sprintf("%d children name a parent that does not exist", rep.Orphans))
	}
	return res, err
}

// verify groups every counted child per parent, then compares each
// parent in _id order.
func (r *Rollup[P, C]) verify(ctx context.Context) (Report, error) {
	var rep Report
	want := map[string]stored{}
	err := r.group(ctx, bson.D{{Key: r.cfg.Parent, Value: bson.D{{Key: "$exists", Value: true}}}}, "$"+r.cfg.Parent,
		func(id bson.RawValue, s stored) { s.id = id; want[key(id)] = s })
	if err != nil {
		return rep, err
	}
	err = r.eachParent(ctx, func(id bson.RawValue, doc bson.Raw) error {
		rep.Checked++
		w := want[key(id)]
		delete(want, key(id))
		s, serr := r.storedOf(doc)
		why := r.differ(s, w)
		if serr != nil {
			why = serr.Error()
		}
		if why != "" {
			rep.Drifted = append(rep.Drifted, Drift{ID: id, Stored: s.totals(), Want: w.totals(), Why: why})
		}
		return nil
	})
	for _, s := range want {
		rep.Orphans += s.count
		rep.orphaned = append(rep.orphaned, s.id)
	}
	return rep, err
}

// eachParent calls fn with every parent's _id and totals, in _id order.
func (r *Rollup[P, C]) eachParent(ctx context.Context, fn func(id bson.RawValue, doc bson.Raw) error) error {
	cur, err := r.parents.Find(ctx, bson.D{}, options.Find().
		SetProjection(bson.D{{Key: r.cfg.Target, Value: 1}}).SetSort(bson.D{{Key: "_id", Value: 1}}))
	if err != nil {
		return err
	}
	defer cur.Close(ctx)
	for cur.Next(ctx) {
		doc := bson.Raw(append([]byte(nil), cur.Current...)) // Current is reused by Next
		if err := fn(doc.Lookup("_id"), doc); err != nil {
			return err
		}
	}
	return cur.Err()
}

// differ describes how the kept statistics of s differ from w; "" when
// they agree.
func (r *Rollup[P, C]) differ(s, w stored) string {
	var why []string
	if r.cfg.Stats.has(Sum) && !s.sum.close(w.sum) {
		why = append(why, fmt.Sprintf("sum %v want %v", s.sum, w.sum))
	}
	if r.cfg.Stats.has(Count) && s.count != w.count {
		why = append(why, fmt.Sprintf("count %d want %d", s.count, w.count))
	}
	if r.cfg.Stats.has(Min) && !s.min.equal(w.min) {
		why = append(why, fmt.Sprintf("min %v want %v", s.min, w.min))
	}
	if r.cfg.Stats.has(Max) && !s.max.equal(w.max) {
		why = append(why, fmt.Sprintf("max %v want %v", s.max, w.max))
	}
	return strings.Join(why, "; ")
}

// deleteOrphans deletes the children of the parents Verify found
// missing, unless the parent exists again, and returns how many it
// deleted.
func (r *Rollup[P, C]) deleteOrphans(ctx context.Context, parents []bson.RawValue) (int64, error) {
	var n int64
	for _, p := range parents {
		err := r.parents.FindOne(ctx, bson.D{{Key: "_id", Value: p}}).Err()
		if err == nil {
			continue // created meanwhile
		}
		if !errors.Is(err, mongo.ErrNoDocuments) {
			return n, err
		}
		res, err := r.children.DeleteMany(ctx, bson.D{{Key: r.cfg.Parent, Value: p}})
		if err != nil {
			return n, err
		}
		n += res.DeletedCount
	}
	return n, nil
}
