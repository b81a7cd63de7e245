package subset

import (
	"context"
	"errors"
	"fmt"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo/options"
)

// Report is the outcome of Verify or Repair.
type Report struct {
	// Checked counts the parents compared.
	Checked int64
	// Mismatched lists the _ids of parents whose embedded subset is not
	// exactly the copies of their newest Config.Size children, in order.
	// A missing array and an empty one are the same.
	Mismatched []bson.RawValue
	// Repaired counts the parents Repair refilled.
	Repaired int64
}

// Verify compares every parent's subset with the newest Config.Size
// children in the child collection (one index query per parent) and
// reports the parents that differ: a lost push, a stale copy, a wrong
// order, more or fewer than N. It writes nothing.
func (w *Window) Verify(ctx context.Context) (Report, error) {
	var rep Report
	if err := w.verify(ctx, &rep); err != nil {
		return rep, fmt.Errorf("subset: verify: %w", err)
	}
	return rep, nil
}

// Repair runs Verify and refills every mismatched parent. The Report is
// Verify's with Repaired set; a parent deleted meanwhile is skipped.
func (w *Window) Repair(ctx context.Context) (Report, error) {
	var rep Report
	if err := w.verify(ctx, &rep); err != nil {
		return rep, fmt.Errorf("subset: repair: %w", err)
	}
	for _, id := range rep.Mismatched {
		changed, err := w.refill(ctx, id, nil)
		if err != nil && !errors.Is(err, ErrParentNotFound) {
			return rep, fmt.Errorf("subset: repair: %w", err)
		}
		if changed {
			rep.Repaired++
		}
	}
	return rep, nil
}

// verify compares each parent with its newest children; Verify and
// Repair wrap its errors with their verb.
func (w *Window) verify(ctx context.Context, rep *Report) error {
	cur, err := w.parents.Find(ctx, bson.D{}, options.Find().
		SetProjection(bson.D{{Key: w.cfg.Array, Value: 1}}).
		SetSort(bson.D{{Key: "_id", Value: 1}}))
	if err != nil {
		return err
	}
	defer cur.Close(ctx)
	for cur.Next(ctx) {
		rep.Checked++
		id := cur.Current.Lookup("_id")
		id.Value = append([]byte(nil), id.Value...) // Current is reused by Next
		top, err := w.newest(ctx, id)
		if err != nil {
			return err
		}
		stored, lerr := cur.Current.LookupErr(w.cfg.Array)
		if lerr != nil && len(top) == 0 {
			continue
		}
		if !sameArray(stored, top) {
			rep.Mismatched = append(rep.Mismatched, id)
		}
	}
	return cur.Err()
}
