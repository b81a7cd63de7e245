package subset

import (
	"bytes"
	"context"
	"errors"
	"fmt"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo"
	"go.mongodb.org/mongo-driver/v2/mongo/options"

	"github.com/formworkdb/formwork/pattern"
)

// maxPush bounds the copies one $push carries, so that a bulk load of
// many children of one parent stays far below the 16 MiB command limit.
const maxPush = 1000

// Apply brings the window up to date with one write already made on the
// child collection (pattern.Dependent):
//
//   - Insert pushes the child's copy into its parent's window ($push with
//     $each, $sort and $slice), unless the copy is there already, so a
//     replayed insert changes nothing.
//   - Update with the same parent and time edits the copy in place when
//     it is in the window; a new time refills the window (the child may
//     enter or leave the newest N); a new parent pushes the copy into the
//     new parent's window and refills the old one's.
//   - Delete refills the parent's window when it holds the child.
//
// A child that breaks the time rule wraps ErrTimeType; an insert or move
// naming a parent that does not exist wraps ErrParentNotFound. Apply is
// safe for concurrent use: every window write is one single-document
// update, and those that depend on a read compare and set.
func (w *Window[P, C]) Apply(ctx context.Context, c pattern.Change) error {
	var err error
	switch c.Op {
	case pattern.Insert:
		err = w.applyInsert(ctx, c.After)
	case pattern.Update:
		err = w.applyUpdate(ctx, c.Before, c.After)
	case pattern.Delete:
		_, err = w.applyDelete(ctx, c.Before)
	default:
		err = fmt.Errorf("unknown op %v", c.Op)
	}
	if err != nil {
		return fmt.Errorf("subset: apply %v %v: %w", c.Op, c.ID(), err)
	}
	return nil
}

// ApplyMany applies many changes (pattern.BatchApplier). Consecutive
// inserts are applied together: one $push per parent carrying the copies
// of all its new children, instead of one per child. Other changes are
// applied one by one, in order.
func (w *Window[P, C]) ApplyMany(ctx context.Context, cs []pattern.Change) error {
	var run []bson.Raw
	flush := func() error {
		err := w.insertBatch(ctx, run)
		run = run[:0]
		return err
	}
	for _, c := range cs {
		if c.Op == pattern.Insert {
			run = append(run, c.After)
			continue
		}
		if err := flush(); err != nil {
			return fmt.Errorf("subset: apply many: %w", err)
		}
		if err := w.Apply(ctx, c); err != nil {
			return err
		}
	}
	if err := flush(); err != nil {
		return fmt.Errorf("subset: apply many: %w", err)
	}
	return nil
}

// applyInsert pushes a new child's copy into its parent's window.
func (w *Window[P, C]) applyInsert(ctx context.Context, child bson.Raw) error {
	if child == nil {
		return errors.New("insert without the inserted document")
	}
	if err := w.cfg.checkChild(child); err != nil {
		return err
	}
	cp, err := w.copyOf(child)
	if err != nil {
		return err
	}
	parent := child.Lookup(w.cfg.Parent)
	if err := w.pushAll(ctx, parent, []bson.Raw{cp}); err != nil {
		return err
	}
	return w.recheck(ctx, parent, child.Lookup("_id"), cp)
}

// recheck closes the gap between a child's write and the $push of its
// copy: an edit or delete of the child landing in that gap finds no copy
// to edit or remove, and the $push then embeds a stale copy. So after
// the push the child is read again, and when it is gone or its copy
// changed, the window is refilled (if it holds the child). Inside a
// transaction the gap does not exist and the read is skipped.
func (w *Window[P, C]) recheck(ctx context.Context, parent, id bson.RawValue, pushed bson.Raw) error {
	if tx, err := pattern.Transactions(ctx, w.client()); err != nil || tx {
		return err
	}
	now, err := w.children.FindOne(ctx, bson.D{{Key: "_id", Value: id}}).Raw()
	if err == nil {
		var cp bson.Raw
		if cp, err = w.copyOf(now); err == nil && bytes.Equal(cp, pushed) && now.Lookup(w.cfg.Parent).Equal(parent) {
			return nil
		}
	}
	if err != nil && !errors.Is(err, mongo.ErrNoDocuments) {
		return err
	}
	_, err = w.refill(ctx, parent, &id)
	return err
}

// pushAll pushes copies (at most maxPush) into parent's window, keeping
// the newest N in order:
//
//	updateOne({_id: p, "<Array>._id": {$nin: ids}},
//	  {$push: {<Array>: {$each: copies, $sort: {<Time>: -1, _id: -1}, $slice: N}}})
//
// The $nin condition keeps a copy that a refill (or an earlier run of
// the same change) already embedded from being pushed twice. When it
// matches nothing the parent either does not exist (ErrParentNotFound)
// or already holds one of the copies; then the window is refilled from
// the child collection, which embeds the rest. A parent whose field is
// null (a typed parent inserted with a nil slice) or not an array makes
// the $push fail; the refill then sets the field.
func (w *Window[P, C]) pushAll(ctx context.Context, parent bson.RawValue, copies []bson.Raw) error {
	ids := make(bson.A, len(copies))
	for i, c := range copies {
		ids[i] = c.Lookup("_id")
	}
	// Only an array (or a missing field) takes the $push: a write error
	// would abort the transaction the push runs in, so a parent whose
	// field is null or not an array is left unmatched and refilled.
	filter := bson.D{{Key: "_id", Value: parent}, {Key: w.cfg.Array + "._id", Value: bson.D{{Key: "$nin", Value: ids}}},
		{Key: "$or", Value: bson.A{
			bson.D{{Key: w.cfg.Array, Value: bson.D{{Key: "$type", Value: "array"}}}},
			bson.D{{Key: w.cfg.Array, Value: bson.D{{Key: "$exists", Value: false}}}},
		}}}
	push := bson.D{{Key: "$push", Value: bson.D{{Key: w.cfg.Array, Value: bson.D{
		{Key: "$each", Value: rawArray(copies)},
		{Key: "$sort", Value: w.order()},
		{Key: "$slice", Value: w.cfg.Size},
	}}}}}
	res, err := w.parents.UpdateOne(ctx, filter, push)
	var we mongo.WriteException
	if errors.As(err, &we) && len(we.WriteErrors) > 0 {
		// The parent's field is not an array: null where a typed parent
		// with a nil slice was inserted, or garbage. The refill sets it.
		if _, rerr := w.refill(ctx, parent, nil); rerr != nil {
			return errors.Join(err, rerr)
		}
		return nil
	}
	if err != nil {
		return err
	}
	if res.MatchedCount == 1 {
		return nil
	}
	if len(copies) == 1 {
		ok, err := w.parentExists(ctx, parent)
		if err != nil {
			return err
		}
		if !ok {
			return fmt.Errorf("%w: _id %v", ErrParentNotFound, parent)
		}
		// Already embedded, or a field that is not an array: the refill
		// leaves the first as it is and repairs the second.
	}
	_, err = w.refill(ctx, parent, nil)
	return err
}

// insertBatch applies inserts of many children: their copies grouped by
// parent, one push per parent (per maxPush copies). A child breaking the
// time rule or naming no existing parent is reported in the joined error
// after the others' windows are written.
func (w *Window[P, C]) insertBatch(ctx context.Context, docs []bson.Raw) error {
	type group struct {
		parent bson.RawValue
		copies []bson.Raw
	}
	var groups []*group
	var refused []error
	byParent := map[string]*group{}
	for _, d := range docs {
		if d == nil {
			return errors.New("insert without the inserted document")
		}
		if err := w.cfg.checkChild(d); err != nil {
			refused = append(refused, err) // the others still get their windows
			continue
		}
		cp, err := w.copyOf(d)
		if err != nil {
			return err
		}
		p := d.Lookup(w.cfg.Parent)
		key := string(rune(p.Type)) + string(p.Value)
		g := byParent[key]
		if g == nil {
			g = &group{parent: p}
			byParent[key] = g
			groups = append(groups, g)
		}
		g.copies = append(g.copies, cp)
	}
	missing := refused
	for _, g := range groups {
		for start := 0; start < len(g.copies); start += maxPush {
			end := min(start+maxPush, len(g.copies))
			err := w.pushAll(ctx, g.parent, g.copies[start:end])
			if errors.Is(err, ErrParentNotFound) {
				missing = append(missing, err)
				break
			}
			if err != nil {
				return err
			}
		}
	}
	return errors.Join(missing...)
}

// applyUpdate brings the window up to date with an edit of one child.
func (w *Window[P, C]) applyUpdate(ctx context.Context, before, after bson.Raw) error {
	if before == nil || after == nil {
		return errors.New("update without both document images")
	}
	if err := w.cfg.checkChild(after); err != nil {
		return err
	}
	id := after.Lookup("_id")
	from, to := before.Lookup(w.cfg.Parent), after.Lookup(w.cfg.Parent)
	if !from.Equal(to) {
		// A move: embed in the new parent first, so that a move to a
		// parent that does not exist leaves the old window untouched.
		if err := w.applyInsert(ctx, after); err != nil {
			return err
		}
		_, err := w.refill(ctx, from, &id)
		return err
	}
	if !before.Lookup(w.cfg.Time).Equal(after.Lookup(w.cfg.Time)) {
		_, err := w.refill(ctx, to, nil)
		if errors.Is(err, ErrParentNotFound) {
			return nil // a detached child: no window to keep
		}
		return err
	}
	return w.editInPlace(ctx, to, id, before, after)
}

// editInPlace replaces the copy of an edited child, when the window holds
// it as it was before the edit:
//
//	updateOne({_id: p, <Array>: copyBefore}, {$set: {"<Array>.$": copyAfter}})
//
// When that matches nothing, either the child is not in the window
// (nothing to do) or the window holds another version of it, because
// concurrent edits of one child applied out of order; the refill that
// follows then reads the child as it now is.
func (w *Window[P, C]) editInPlace(ctx context.Context, parent, id bson.RawValue, before, after bson.Raw) error {
	was, err := w.copyOf(before)
	if err != nil {
		return err
	}
	now, err := w.copyOf(after)
	if err != nil {
		return err
	}
	if bytes.Equal(was, now) {
		return nil // only uncopied fields changed
	}
	res, err := w.parents.UpdateOne(ctx,
		bson.D{{Key: "_id", Value: parent}, {Key: w.cfg.Array, Value: was}},
		bson.D{{Key: "$set", Value: bson.D{{Key: w.cfg.Array + ".$", Value: now}}}})
	if err != nil {
		return err
	}
	if res.MatchedCount == 1 {
		return nil
	}
	_, err = w.refill(ctx, parent, &id)
	return err
}

// applyDelete refills the window of a deleted child's parent when it
// holds the child's copy. A $pull alone would leave N-1 copies while the
// parent has more children. It returns the copies the refill wrote (nil
// when the window did not hold the child).
func (w *Window[P, C]) applyDelete(ctx context.Context, before bson.Raw) ([]bson.Raw, error) {
	if before == nil {
		return nil, errors.New("delete without the deleted document")
	}
	id := before.Lookup("_id")
	return w.refillTop(ctx, before.Lookup(w.cfg.Parent), &id)
}

// parentExists reports whether a parent document with _id parent exists.
func (w *Window[P, C]) parentExists(ctx context.Context, parent any) (bool, error) {
	n, err := w.parents.CountDocuments(ctx, bson.D{{Key: "_id", Value: parent}}, options.Count().SetLimit(1))
	return n == 1, err
}

// Settle reads the windows a finished edit, move or delete of one child
// could have left stale, and refills them (pattern.Settler). A refill
// writes the window from a read of the children; an edit of a child that
// is not in the window writes the child alone. Two such writers touch
// different documents, so neither a transaction's snapshot nor a
// compare-and-set orders them, and the refill can embed the child as it
// was before the edit. Settling after both are over closes that gap:
//
//   - an edit in place reads the window again and refills it when it
//     holds another version of the child (one read when it holds none,
//     or holds this edit's copy);
//   - a delete reads the window, or the children its refill embedded
//     (see settleDelete), and refills only on a stale finding;
//   - a move or a new time refills the windows concerned whenever they
//     differ from the newest children (two reads).
//
// Inserts need nothing: an insert and a refill both write the window.
// Without transactions there is nothing to settle either: each write of
// a child already reads the window after it, and each refill reads the
// children it embedded after writing them (see refill).
func (w *Window[P, C]) Settle(ctx context.Context, c pattern.Change) error {
	tx, err := pattern.Transactions(ctx, w.client())
	if err != nil || !tx {
		return err
	}
	switch c.Op {
	case pattern.Update:
		err = w.settleUpdate(ctx, c.Before, c.After)
	case pattern.Delete:
		if c.Before != nil {
			err = w.settleDelete(ctx, c.Before, nil, false)
		}
	}
	if err != nil {
		return fmt.Errorf("subset: settle %v %v: %w", c.Op, c.ID(), err)
	}
	return nil
}

// settleUpdate settles one edit or move of a child.
func (w *Window[P, C]) settleUpdate(ctx context.Context, before, after bson.Raw) error {
	if before == nil || after == nil || w.cfg.checkChild(after) != nil {
		return nil
	}
	id := after.Lookup("_id")
	from, to := before.Lookup(w.cfg.Parent), after.Lookup(w.cfg.Parent)
	if from.Equal(to) && before.Lookup(w.cfg.Time).Equal(after.Lookup(w.cfg.Time)) {
		was, err := w.copyOf(before)
		if err != nil {
			return err
		}
		now, err := w.copyOf(after)
		if err != nil || bytes.Equal(was, now) {
			return err
		}
		// One read settles the usual case: the window holds no copy
		// of the child, or holds this edit's copy (a later edit
		// settles itself).
		arr, err := w.window(ctx, to)
		if err != nil {
			return err
		}
		held, ok := copyIn(arr, id)
		if !ok || sameDoc(held, now) {
			return nil
		}
		return w.settleRefill(ctx, to, &id)
	}
	if err := w.settleRefill(ctx, from, nil); err != nil {
		return err
	}
	if from.Equal(to) {
		return nil
	}
	return w.settleRefill(ctx, to, &id)
}

// settleDelete settles the delete of the child before. A delete whose
// window did not hold the child wrote no window, so only a refill racing
// it can have embedded the child since: one read of the window says
// whether it holds the child. A delete that refilled the window may have
// embedded a child edited meanwhile: one read of the children it
// embedded says whether they still have their copies. With known set the
// caller says which: top is what its refill wrote, nil for none. Not
// knowing (a Source's delete), both reads are made, the second against
// the window as read. Either finding refills the window.
func (w *Window[P, C]) settleDelete(ctx context.Context, before bson.Raw, top []bson.Raw, known bool) error {
	parent, id := before.Lookup(w.cfg.Parent), before.Lookup("_id")
	if known && top != nil {
		ok, err := w.current(ctx, parent, top)
		if err != nil || ok {
			return err
		}
		return w.settleRefill(ctx, parent, nil)
	}
	stored, err := w.window(ctx, parent)
	if err != nil {
		return err
	}
	if holdsID(stored, id) {
		return w.settleRefill(ctx, parent, &id)
	}
	if known {
		return nil
	}
	ok, err := w.current(ctx, parent, copiesIn(stored))
	if err != nil || ok {
		return err
	}
	return w.settleRefill(ctx, parent, nil)
}

// copiesIn returns the copies (documents) in the stored array; none when
// it is missing or not an array.
func copiesIn(arr bson.RawValue) []bson.Raw {
	vals, ok := arr.ArrayOK()
	if !ok {
		return nil
	}
	elems, _ := vals.Values()
	var out []bson.Raw
	for _, e := range elems {
		if d, ok := e.DocumentOK(); ok {
			out = append(out, d)
		}
	}
	return out
}

// copyIn returns the copy with _id id in the stored array, if any.
func copyIn(arr bson.RawValue, id bson.RawValue) (bson.Raw, bool) {
	for _, d := range copiesIn(arr) {
		if d.Lookup("_id").Equal(id) {
			return d, true
		}
	}
	return nil, false
}

// settleRefill is refill for Settle: a parent deleted meanwhile has no
// window to settle.
func (w *Window[P, C]) settleRefill(ctx context.Context, parent bson.RawValue, only *bson.RawValue) error {
	_, err := w.refill(ctx, parent, only)
	if errors.Is(err, ErrParentNotFound) {
		return nil
	}
	return err
}
