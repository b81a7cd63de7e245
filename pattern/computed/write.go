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

// checkChild marshals child, giving it an ObjectID _id in front when it
// has none (as the driver would, so the Change carries the stored _id),
// and checks that it names a parent and holds a number.
func (r *Rollup[P, C]) checkChild(child C) (bson.Raw, error) {
	raw, err := bson.Marshal(child)
	if err != nil {
		return nil, err
	}
	doc := bson.Raw(raw)
	if _, ok, _ := r.parentOf(doc); !ok {
		return nil, fmt.Errorf("child has no %q", r.cfg.Parent)
	}
	if _, ok := numberOf(lookup(doc, r.cfg.Value)); !ok {
		return nil, fmt.Errorf("%s: %w", r.cfg.Value, ErrNotNumber)
	}
	if _, err := doc.LookupErr("_id"); err == nil {
		return doc, nil
	}
	var d bson.D
	if err := bson.Unmarshal(doc, &d); err != nil {
		return nil, err
	}
	raw, err = bson.Marshal(append(bson.D{{Key: "_id", Value: bson.NewObjectID()}}, d...))
	return raw, err
}

// parentOf returns the parent a child names.
func (r *Rollup[P, C]) parentOf(doc bson.Raw) (bson.RawValue, bool, bool) {
	p, _, ok, num := r.counted(doc)
	return p, ok, num
}

// Insert inserts child, which must name its parent (Config.Parent) and
// hold a number (Config.Value), and adds it to the parent's totals with
// one update. It returns the child's _id (an ObjectID when it had none).
// Both writes run in one transaction where the deployment has them.
//
// When the parent does not exist Insert removes the child again and wraps
// ErrParentNotFound; a value that is not a number wraps ErrNotNumber
// before anything is written.
func (r *Rollup[P, C]) Insert(ctx context.Context, child C) (any, error) {
	doc, err := r.checkChild(child)
	if err != nil {
		return nil, fmt.Errorf("computed: insert: %w", err)
	}
	id := doc.Lookup("_id")
	_, err = pattern.Atomic(ctx, r.children.Database().Client(), func(ctx context.Context) error {
		if _, err := r.children.InsertOne(ctx, doc); err != nil {
			return err
		}
		var ds deltas
		r.add(&ds, pattern.Change{Op: pattern.Insert, After: doc})
		err := r.write(ctx, ds)
		if errors.Is(err, ErrParentNotFound) {
			// Without a transaction the child is already stored: take it
			// back. It counts nowhere, so the totals stay right meanwhile.
			if _, derr := r.children.DeleteOne(ctx, bson.D{{Key: "_id", Value: id}}); derr != nil {
				return fmt.Errorf("%w (removing the child: %v)", err, derr)
			}
		}
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("computed: insert: %w", err)
	}
	var out any
	_ = id.Unmarshal(&out)
	return out, nil
}

// InsertMany inserts children in one insertMany and adds them to their
// parents' totals with one update per parent (ApplyMany): the bulk load.
// Every child is checked and every named parent must exist before
// anything is written (ErrNotNumber, ErrParentNotFound). A parent deleted
// while InsertMany runs leaves orphans, which Check reports.
func (r *Rollup[P, C]) InsertMany(ctx context.Context, children []C) ([]any, error) {
	var ds deltas
	for i, c := range children {
		doc, err := r.checkChild(c)
		if err != nil {
			return nil, fmt.Errorf("computed: insert many: child %d: %w", i, err)
		}
		p, _, _ := r.parentOf(doc)
		ds.of(p)
	}
	ids := make(bson.A, 0, len(ds.order))
	for _, d := range ds.order {
		ids = append(ids, d.parent)
	}
	if len(ids) > 0 {
		n, err := r.parents.CountDocuments(ctx, bson.D{{Key: "_id", Value: bson.D{{Key: "$in", Value: ids}}}})
		if err != nil {
			return nil, fmt.Errorf("computed: insert many: %w", err)
		}
		if n != int64(len(ids)) {
			return nil, fmt.Errorf("computed: insert many: %w: %d of %d parents", ErrParentNotFound, int64(len(ids))-n, len(ids))
		}
	}
	out, err := r.src.InsertMany(ctx, children)
	if err != nil {
		return out, fmt.Errorf("computed: insert many: %w", err)
	}
	return out, nil
}

// Update applies update (operators or a pipeline) to the child id and the
// change to its parents' totals: a new value is an edit, a new parent a
// move (subtracted from the old parent, added to the new). It returns the
// child as it now is and wraps ErrNotFound. A move to a parent that does
// not exist wraps ErrParentNotFound: in a transaction nothing changes;
// without one the child has moved and counts nowhere until it moves
// again.
func (r *Rollup[P, C]) Update(ctx context.Context, id any, update any) (C, error) {
	c, err := r.src.Update(ctx, id, update)
	if err != nil {
		return c, fmt.Errorf("computed: update: %w", err)
	}
	return c, nil
}

// Edit sets the value of the child id (an int, int32, int64 or float64)
// and adds the difference to its parent's totals. It wraps ErrNotFound
// and ErrNotNumber.
func (r *Rollup[P, C]) Edit(ctx context.Context, id any, value any) (C, error) {
	if _, err := goNumber(value); err != nil {
		var c C
		return c, fmt.Errorf("computed: edit: %w", err)
	}
	c, err := r.src.Update(ctx, id, bson.D{{Key: "$set", Value: bson.D{{Key: r.cfg.Value, Value: value}}}})
	if err != nil {
		return c, fmt.Errorf("computed: edit: %w", err)
	}
	return c, nil
}

// Move makes the child id a child of parent: its value leaves the old
// parent's totals and joins the new one's. It wraps ErrNotFound, and
// ErrParentNotFound (before writing) when parent does not exist.
func (r *Rollup[P, C]) Move(ctx context.Context, id any, parent any) (C, error) {
	var c C
	if err := r.parents.FindOne(ctx, bson.D{{Key: "_id", Value: parent}},
		options.FindOne().SetProjection(bson.D{{Key: "_id", Value: 1}})).Err(); err != nil {
		if errors.Is(err, mongo.ErrNoDocuments) {
			err = fmt.Errorf("%v: %w", parent, ErrParentNotFound)
		}
		return c, fmt.Errorf("computed: move: %w", err)
	}
	c, err := r.src.Update(ctx, id, bson.D{{Key: "$set", Value: bson.D{{Key: r.cfg.Parent, Value: parent}}}})
	if err != nil {
		return c, fmt.Errorf("computed: move: %w", err)
	}
	return c, nil
}

// Delete deletes the child id and subtracts it from its parent's totals.
// It returns the deleted child and wraps ErrNotFound.
func (r *Rollup[P, C]) Delete(ctx context.Context, id any) (C, error) {
	c, err := r.src.Delete(ctx, id)
	if err != nil {
		return c, fmt.Errorf("computed: delete: %w", err)
	}
	return c, nil
}

// DeleteParent deletes the parent id under Config.OnParentDelete and
// returns how many children it deleted (Cascade; 0 otherwise):
//
//   - Refuse: deletes the parent only if no child names it, else wraps
//     ErrHasChildren and writes nothing;
//   - Cascade: deletes the parent, then every child naming it;
//   - Detach: deletes the parent and leaves its children.
//
// It wraps ErrParentNotFound. The writes run in one transaction where the
// deployment has them. Without one, Cascade deletes the parent first, so
// a child inserted meanwhile either finds no parent (Insert takes it
// back) or is deleted with the others; a failure between the two deletes
// leaves orphans that Repair deletes. Refuse's check and delete are two
// operations: a child inserted between them is orphaned, and Check
// reports it.
func (r *Rollup[P, C]) DeleteParent(ctx context.Context, id any) (int64, error) {
	var n int64
	_, err := pattern.Atomic(ctx, r.parents.Database().Client(), func(ctx context.Context) error {
		n = 0
		byParent := bson.D{{Key: r.cfg.Parent, Value: id}}
		if r.cfg.OnParentDelete == Refuse {
			err := r.children.FindOne(ctx, byParent, options.FindOne().SetProjection(bson.D{{Key: "_id", Value: 1}})).Err()
			if err == nil {
				return fmt.Errorf("%v: %w", id, ErrHasChildren)
			}
			if !errors.Is(err, mongo.ErrNoDocuments) {
				return err
			}
		}
		res, err := r.parents.DeleteOne(ctx, bson.D{{Key: "_id", Value: id}})
		if err != nil {
			return err
		}
		if res.DeletedCount == 0 {
			return fmt.Errorf("%v: %w", id, ErrParentNotFound)
		}
		if r.cfg.OnParentDelete != Cascade {
			return nil
		}
		cres, err := r.children.DeleteMany(ctx, byParent)
		if err != nil {
			return fmt.Errorf("parent deleted, children not (run Repair): %w", err)
		}
		n = cres.DeletedCount
		return nil
	})
	if err != nil {
		return n, fmt.Errorf("computed: delete parent: %w", err)
	}
	return n, nil
}

// backfillBatch is how many parent updates Backfill sends per bulkWrite.
const backfillBatch = 500

// Backfill sets every parent's totals from its children, whatever they
// held: one $group over the children, then one update per parent, sent
// in unordered bulk writes of backfillBatch. It is for a quiet
// collection (the first load after adopting the pattern, or after
// changing Stats); under concurrent writes use Repair, which
// compare-and-sets. It returns the number of parents written.
func (r *Rollup[P, C]) Backfill(ctx context.Context) (int64, error) {
	want := map[string]stored{}
	err := r.group(ctx, bson.D{{Key: r.cfg.Parent, Value: bson.D{{Key: "$exists", Value: true}}}}, "$"+r.cfg.Parent,
		func(id bson.RawValue, s stored) { want[key(id)] = s })
	if err != nil {
		return 0, fmt.Errorf("computed: backfill: %w", err)
	}
	var n int64
	var batch []mongo.WriteModel
	flush := func() error {
		if len(batch) == 0 {
			return nil
		}
		res, err := r.parents.BulkWrite(ctx, batch, options.BulkWrite().SetOrdered(false))
		if res != nil {
			n += res.MatchedCount
		}
		batch = batch[:0]
		return err
	}
	err = r.eachParent(ctx, func(id bson.RawValue, _ bson.Raw) error {
		batch = append(batch, mongo.NewUpdateOneModel().
			SetFilter(bson.D{{Key: "_id", Value: id}}).SetUpdate(r.set(want[key(id)])))
		if len(batch) < backfillBatch {
			return nil
		}
		return flush()
	})
	if err == nil {
		err = flush()
	}
	if err != nil {
		return n, fmt.Errorf("computed: backfill: %w", err)
	}
	return n, nil
}
