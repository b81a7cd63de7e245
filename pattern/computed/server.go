package computed

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"time"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo"
	"go.mongodb.org/mongo-driver/v2/mongo/options"
)

// RecomputeOptions tune RecomputeAll.
type RecomputeOptions struct {
	// Batch is how many parents one step recomputes; zero is 1,000.
	Batch int
	// After resumes a run: only parents whose _id sorts after it are
	// recomputed. nil starts from the first parent. A killed run resumes
	// from the Last of its last OnBatch.
	After any
	// OnBatch, when set, is called after each step with the last parent
	// _id done and the parents done so far; an error stops the run.
	OnBatch func(last bson.RawValue, done int64) error
}

// RecomputeReport is the outcome of RecomputeAll.
type RecomputeReport struct {
	Parents int64         // parents in the steps done
	Batches int           // steps done
	Last    bson.RawValue // the last parent _id done (resume with After)
}

// maxBatches bounds the steps of one RecomputeAll.
const maxBatches = 10_000_000

// RecomputeAll recomputes every parent's totals on the server, in steps
// of Batch parents in _id order, each step three commands and no
// document through the client beyond the step's _ids:
//
//	ids:   parents.find({_id: {$gt: last}}, {_id: 1}).sort({_id: 1}).limit(Batch)
//	group: children.aggregate([{$match: {<Parent>: {$in: ids}, <Value>: {$type: [int, long, double]}}},
//	         {$group: {_id: "$<Parent>", sum, count, min, max}},
//	         {$merge: {into: parents, on: "_id", whenMatched: [{$set: {<Target>.sum: …, rev: rev + 1}}], whenNotMatched: "discard"}}])
//	reset: parents.aggregate([{$match: {_id: {$in: ids}, <Target> not empty}},
//	         {$lookup: {from: children, localField: "_id", foreignField: <Parent>, pipeline: [{$match: counted}, {$limit: 1}], as: "c"}},
//	         {$match: {c: {$size: 0}}}, {$merge: {into: parents, whenMatched: [{$set: zero totals}, {$unset: [min, max]}], whenNotMatched: "discard"}}])
//
// The reset handles the parents whose children all disappeared, which
// $group cannot produce a row for. Only the kept statistics are written,
// path by path, so other fields of the target survive ($merge's
// whenMatched "merge" would replace the whole top-level field). After
// the steps, under WhenNotMatched "insert" or "fail", one more $group
// over all children merges with whenMatched "keepExisting" to create
// stub parents for orphaned children, or to fail with 13113.
//
// It is for a quiet collection, or as a scheduled job followed by
// Verify: a child written between a step's $group and its $merge is
// overwritten by the group's total (Recompute, one parent by
// compare-and-set, is exact under writes). Parents' _ids must be of one
// BSON type, so that {$gt: last} walks them all. It wraps the server's
// errors (13113 under "fail").
func (r *Rollup[P, C]) RecomputeAll(ctx context.Context, opts RecomputeOptions) (RecomputeReport, error) {
	var rep RecomputeReport
	batch := opts.Batch
	if batch <= 0 {
		batch = 1000
	}
	after := opts.After
	for range maxBatches {
		ids, err := r.parentIDs(ctx, after, batch)
		if err != nil {
			return rep, fmt.Errorf("computed: recompute all: %w", err)
		}
		if len(ids) == 0 {
			break
		}
		if err := r.mergeGroups(ctx, ids); err != nil {
			return rep, fmt.Errorf("computed: recompute all: %w", err)
		}
		if err := r.resetEmpty(ctx, ids); err != nil {
			return rep, fmt.Errorf("computed: recompute all: %w", err)
		}
		rep.Parents += int64(len(ids))
		rep.Batches++
		rep.Last = ids[len(ids)-1].(bson.RawValue)
		after = rep.Last
		if opts.OnBatch != nil {
			if err := opts.OnBatch(rep.Last, rep.Parents); err != nil {
				return rep, fmt.Errorf("computed: recompute all: %w", err)
			}
		}
		if len(ids) < batch {
			break
		}
	}
	if r.cfg.WhenNotMatched != "discard" {
		if err := r.mergeOrphans(ctx); err != nil {
			return rep, fmt.Errorf("computed: recompute all: %w", err)
		}
	}
	return rep, nil
}

// parentIDs reads the next n parent _ids after after, in _id order.
func (r *Rollup[P, C]) parentIDs(ctx context.Context, after any, n int) (bson.A, error) {
	f := bson.D{}
	if after != nil {
		f = bson.D{{Key: "_id", Value: bson.D{{Key: "$gt", Value: after}}}}
	}
	cur, err := r.parents.Find(ctx, f, options.Find().SetProjection(bson.D{{Key: "_id", Value: 1}}).
		SetSort(bson.D{{Key: "_id", Value: 1}}).SetLimit(int64(n)))
	if err != nil {
		return nil, err
	}
	defer cur.Close(ctx)
	var ids bson.A
	for cur.Next(ctx) {
		v := cur.Current.Lookup("_id")
		v.Value = append([]byte(nil), v.Value...)
		ids = append(ids, v)
	}
	return ids, cur.Err()
}

// countedMatch is the $match of the children that count.
func (r *Rollup[P, C]) countedMatch() bson.D {
	return bson.D{{Key: r.cfg.Value, Value: bson.D{{Key: "$type", Value: numberTypes}}}}
}

// groupStage is $group by parent with every statistic.
func (r *Rollup[P, C]) groupStage() bson.D {
	v := "$" + r.cfg.Value
	return bson.D{{Key: "$group", Value: bson.D{
		{Key: "_id", Value: "$" + r.cfg.Parent},
		{Key: "count", Value: bson.D{{Key: "$sum", Value: 1}}},
		{Key: "sum", Value: bson.D{{Key: "$sum", Value: v}}},
		{Key: "min", Value: bson.D{{Key: "$min", Value: v}}},
		{Key: "max", Value: bson.D{{Key: "$max", Value: v}}},
	}}}
}

// asStored converts an integer expression to a long, as the inline path
// stores it, and leaves a double as it is.
func asStored(x any) bson.D {
	return bson.D{{Key: "$cond", Value: bson.A{
		bson.D{{Key: "$eq", Value: bson.A{bson.D{{Key: "$type", Value: x}}, "double"}}}, x, bson.D{{Key: "$toLong", Value: x}}}}}
}

// bumpRev is the expression of the revision after one more write.
func (r *Rollup[P, C]) bumpRev() bson.D {
	return bson.D{{Key: "$add", Value: bson.A{bson.D{{Key: "$ifNull", Value: bson.A{"$" + r.path("rev"), int64(0)}}}, int64(1)}}}
}

// mergeGroups groups the children of ids and merges the kept statistics
// into the parents.
func (r *Rollup[P, C]) mergeGroups(ctx context.Context, ids bson.A) error {
	set := bson.D{}
	if r.cfg.Stats.has(Sum) {
		set = append(set, bson.E{Key: r.path("sum"), Value: asStored("$$new.sum")})
	}
	if r.cfg.Stats.has(Count) {
		set = append(set, bson.E{Key: r.path("count"), Value: bson.D{{Key: "$toLong", Value: "$$new.count"}}})
	}
	if r.cfg.Stats.has(Min) {
		set = append(set, bson.E{Key: r.path("min"), Value: "$$new.min"})
	}
	if r.cfg.Stats.has(Max) {
		set = append(set, bson.E{Key: r.path("max"), Value: "$$new.max"})
	}
	set = append(set, bson.E{Key: r.path("rev"), Value: r.bumpRev()})
	match := append(bson.D{{Key: r.cfg.Parent, Value: bson.D{{Key: "$in", Value: ids}}}}, r.countedMatch()...)
	return r.aggregate(ctx, r.children, mongo.Pipeline{
		{{Key: "$match", Value: match}},
		r.groupStage(),
		{{Key: "$merge", Value: bson.D{{Key: "into", Value: r.parents.Name()}, {Key: "on", Value: "_id"},
			{Key: "whenMatched", Value: bson.A{bson.D{{Key: "$set", Value: set}}}},
			{Key: "whenNotMatched", Value: "discard"}}}},
	})
}

// resetEmpty zeroes the totals of the parents among ids that hold
// totals but have no counted child left.
func (r *Rollup[P, C]) resetEmpty(ctx context.Context, ids bson.A) error {
	set := bson.D{}
	var unset bson.A
	if r.cfg.Stats.has(Sum) {
		set = append(set, bson.E{Key: r.path("sum"), Value: int64(0)})
	}
	if r.cfg.Stats.has(Count) {
		set = append(set, bson.E{Key: r.path("count"), Value: int64(0)})
	}
	if r.cfg.Stats.has(Min) {
		unset = append(unset, r.path("min"))
	}
	if r.cfg.Stats.has(Max) {
		unset = append(unset, r.path("max"))
	}
	set = append(set, bson.E{Key: r.path("rev"), Value: r.bumpRev()})
	whenMatched := bson.A{bson.D{{Key: "$set", Value: set}}}
	if len(unset) > 0 {
		whenMatched = append(whenMatched, bson.D{{Key: "$unset", Value: unset}})
	}
	nonZero := bson.D{{Key: "$nin", Value: bson.A{0, nil}}}
	return r.aggregate(ctx, r.parents, mongo.Pipeline{
		{{Key: "$match", Value: bson.D{{Key: "_id", Value: bson.D{{Key: "$in", Value: ids}}}, {Key: "$or", Value: bson.A{
			bson.D{{Key: r.path("sum"), Value: nonZero}}, bson.D{{Key: r.path("count"), Value: nonZero}},
			bson.D{{Key: r.path("min"), Value: bson.D{{Key: "$exists", Value: true}}}},
			bson.D{{Key: r.path("max"), Value: bson.D{{Key: "$exists", Value: true}}}},
		}}}}},
		{{Key: "$lookup", Value: bson.D{{Key: "from", Value: r.children.Name()}, {Key: "localField", Value: "_id"},
			{Key: "foreignField", Value: r.cfg.Parent}, {Key: "pipeline", Value: bson.A{
				bson.D{{Key: "$match", Value: r.countedMatch()}}, bson.D{{Key: "$limit", Value: 1}}, bson.D{{Key: "$project", Value: bson.D{{Key: "_id", Value: 1}}}}}},
			{Key: "as", Value: "c"}}}},
		{{Key: "$match", Value: bson.D{{Key: "c", Value: bson.D{{Key: "$size", Value: 0}}}}}},
		{{Key: "$project", Value: bson.D{{Key: "_id", Value: 1}}}},
		{{Key: "$merge", Value: bson.D{{Key: "into", Value: r.parents.Name()}, {Key: "on", Value: "_id"},
			{Key: "whenMatched", Value: whenMatched}, {Key: "whenNotMatched", Value: "discard"}}}},
	})
}

// mergeOrphans applies WhenNotMatched to the children of parents that do
// not exist: existing parents are kept as they are.
func (r *Rollup[P, C]) mergeOrphans(ctx context.Context) error {
	proj := bson.D{{Key: "_id", Value: 1}}
	if r.cfg.Stats.has(Sum) {
		proj = append(proj, bson.E{Key: r.path("sum"), Value: asStored("$sum")})
	}
	if r.cfg.Stats.has(Count) {
		proj = append(proj, bson.E{Key: r.path("count"), Value: bson.D{{Key: "$toLong", Value: "$count"}}})
	}
	if r.cfg.Stats.has(Min) {
		proj = append(proj, bson.E{Key: r.path("min"), Value: "$min"})
	}
	if r.cfg.Stats.has(Max) {
		proj = append(proj, bson.E{Key: r.path("max"), Value: "$max"})
	}
	match := append(bson.D{{Key: r.cfg.Parent, Value: bson.D{{Key: "$exists", Value: true}, {Key: "$ne", Value: nil}}}}, r.countedMatch()...)
	return r.aggregate(ctx, r.children, mongo.Pipeline{
		{{Key: "$match", Value: match}},
		r.groupStage(),
		{{Key: "$project", Value: proj}},
		{{Key: "$merge", Value: bson.D{{Key: "into", Value: r.parents.Name()}, {Key: "on", Value: "_id"},
			{Key: "whenMatched", Value: "keepExisting"}, {Key: "whenNotMatched", Value: r.cfg.WhenNotMatched}}}},
	})
}

// aggregate runs a pipeline ending in $merge and drains its cursor.
func (r *Rollup[P, C]) aggregate(ctx context.Context, c *mongo.Collection, p mongo.Pipeline) error {
	cur, err := c.Aggregate(ctx, p)
	if err != nil {
		return err
	}
	return cur.Close(ctx)
}

// VerifyAll is Verify with the comparison on the server, for parent
// collections too large to compare in the client: one $group of the
// children $merge'd into a scratch collection (<parents>.verify_<random>,
// dropped afterwards), then one aggregation over the parents that
// $lookups each parent's expected totals there and returns only the
// parents whose stored statistics differ, which the client checks again
// with Verify's rules (doubles within a relative 1e-9); and one over the
// scratch collection for the children of missing parents. The client
// holds only the drifted parents. It writes nothing but the scratch
// collection.
func (r *Rollup[P, C]) VerifyAll(ctx context.Context) (Report, error) {
	rep, err := r.verifyAll(ctx)
	if err != nil {
		return rep, fmt.Errorf("computed: verify all: %w", err)
	}
	return rep, nil
}

// verifyAll is VerifyAll without the verb in errors.
func (r *Rollup[P, C]) verifyAll(ctx context.Context) (Report, error) {
	var rep Report
	var nonce [6]byte
	if _, err := rand.Read(nonce[:]); err != nil {
		return rep, err
	}
	scratch := r.parents.Database().Collection(r.parents.Name() + ".verify_" + hex.EncodeToString(nonce[:]))
	defer func() {
		dctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 30*time.Second)
		defer cancel()
		scratch.Drop(dctx)
	}()
	match := append(bson.D{{Key: r.cfg.Parent, Value: bson.D{{Key: "$exists", Value: true}, {Key: "$ne", Value: nil}}}}, r.countedMatch()...)
	if err := r.aggregate(ctx, r.children, mongo.Pipeline{
		{{Key: "$match", Value: match}},
		r.groupStage(),
		{{Key: "$merge", Value: bson.D{{Key: "into", Value: scratch.Name()}, {Key: "on", Value: "_id"},
			{Key: "whenMatched", Value: "replace"}, {Key: "whenNotMatched", Value: "insert"}}}},
	}); err != nil {
		return rep, err
	}
	n, err := r.parents.CountDocuments(ctx, bson.D{})
	if err != nil {
		return rep, err
	}
	rep.Checked = n
	var differs bson.A
	for _, f := range []struct {
		s    Stat
		name string
		zero any
	}{{Sum, "sum", 0}, {Count, "count", 0}, {Min, "min", nil}, {Max, "max", nil}} {
		if r.cfg.Stats.has(f.s) {
			differs = append(differs, bson.D{{Key: "$ne", Value: bson.A{
				bson.D{{Key: "$ifNull", Value: bson.A{"$" + r.path(f.name), f.zero}}},
				bson.D{{Key: "$ifNull", Value: bson.A{"$w." + f.name, f.zero}}}}}})
		}
	}
	cur, err := r.parents.Aggregate(ctx, mongo.Pipeline{
		{{Key: "$project", Value: bson.D{{Key: r.cfg.Target, Value: 1}}}},
		{{Key: "$lookup", Value: bson.D{{Key: "from", Value: scratch.Name()}, {Key: "localField", Value: "_id"},
			{Key: "foreignField", Value: "_id"}, {Key: "as", Value: "w"}}}},
		{{Key: "$set", Value: bson.D{{Key: "w", Value: bson.D{{Key: "$first", Value: "$w"}}}}}},
		{{Key: "$match", Value: bson.D{{Key: "$expr", Value: bson.D{{Key: "$or", Value: differs}}}}}},
		{{Key: "$sort", Value: bson.D{{Key: "_id", Value: 1}}}},
	})
	if err != nil {
		return rep, err
	}
	defer cur.Close(ctx)
	for cur.Next(ctx) {
		doc := bson.Raw(append([]byte(nil), cur.Current...))
		var w stored
		if g, ok := doc.Lookup("w").DocumentOK(); ok {
			w = groupRow(g)
		}
		s, serr := r.storedOf(doc)
		why := r.differ(s, w)
		if serr != nil {
			why = serr.Error()
		}
		if why != "" {
			rep.Drifted = append(rep.Drifted, Drift{ID: doc.Lookup("_id"), Stored: s.totals(), Want: w.totals(), Why: why})
		}
	}
	if err := cur.Err(); err != nil {
		return rep, err
	}
	orphans, err := scratch.Aggregate(ctx, mongo.Pipeline{
		{{Key: "$lookup", Value: bson.D{{Key: "from", Value: r.parents.Name()}, {Key: "localField", Value: "_id"},
			{Key: "foreignField", Value: "_id"}, {Key: "pipeline", Value: bson.A{bson.D{{Key: "$project", Value: bson.D{{Key: "_id", Value: 1}}}}}},
			{Key: "as", Value: "p"}}}},
		{{Key: "$match", Value: bson.D{{Key: "p", Value: bson.D{{Key: "$size", Value: 0}}}}}},
		{{Key: "$project", Value: bson.D{{Key: "count", Value: 1}}}},
	})
	if err != nil {
		return rep, err
	}
	defer orphans.Close(ctx)
	for orphans.Next(ctx) {
		g := groupRow(orphans.Current)
		rep.Orphans += g.count
		id := orphans.Current.Lookup("_id")
		id.Value = append([]byte(nil), id.Value...)
		rep.orphaned = append(rep.orphaned, id)
	}
	return rep, orphans.Err()
}

// groupRow reads one $group row (count, sum, min, max) as stored totals.
func groupRow(g bson.Raw) stored {
	var s stored
	if n, ok := numberOf(g.Lookup("count")); ok && !n.isFloat {
		s.count = n.i
	}
	s.sum, _ = numberOf(g.Lookup("sum"))
	if n, ok := numberOf(g.Lookup("min")); ok {
		s.min = opt{n, true}
	}
	if n, ok := numberOf(g.Lookup("max")); ok {
		s.max = opt{n, true}
	}
	return s
}
