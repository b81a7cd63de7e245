package outlier

import (
	"context"
	"errors"
	"fmt"

	"go.mongodb.org/mongo-driver/v2/bson"

	"github.com/formworkdb/formwork/pattern"
)

// errNoElementID is returned by the element verbs without Config.ElementID.
var errNoElementID = fmt.Errorf("%w: Config.ElementID is not set", ErrInvalidConfig)

// Remove deletes one element of the parent id, the first whose ElementID
// field equals eid (a refund, an unlike), and lowers the counter by one.
// An embedded element goes in one pipeline update of the parent that cuts
// it out of the list and lowers the counter together. An overflow element
// is removed from its bucket (bucket.Store.Remove) and the counter then
// lowered, both in one transaction where the deployment has them (see the
// package documentation for what happens without). It reports where the
// element was and returns ErrNotFound, wrapped, when the parent holds no
// such element, ErrParentNotFound when there is no parent.
func (s *Store[P, E]) Remove(ctx context.Context, id, eid any) (Placement, error) {
	if s.cfg.ElementID == "" {
		return 0, fmt.Errorf("outlier: remove: %w", errNoElementID)
	}
	elem := s.cfg.List + "." + s.cfg.ElementID
	i := s.indexOf(eid)
	upd := bson.A{bson.D{{Key: "$set", Value: bson.D{
		{Key: s.cfg.List, Value: s.splice(i, nil)},
		{Key: s.cfg.Count, Value: bson.D{{Key: "$cond", Value: bson.A{
			bson.D{{Key: "$lt", Value: bson.A{i, 0}}}, "$" + s.cfg.Count,
			bson.D{{Key: "$subtract", Value: bson.A{"$" + s.cfg.Count, 1}}},
		}}}},
	}}}}
	r, err := s.parents.UpdateOne(ctx, bson.D{{Key: "_id", Value: id}, {Key: elem, Value: eid}}, upd)
	if err != nil {
		return 0, fmt.Errorf("outlier: remove: %w", err)
	}
	if r.ModifiedCount == 1 {
		return Embedded, nil
	}
	_, err = pattern.Atomic(ctx, s.parents.Database().Client(), func(ctx context.Context) error {
		if err := s.overflow.Remove(ctx, id, eid); err != nil {
			return err
		}
		r, err := s.parents.UpdateOne(ctx, bson.D{{Key: "_id", Value: id}},
			bson.D{{Key: "$inc", Value: bson.D{{Key: s.cfg.Count, Value: int32(-1)}}}})
		if err == nil && r.MatchedCount == 0 {
			err = fmt.Errorf("parent %v: %w", id, ErrParentNotFound)
		}
		return err
	})
	if errors.Is(err, ErrNotFound) {
		if perr := s.exists(ctx, id); perr != nil {
			return 0, fmt.Errorf("outlier: remove: %w", perr)
		}
		return 0, fmt.Errorf("outlier: remove: parent %v element %v: %w", id, eid, ErrNotFound)
	}
	if err != nil {
		return 0, fmt.Errorf("outlier: remove: %w", err)
	}
	return Overflowed, nil
}

// Replace overwrites the parent's element whose id is eid with e, which
// must carry the same id: in the embedded list with a positional $set
// ({_id, "items.id": eid}, {$set: {"items.$": e}}), otherwise in its
// overflow bucket (bucket.Store.Replace). One document either way. It
// returns ErrNotFound, wrapped, when the parent holds no such element.
func (s *Store[P, E]) Replace(ctx context.Context, id, eid any, e E) (Placement, error) {
	if s.cfg.ElementID == "" {
		return 0, fmt.Errorf("outlier: replace: %w", errNoElementID)
	}
	doc, err := bson.Marshal(e)
	if err != nil {
		return 0, fmt.Errorf("outlier: replace: element is not a document: %w", err)
	}
	got, err := bson.Raw(doc).LookupErr(s.cfg.ElementID)
	t, data, merr := bson.MarshalValue(eid)
	if err != nil || merr != nil || !got.Equal(bson.RawValue{Type: t, Value: data}) {
		return 0, fmt.Errorf("outlier: replace: element's %s is not %v", s.cfg.ElementID, eid)
	}
	r, err := s.parents.UpdateOne(ctx,
		bson.D{{Key: "_id", Value: id}, {Key: s.cfg.List + "." + s.cfg.ElementID, Value: eid}},
		bson.D{{Key: "$set", Value: bson.D{{Key: s.cfg.List + ".$", Value: bson.Raw(doc)}}}})
	if err != nil {
		return 0, fmt.Errorf("outlier: replace: %w", err)
	}
	if r.MatchedCount == 1 {
		return Embedded, nil
	}
	if err := s.overflow.Replace(ctx, id, eid, e); err != nil {
		if errors.Is(err, ErrNotFound) {
			if perr := s.exists(ctx, id); perr != nil {
				return 0, fmt.Errorf("outlier: replace: %w", perr)
			}
		}
		return 0, fmt.Errorf("outlier: replace: %w", err)
	}
	return Overflowed, nil
}

// exists returns ErrParentNotFound, wrapped, when parent id is missing.
func (s *Store[P, E]) exists(ctx context.Context, id any) error {
	n, err := s.parents.CountDocuments(ctx, bson.D{{Key: "_id", Value: id}})
	if err != nil {
		return err
	}
	if n == 0 {
		return fmt.Errorf("parent %v: %w", id, ErrParentNotFound)
	}
	return nil
}

// indexOf is the expression for the position in the list of the first
// element whose id equals eid, -1 when none does.
func (s *Store[P, E]) indexOf(eid any) bson.D {
	ids := bson.D{{Key: "$map", Value: bson.D{{Key: "input", Value: "$" + s.cfg.List}, {Key: "in", Value: "$$this." + s.cfg.ElementID}}}}
	return bson.D{{Key: "$indexOfArray", Value: bson.A{ids, bson.D{{Key: "$literal", Value: eid}}}}}
}

// splice is the expression for the list with the element at position i
// (an expression) cut out, and e put in its place when not nil; the list
// unchanged when i is negative.
func (s *Store[P, E]) splice(i bson.D, e bson.Raw) bson.D {
	arr := "$" + s.cfg.List
	middle := bson.A{}
	if e != nil {
		middle = bson.A{bson.D{{Key: "$literal", Value: e}}}
	}
	return bson.D{{Key: "$let", Value: bson.D{
		{Key: "vars", Value: bson.D{{Key: "i", Value: i}}},
		{Key: "in", Value: bson.D{{Key: "$cond", Value: bson.A{
			bson.D{{Key: "$lt", Value: bson.A{"$$i", 0}}},
			arr,
			bson.D{{Key: "$concatArrays", Value: bson.A{
				bson.D{{Key: "$slice", Value: bson.A{arr, "$$i"}}},
				middle,
				bson.D{{Key: "$slice", Value: bson.A{arr, bson.D{{Key: "$add", Value: bson.A{"$$i", 1}}},
					bson.D{{Key: "$max", Value: bson.A{1, bson.D{{Key: "$size", Value: arr}}}}}}}},
			}}},
		}}}},
	}}}
}
