package computed

import (
	"context"
	"errors"
	"fmt"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo"
	"go.mongodb.org/mongo-driver/v2/mongo/options"
)

// Drift is one parent whose stored total disagrees with its sources.
type Drift struct {
	ID     bson.RawValue // the parent's _id
	Stored Total
	Want   Total
}

// Report is the outcome of Verify or Repair.
type Report struct {
	// Checked counts the parents compared.
	Checked int64
	// Drifted lists the parents whose stored total is wrong, in _id order.
	Drifted []Drift
	// Orphans counts source documents whose parent does not exist.
	Orphans int64
	// Repaired counts the parents Repair recomputed.
	Repaired int64
}

// Recompute sums parent's source documents (through the {<Parent>: 1}
// index) and stores the result as its total, replacing whatever was
// there, by compare-and-set against the total read before the sum, so a
// concurrent $inc is never overwritten (Recompute retries instead). Source
// documents whose value is not a number count but add nothing, as $sum
// does. It wraps ErrParentNotFound and ErrContention.
//
// To be replaced by one $group + $merge pipeline when aggregation exists.
func (m *Mean) Recompute(ctx context.Context, parent any) (Total, error) {
	t, err := m.recompute(ctx, parent)
	if err != nil {
		return Total{}, fmt.Errorf("computed: recompute: %w", err)
	}
	return t, nil
}

// recompute is Recompute without the verb in its errors, for Repair.
func (m *Mean) recompute(ctx context.Context, parent any) (Total, error) {
	for range maxAttempts {
		doc, err := m.parents.FindOne(ctx, bson.D{{Key: "_id", Value: parent}},
			options.FindOne().SetProjection(bson.D{{Key: m.cfg.Target, Value: 1}})).Raw()
		if errors.Is(err, mongo.ErrNoDocuments) {
			return Total{}, fmt.Errorf("%w: _id %v", ErrParentNotFound, parent)
		}
		if err != nil {
			return Total{}, err
		}
		sum, count, err := m.scanOne(ctx, parent)
		if err != nil {
			return Total{}, err
		}
		cas := bson.D{{Key: "_id", Value: parent}}
		if stored, err := doc.LookupErr(m.cfg.Target); err == nil {
			cas = append(cas, bson.E{Key: m.cfg.Target, Value: stored})
		} else {
			cas = append(cas, bson.E{Key: m.cfg.Target, Value: bson.D{{Key: "$exists", Value: false}}})
		}
		set := bson.D{{Key: "$set", Value: bson.D{{Key: m.cfg.Target, Value: bson.D{
			{Key: "count", Value: count}, {Key: "sum", Value: sum.value()}}}}}}
		res, err := m.parents.UpdateOne(ctx, cas, set)
		if err != nil {
			return Total{}, err
		}
		if res.MatchedCount == 1 {
			return Total{Sum: sum.float(), Count: count}, nil
		}
	}
	return Total{}, ErrContention
}

// scanOne sums the sources of one parent.
func (m *Mean) scanOne(ctx context.Context, parent any) (number, int64, error) {
	cur, err := m.sources.Find(ctx, bson.D{{Key: m.cfg.Parent, Value: parent}},
		options.Find().SetProjection(bson.D{{Key: "_id", Value: 0}, {Key: m.cfg.Value, Value: 1}}))
	if err != nil {
		return number{}, 0, err
	}
	defer cur.Close(ctx)
	var sum number
	var count int64
	for cur.Next(ctx) {
		count++
		if v, ok := numberOf(cur.Current.Lookup(m.cfg.Value)); ok {
			sum = sum.add(v)
		}
	}
	return sum, count, cur.Err()
}

// Verify recomputes every parent's total from the source collection and
// reports the parents whose stored total differs (a parent with no
// sources must hold zero). It reads each source document once and keeps
// one running total per parent in memory; it writes nothing. Totals being
// updated while Verify runs may be reported.
//
// To be replaced by $group (+ a comparison) when aggregation exists.
func (m *Mean) Verify(ctx context.Context) (Report, error) {
	rep, err := m.verify(ctx)
	if err != nil {
		return rep, fmt.Errorf("computed: verify: %w", err)
	}
	return rep, nil
}

// Repair runs Verify and Recomputes every drifted parent. The Report is
// Verify's with Repaired set; a parent deleted meanwhile is skipped.
func (m *Mean) Repair(ctx context.Context) (Report, error) {
	rep, err := m.verify(ctx)
	if err != nil {
		return rep, fmt.Errorf("computed: repair: %w", err)
	}
	for _, d := range rep.Drifted {
		if _, err := m.recompute(ctx, d.ID); err != nil {
			if errors.Is(err, ErrParentNotFound) {
				continue
			}
			return rep, fmt.Errorf("computed: repair: %w", err)
		}
		rep.Repaired++
	}
	return rep, nil
}

// running is one parent's total as Verify sums its sources.
type running struct {
	sum   number
	count int64
}

// verify sums every source per parent, then compares each parent.
func (m *Mean) verify(ctx context.Context) (Report, error) {
	var rep Report
	totals := map[string]*running{}
	cur, err := m.sources.Find(ctx, bson.D{},
		options.Find().SetProjection(bson.D{{Key: "_id", Value: 0}, {Key: m.cfg.Parent, Value: 1}, {Key: m.cfg.Value, Value: 1}}))
	if err != nil {
		return rep, err
	}
	for cur.Next(ctx) {
		p, err := cur.Current.LookupErr(m.cfg.Parent)
		if err != nil {
			continue // not a source of any parent
		}
		k := parentKey(p)
		r := totals[k]
		if r == nil {
			r = &running{}
			totals[k] = r
		}
		r.count++
		if v, ok := numberOf(cur.Current.Lookup(m.cfg.Value)); ok {
			r.sum = r.sum.add(v)
		}
	}
	err = cur.Err()
	cur.Close(ctx)
	if err != nil {
		return rep, err
	}

	pcur, err := m.parents.Find(ctx, bson.D{}, options.Find().
		SetProjection(bson.D{{Key: m.cfg.Target, Value: 1}}).SetSort(bson.D{{Key: "_id", Value: 1}}))
	if err != nil {
		return rep, err
	}
	defer pcur.Close(ctx)
	for pcur.Next(ctx) {
		rep.Checked++
		id := pcur.Current.Lookup("_id")
		id.Value = append([]byte(nil), id.Value...) // Current is reused by Next
		want := totals[parentKey(id)]
		delete(totals, parentKey(id))
		if want == nil {
			want = &running{}
		}
		sum, count, terr := m.totalOf(pcur.Current)
		if terr == nil && count == want.count && sum.close(want.sum) {
			continue
		}
		rep.Drifted = append(rep.Drifted, Drift{ID: id,
			Stored: Total{Sum: sum.float(), Count: count},
			Want:   Total{Sum: want.sum.float(), Count: want.count}})
	}
	if err := pcur.Err(); err != nil {
		return rep, err
	}
	for _, r := range totals {
		rep.Orphans += r.count
	}
	return rep, nil
}
