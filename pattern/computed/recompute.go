package computed

import (
	"context"
	"errors"
	"fmt"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo"
	"go.mongodb.org/mongo-driver/v2/mongo/options"

	"github.com/formworkdb/formwork/pattern"
)

// maxAttempts bounds every compare-and-set loop on one parent's totals.
const maxAttempts = 64

// Recompute computes parent's totals from its children (a $match through
// the {<Parent>: 1, <Value>: 1} index, then $group) and stores them,
// replacing what was there, by compare-and-set on the revision read
// before the children: a concurrent Apply bumps the revision and
// Recompute retries rather than overwrite it. In a transaction (see
// pattern.Atomic) the result is exact; without one, a writer caught
// between its child write and its Apply can be counted twice (see
// doc.go). It wraps ErrParentNotFound and ErrContention.
func (r *Rollup[P, C]) Recompute(ctx context.Context, parent any) (Totals, error) {
	var s stored
	_, err := pattern.Atomic(ctx, r.parents.Database().Client(), func(ctx context.Context) error {
		var err error
		s, err = r.recompute(ctx, parent)
		return err
	})
	if err != nil {
		return Totals{}, fmt.Errorf("computed: recompute %v: %w", parent, err)
	}
	return s.totals(), nil
}

// recompute is Recompute without the transaction or the verb in errors.
func (r *Rollup[P, C]) recompute(ctx context.Context, parent any) (stored, error) {
	for range maxAttempts {
		doc, err := r.parents.FindOne(ctx, bson.D{{Key: "_id", Value: parent}},
			options.FindOne().SetProjection(bson.D{{Key: r.path("rev"), Value: 1}})).Raw()
		if errors.Is(err, mongo.ErrNoDocuments) {
			return stored{}, ErrParentNotFound
		}
		if err != nil {
			return stored{}, err
		}
		id := doc.Lookup("_id")
		var want stored
		err = r.group(ctx, bson.D{{Key: r.cfg.Parent, Value: id}}, nil, func(_ bson.RawValue, s stored) { want = s })
		if err != nil {
			return stored{}, err
		}
		res, err := r.parents.UpdateOne(ctx, r.atRev(id, lookup(doc, r.path("rev"))), r.set(want))
		if err != nil {
			return stored{}, r.advise(err)
		}
		if res.MatchedCount == 1 {
			return want, nil
		}
	}
	return stored{}, ErrContention
}

// set stores s as the kept totals and bumps the revision; one path per
// field, so a target holding other fields keeps them.
func (r *Rollup[P, C]) set(s stored) bson.D {
	var set bson.D
	if r.cfg.Stats.has(Sum) {
		set = append(set, bson.E{Key: r.path("sum"), Value: s.sum.value()})
	}
	if r.cfg.Stats.has(Count) {
		set = append(set, bson.E{Key: r.path("count"), Value: s.count})
	}
	u := r.setExtremes(s.min, s.max)
	for i, e := range u {
		if e.Key == "$set" {
			u[i].Value = append(set, e.Value.(bson.D)...)
			set = nil
		}
	}
	if len(set) > 0 {
		u = append(u, bson.E{Key: "$set", Value: set})
	}
	return append(u, bson.E{Key: "$inc", Value: bson.D{{Key: r.path("rev"), Value: int64(1)}}})
}

// group runs {$match: match (counted children only)}, {$group: {_id: by,
// count, sum, min, max}} on the children and calls fn per group; by nil
// groups everything into one.
func (r *Rollup[P, C]) group(ctx context.Context, match bson.D, by any, fn func(id bson.RawValue, s stored)) error {
	v := "$" + r.cfg.Value
	match = append(match, bson.E{Key: r.cfg.Value, Value: bson.D{{Key: "$type", Value: numberTypes}}})
	cur, err := r.children.Aggregate(ctx, mongo.Pipeline{
		{{Key: "$match", Value: match}},
		{{Key: "$group", Value: bson.D{
			{Key: "_id", Value: by},
			{Key: "count", Value: bson.D{{Key: "$sum", Value: 1}}},
			{Key: "sum", Value: bson.D{{Key: "$sum", Value: v}}},
			{Key: "min", Value: bson.D{{Key: "$min", Value: v}}},
			{Key: "max", Value: bson.D{{Key: "$max", Value: v}}},
		}}},
	})
	if err != nil {
		return err
	}
	defer cur.Close(ctx)
	for cur.Next(ctx) {
		var s stored
		if n, ok := numberOf(cur.Current.Lookup("count")); ok && !n.isFloat {
			s.count = n.i
		}
		s.sum, _ = numberOf(cur.Current.Lookup("sum"))
		if n, ok := numberOf(cur.Current.Lookup("min")); ok {
			s.min = opt{n, true}
		}
		if n, ok := numberOf(cur.Current.Lookup("max")); ok {
			s.max = opt{n, true}
		}
		id := cur.Current.Lookup("_id")
		id.Value = append([]byte(nil), id.Value...) // Current is reused by Next
		fn(id, s)
	}
	return cur.Err()
}
