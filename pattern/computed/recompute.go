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
// does. The sum runs on the server ($match + $group). It wraps
// ErrParentNotFound and ErrContention.
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

// scanOne sums the sources of one parent on the server: $match on the
// parent field (through the {<Parent>: 1} index), then $group.
func (m *Mean) scanOne(ctx context.Context, parent any) (number, int64, error) {
	var sum number
	var count int64
	err := m.group(ctx, bson.D{{Key: m.cfg.Parent, Value: parent}}, nil, func(_ bson.RawValue, r running) {
		sum, count = r.sum, r.count
	})
	return sum, count, err
}

// group runs {$match: match}, {$group: {_id: by, count: {$sum: 1}, sum:
// {$sum: "$<Value>"}}} on the sources and calls fn with each group. by
// nil groups everything into one. A sum that is not an int32, int64 or
// double (a Decimal128 source) counts as zero, as numberOf reads it.
func (m *Mean) group(ctx context.Context, match bson.D, by any, fn func(id bson.RawValue, r running)) error {
	cur, err := m.sources.Aggregate(ctx, mongo.Pipeline{
		{{Key: "$match", Value: match}},
		{{Key: "$group", Value: bson.D{
			{Key: "_id", Value: by},
			{Key: "count", Value: bson.D{{Key: "$sum", Value: 1}}},
			{Key: "sum", Value: bson.D{{Key: "$sum", Value: "$" + m.cfg.Value}}},
		}}},
	})
	if err != nil {
		return err
	}
	defer cur.Close(ctx)
	for cur.Next(ctx) {
		var r running
		c := cur.Current.Lookup("count")
		if n, ok := numberOf(c); ok && !n.isFloat {
			r.count = n.i
		}
		r.sum, _ = numberOf(cur.Current.Lookup("sum"))
		id := cur.Current.Lookup("_id")
		id.Value = append([]byte(nil), id.Value...) // Current is reused by Next
		fn(id, r)
	}
	return cur.Err()
}

// Verify recomputes every parent's total from the source collection and
// reports the parents whose stored total differs (a parent with no
// sources must hold zero). The server sums the sources per parent with
// one $group; Verify keeps one total per parent in memory and compares
// them with the parents; it writes nothing. Totals being updated while
// Verify runs may be reported.
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
	// Sum per parent on the server; a source without the parent field is
	// no parent's source.
	err := m.group(ctx, bson.D{{Key: m.cfg.Parent, Value: bson.D{{Key: "$exists", Value: true}}}}, "$"+m.cfg.Parent,
		func(id bson.RawValue, r running) { totals[parentKey(id)] = &r })
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
