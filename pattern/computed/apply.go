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

// delta is what a set of changes does to one parent's totals.
type delta struct {
	parent       bson.RawValue
	sum          number
	count        int64
	addLo, addHi opt  // smallest and largest value added
	rmLo, rmHi   opt  // smallest and largest value removed
	attach       bool // a child newly names this parent: it must exist
}

// deltas accumulates changes per parent, in the order parents appear.
type deltas struct {
	byKey map[string]*delta
	order []*delta
}

// of returns the delta of parent, creating it.
func (ds *deltas) of(parent bson.RawValue) *delta {
	k := key(parent)
	if d := ds.byKey[k]; d != nil {
		return d
	}
	if ds.byKey == nil {
		ds.byKey = map[string]*delta{}
	}
	d := &delta{parent: parent}
	ds.byKey[k] = d
	ds.order = append(ds.order, d)
	return d
}

// counted returns a child's parent and value: ok is false when the child
// (nil for no document) names no parent; num is false when its value is
// not a number, so it counts nowhere.
func (r *Rollup[P, C]) counted(doc bson.Raw) (parent bson.RawValue, v number, ok, num bool) {
	if doc == nil {
		return parent, v, false, false
	}
	parent = lookup(doc, r.cfg.Parent)
	if parent.Type == 0 || parent.Type == bson.TypeNull || parent.Type == bson.TypeUndefined {
		return parent, v, false, false
	}
	v, num = numberOf(lookup(doc, r.cfg.Value))
	return parent, v, true, num
}

// add records change c.
func (r *Rollup[P, C]) add(ds *deltas, c pattern.Change) {
	bp, bv, bok, bnum := r.counted(c.Before)
	ap, av, aok, anum := r.counted(c.After)
	if bok && aok && key(bp) == key(ap) {
		if bnum == anum && (!bnum || (bv.compare(av) == 0 && bv.isFloat == av.isFloat)) {
			return // neither the parent nor the counted value changed
		}
	}
	if bok && bnum {
		d := ds.of(bp)
		d.sum = d.sum.add(bv.neg())
		d.count--
		d.rmLo, d.rmHi = d.rmLo.lower(bv), d.rmHi.higher(bv)
	}
	if aok {
		d := ds.of(ap)
		if !bok || key(bp) != key(ap) {
			d.attach = true
		}
		if anum {
			d.sum = d.sum.add(av)
			d.count++
			d.addLo, d.addHi = d.addLo.lower(av), d.addHi.higher(av)
		}
	}
}

// Apply brings the totals up to date with one change already made on the
// child collection: an insert adds the child's value to its parent ($inc
// of sum and count, $min and $max), a delete subtracts it, an update
// subtracts the old value from the old parent and adds the new value to
// the new one (the same parent for an edit, another for a move), in one
// update per parent. When a removed value may have been the parent's min
// or max, Apply recomputes them from the children (see doc.go). An update
// that changes neither the parent nor the value writes nothing.
//
// Apply is not idempotent: each Change must be applied exactly once
// (pattern.Source and this package's verbs do). A child that names a
// parent that does not exist (an insert, or a move to it) counts nowhere
// and Apply wraps ErrParentNotFound, after updating the parent it left;
// removals from a parent that no longer exists (Detach) are ignored.
func (r *Rollup[P, C]) Apply(ctx context.Context, c pattern.Change) error {
	var ds deltas
	r.add(&ds, c)
	if err := r.write(ctx, ds); err != nil {
		return fmt.Errorf("computed: apply %s %v: %w", c.Op, c.ID(), err)
	}
	return nil
}

// ApplyMany applies changes already made, for bulk loads and backfills:
// it adds them up per parent and writes one update per parent. Like
// Apply, it must see each change exactly once.
func (r *Rollup[P, C]) ApplyMany(ctx context.Context, cs []pattern.Change) error {
	var ds deltas
	for _, c := range cs {
		r.add(&ds, c)
	}
	if err := r.write(ctx, ds); err != nil {
		return fmt.Errorf("computed: apply %d changes: %w", len(cs), err)
	}
	return nil
}

// write applies every delta, all of them even when some parents are
// missing, and returns the first error, ErrParentNotFound naming the
// missing parents after any other.
func (r *Rollup[P, C]) write(ctx context.Context, ds deltas) error {
	var missing []string
	for _, d := range ds.order {
		found, err := r.writeOne(ctx, d)
		if err != nil {
			return err
		}
		if !found && d.attach {
			missing = append(missing, d.parent.String())
		}
	}
	if len(missing) > 0 {
		return fmt.Errorf("%w: _id %s", ErrParentNotFound, strings.Join(missing, ", "))
	}
	return nil
}

// writeOne applies one parent's delta with one single-document update:
// $inc of rev (always, so compare-and-set can tell the totals moved),
// sum and count, $min and $max of the values added. When the delta
// removed a value at or beyond the stored min or max, it then recomputes
// them. It reports whether the parent exists.
func (r *Rollup[P, C]) writeOne(ctx context.Context, d *delta) (bool, error) {
	inc := bson.D{{Key: r.path("rev"), Value: int64(1)}}
	if r.cfg.Stats.has(Sum) && !d.sum.zero() {
		inc = append(inc, bson.E{Key: r.path("sum"), Value: d.sum.value()})
	}
	if r.cfg.Stats.has(Count) && d.count != 0 {
		inc = append(inc, bson.E{Key: r.path("count"), Value: d.count})
	}
	update := bson.D{{Key: "$inc", Value: inc}}
	if r.cfg.Stats.has(Min) && d.addLo.ok {
		update = append(update, bson.E{Key: "$min", Value: bson.D{{Key: r.path("min"), Value: d.addLo.n.value()}}})
	}
	if r.cfg.Stats.has(Max) && d.addHi.ok {
		update = append(update, bson.E{Key: "$max", Value: bson.D{{Key: r.path("max"), Value: d.addHi.n.value()}}})
	}
	filter := bson.D{{Key: "_id", Value: d.parent}}
	recheck := (r.cfg.Stats.has(Min) && d.rmLo.ok) || (r.cfg.Stats.has(Max) && d.rmHi.ok)
	if !recheck {
		res, err := r.parents.UpdateOne(ctx, filter, update)
		if err != nil {
			return false, r.advise(err)
		}
		return res.MatchedCount == 1, nil
	}
	after, err := r.parents.FindOneAndUpdate(ctx, filter, update, options.FindOneAndUpdate().
		SetReturnDocument(options.After).SetProjection(bson.D{{Key: r.cfg.Target, Value: 1}})).Raw()
	if errors.Is(err, mongo.ErrNoDocuments) {
		return false, nil
	}
	if err != nil {
		return false, r.advise(err)
	}
	s, err := r.storedOf(after)
	if err != nil {
		return true, fmt.Errorf("parent %v: %w", d.parent, err)
	}
	// A removed value can only have been the min if it is not above the
	// stored one (the stored min already includes this delta's additions).
	lo := r.cfg.Stats.has(Min) && d.rmLo.ok && (!s.min.ok || d.rmLo.n.compare(s.min.n) <= 0)
	hi := r.cfg.Stats.has(Max) && d.rmHi.ok && (!s.max.ok || d.rmHi.n.compare(s.max.n) >= 0)
	if !lo && !hi {
		return true, nil
	}
	return true, r.extremes(ctx, d.parent, s.rev)
}

// advise adds to a server error on the parent's update what to do.
func (r *Rollup[P, C]) advise(err error) error {
	return fmt.Errorf("updating the totals (the stored %s may be of the wrong type: run Recompute): %w", r.cfg.Target, err)
}

// numberTypes are the BSON types counted: int32, int64 and double.
var numberTypes = bson.A{"int", "long", "double"}

// extremes recomputes parent's min and max from its children, through
// the {<Parent>: 1, <Value>: 1} index, and stores them by compare-and-set
// on the revision rev read before the children were: a write that lands
// meanwhile bumps the revision, and extremes reads again and retries, so
// a concurrent insert's value is never lost. A parent deleted meanwhile
// is left alone.
func (r *Rollup[P, C]) extremes(ctx context.Context, parent, rev bson.RawValue) error {
	for range maxAttempts {
		lo, hi, err := r.extremesOf(ctx, parent)
		if err != nil {
			return err
		}
		res, err := r.parents.UpdateOne(ctx, r.atRev(parent, rev), r.setExtremes(lo, hi))
		if err != nil {
			return r.advise(err)
		}
		if res.MatchedCount == 1 {
			return nil
		}
		doc, err := r.parents.FindOne(ctx, bson.D{{Key: "_id", Value: parent}},
			options.FindOne().SetProjection(bson.D{{Key: r.path("rev"), Value: 1}})).Raw()
		if errors.Is(err, mongo.ErrNoDocuments) {
			return nil
		}
		if err != nil {
			return err
		}
		rev = lookup(doc, r.path("rev"))
	}
	return fmt.Errorf("recomputing min and max of %v: %w", parent, ErrContention)
}

// atRev matches parent only while its revision is rev (absent when rev is
// the zero RawValue).
func (r *Rollup[P, C]) atRev(parent, rev bson.RawValue) bson.D {
	var want any = nil
	if rev.Type != 0 {
		want = rev
	}
	return bson.D{{Key: "_id", Value: parent}, {Key: r.path("rev"), Value: want}}
}

// setExtremes sets the kept min and max, unsetting an absent one.
func (r *Rollup[P, C]) setExtremes(lo, hi opt) bson.D {
	var set, unset bson.D
	for _, f := range []struct {
		stat Stat
		name string
		v    opt
	}{{Min, "min", lo}, {Max, "max", hi}} {
		switch {
		case !r.cfg.Stats.has(f.stat):
		case f.v.ok:
			set = append(set, bson.E{Key: r.path(f.name), Value: f.v.n.value()})
		default:
			unset = append(unset, bson.E{Key: r.path(f.name), Value: ""})
		}
	}
	var u bson.D
	if len(set) > 0 {
		u = append(u, bson.E{Key: "$set", Value: set})
	}
	if len(unset) > 0 {
		u = append(u, bson.E{Key: "$unset", Value: unset})
	}
	return u
}

// extremesOf finds the smallest and largest counted value of parent's
// children: two index-bounded finds of one document each.
func (r *Rollup[P, C]) extremesOf(ctx context.Context, parent bson.RawValue) (lo, hi opt, err error) {
	filter := bson.D{{Key: r.cfg.Parent, Value: parent}, {Key: r.cfg.Value, Value: bson.D{{Key: "$type", Value: numberTypes}}}}
	for _, f := range []struct {
		stat Stat
		dir  int
		dst  *opt
	}{{Min, 1, &lo}, {Max, -1, &hi}} {
		if !r.cfg.Stats.has(f.stat) {
			continue
		}
		doc, err := r.children.FindOne(ctx, filter, options.FindOne().
			SetSort(bson.D{{Key: r.cfg.Parent, Value: f.dir}, {Key: r.cfg.Value, Value: f.dir}}).
			SetProjection(bson.D{{Key: "_id", Value: 0}, {Key: r.cfg.Value, Value: 1}})).Raw()
		if errors.Is(err, mongo.ErrNoDocuments) {
			continue
		}
		if err != nil {
			return lo, hi, err
		}
		if n, ok := numberOf(lookup(doc, r.cfg.Value)); ok {
			*f.dst = opt{n, true}
		}
	}
	return lo, hi, nil
}
