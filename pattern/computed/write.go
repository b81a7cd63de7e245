package computed

import (
	"context"
	"errors"
	"fmt"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo"
	"go.mongodb.org/mongo-driver/v2/mongo/options"
)

// Insert inserts the source document doc, which must hold Config.Parent
// and a numeric Config.Value, and adds its value and 1 to its parent's
// sum and count with one $inc. It returns the inserted _id.
//
// When the parent does not exist Insert deletes the source again and
// wraps ErrParentNotFound. When the $inc fails (TypeMismatch (14) if the
// stored sum is not a number) the source stays and the error says to
// Recompute.
func (m *Mean) Insert(ctx context.Context, doc bson.D) (any, error) {
	raw, err := bson.Marshal(doc)
	if err != nil {
		return nil, fmt.Errorf("computed: insert: %w", err)
	}
	parent, perr := bson.Raw(raw).LookupErr(m.cfg.Parent)
	if perr != nil {
		return nil, fmt.Errorf("computed: insert: source has no %q", m.cfg.Parent)
	}
	v, ok := numberOf(bson.Raw(raw).Lookup(m.cfg.Value))
	if !ok {
		return nil, fmt.Errorf("computed: insert: %s: %w", m.cfg.Value, ErrNotNumber)
	}
	res, err := m.sources.InsertOne(ctx, doc)
	if err != nil {
		return nil, fmt.Errorf("computed: insert: %w", err)
	}
	matched, err := m.inc(ctx, parent, v, 1)
	if err != nil {
		return res.InsertedID, fmt.Errorf("computed: insert: source inserted, total not updated (run Recompute): %w", err)
	}
	if !matched {
		if _, err := m.sources.DeleteOne(ctx, bson.D{{Key: "_id", Value: res.InsertedID}}); err != nil {
			return nil, fmt.Errorf("computed: insert: %w: _id %v; removing the source: %v", ErrParentNotFound, parent, err)
		}
		return nil, fmt.Errorf("computed: insert: %w: _id %v", ErrParentNotFound, parent)
	}
	return res.InsertedID, nil
}

// inc adds sum and count to a parent's total and reports whether the
// parent exists.
func (m *Mean) inc(ctx context.Context, parent any, sum number, count int64) (bool, error) {
	incs := bson.D{{Key: m.sumPath(), Value: sum.value()}}
	if count != 0 {
		incs = append(incs, bson.E{Key: m.countPath(), Value: count})
	}
	res, err := m.parents.UpdateOne(ctx, bson.D{{Key: "_id", Value: parent}}, bson.D{{Key: "$inc", Value: incs}})
	if err != nil {
		return false, err
	}
	return res.MatchedCount == 1, nil
}

// Edit sets the value of the source document id to value (an int, int32,
// int64 or float64) and adds the difference to its parent's sum. The old
// value comes from the same atomic findOneAndUpdate, so concurrent edits
// of one source add up. It wraps ErrSourceNotFound.
func (m *Mean) Edit(ctx context.Context, id any, value any) error {
	newV, err := goNumber(value)
	if err != nil {
		return fmt.Errorf("computed: edit: %w", err)
	}
	before, err := m.sources.FindOneAndUpdate(ctx, bson.D{{Key: "_id", Value: id}},
		bson.D{{Key: "$set", Value: bson.D{{Key: m.cfg.Value, Value: value}}}},
		options.FindOneAndUpdate().SetReturnDocument(options.Before).
			SetProjection(bson.D{{Key: m.cfg.Parent, Value: 1}, {Key: m.cfg.Value, Value: 1}})).Raw()
	if errors.Is(err, mongo.ErrNoDocuments) {
		return fmt.Errorf("computed: edit: %w: _id %v", ErrSourceNotFound, id)
	}
	if err != nil {
		return fmt.Errorf("computed: edit: %w", err)
	}
	oldV, _ := numberOf(before.Lookup(m.cfg.Value)) // a non-number was not summed: zero
	delta := newV.add(oldV.neg())
	if delta.zero() {
		return nil
	}
	if _, err := m.inc(ctx, before.Lookup(m.cfg.Parent), delta, 0); err != nil {
		return fmt.Errorf("computed: edit: source updated, total not (run Recompute): %w", err)
	}
	return nil
}

// Delete deletes the source document id and subtracts its value and 1
// from its parent's sum and count. It wraps ErrSourceNotFound.
func (m *Mean) Delete(ctx context.Context, id any) error {
	gone, err := m.sources.FindOneAndDelete(ctx, bson.D{{Key: "_id", Value: id}},
		options.FindOneAndDelete().SetProjection(bson.D{{Key: m.cfg.Parent, Value: 1}, {Key: m.cfg.Value, Value: 1}})).Raw()
	if errors.Is(err, mongo.ErrNoDocuments) {
		return fmt.Errorf("computed: delete: %w: _id %v", ErrSourceNotFound, id)
	}
	if err != nil {
		return fmt.Errorf("computed: delete: %w", err)
	}
	v, _ := numberOf(gone.Lookup(m.cfg.Value))
	if _, err := m.inc(ctx, gone.Lookup(m.cfg.Parent), v.neg(), -1); err != nil {
		return fmt.Errorf("computed: delete: source deleted, total not updated (run Recompute): %w", err)
	}
	return nil
}

// goNumber converts the Go numbers Edit accepts.
func goNumber(v any) (number, error) {
	switch n := v.(type) {
	case int:
		return number{i: int64(n)}, nil
	case int32:
		return number{i: int64(n)}, nil
	case int64:
		return number{i: n}, nil
	case float64:
		return number{f: n, isFloat: true}, nil
	}
	return number{}, fmt.Errorf("%T: %w", v, ErrNotNumber)
}

// Get returns the stored total of parent. It wraps ErrParentNotFound.
func (m *Mean) Get(ctx context.Context, parent any) (Total, error) {
	t, err := m.get(ctx, parent)
	if err != nil {
		return Total{}, fmt.Errorf("computed: get: %w", err)
	}
	return t, nil
}

// Average reads parent's total, one document, and returns sum/count and
// the count; with no source documents it returns 0, 0. It wraps
// ErrParentNotFound.
func (m *Mean) Average(ctx context.Context, parent any) (avg float64, n int64, err error) {
	t, err := m.get(ctx, parent)
	if err != nil {
		return 0, 0, fmt.Errorf("computed: average: %w", err)
	}
	avg, _ = t.Average()
	return avg, t.Count, nil
}

// get reads one parent's total; Get and Average wrap its errors.
func (m *Mean) get(ctx context.Context, parent any) (Total, error) {
	doc, err := m.parents.FindOne(ctx, bson.D{{Key: "_id", Value: parent}},
		options.FindOne().SetProjection(bson.D{{Key: m.cfg.Target, Value: 1}})).Raw()
	if errors.Is(err, mongo.ErrNoDocuments) {
		return Total{}, fmt.Errorf("%w: _id %v", ErrParentNotFound, parent)
	}
	if err != nil {
		return Total{}, err
	}
	sum, count, err := m.totalOf(doc)
	if err != nil {
		return Total{}, err
	}
	return Total{Sum: sum.float(), Count: count}, nil
}
