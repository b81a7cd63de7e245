package outlier

import (
	"context"
	"errors"
	"fmt"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo"
	"go.mongodb.org/mongo-driver/v2/mongo/options"
)

// Placement says where Append put an element.
type Placement int

const (
	// Embedded: in the parent's list.
	Embedded Placement = iota + 1
	// Overflowed: in the parent's overflow buckets.
	Overflowed
)

// String returns "embedded" or "overflowed".
func (p Placement) String() string {
	switch p {
	case Embedded:
		return "embedded"
	case Overflowed:
		return "overflowed"
	}
	return fmt.Sprintf("Placement(%d)", int(p))
}

// Append adds e to the parent with _id id: into its list while the
// counter is below Threshold, otherwise into its overflow (see the package
// documentation for the statements). A parent inserted without Create
// (no counter, list or flag) is initialised first, in one conditional
// update. It returns ErrParentNotFound or ErrNoCounter, wrapped, instead
// of diverting an element for a parent that is missing or whose counter
// is not a number.
func (s *Store[P, E]) Append(ctx context.Context, id any, e E) (Placement, error) {
	// A Repair or Remove that lowers the counter between the two
	// conditional updates makes both miss, and an uninitialised parent
	// misses both once; the loop then starts over. The bound keeps a
	// parent whose counter flips under heavy removal from looping forever.
	for range 16 {
		r, err := s.parents.UpdateOne(ctx,
			bson.D{{Key: "_id", Value: id}, {Key: s.cfg.Count, Value: bson.D{{Key: "$lt", Value: s.cfg.Threshold}}}},
			bson.D{
				{Key: "$push", Value: bson.D{{Key: s.cfg.List, Value: e}}},
				{Key: "$inc", Value: bson.D{{Key: s.cfg.Count, Value: int32(1)}}},
			})
		if err != nil {
			return 0, fmt.Errorf("outlier: append: %w", err)
		}
		if r.MatchedCount == 1 {
			return Embedded, nil
		}
		// Full, missing, or without a counter: only "full" matches this.
		r, err = s.parents.UpdateOne(ctx,
			bson.D{{Key: "_id", Value: id}, {Key: s.cfg.Count, Value: bson.D{{Key: "$gte", Value: s.cfg.Threshold}}}},
			bson.D{
				{Key: "$set", Value: bson.D{{Key: s.cfg.Flag, Value: true}}},
				{Key: "$inc", Value: bson.D{{Key: s.cfg.Count, Value: int32(1)}}},
			})
		if err != nil {
			return 0, fmt.Errorf("outlier: append: %w", err)
		}
		if r.MatchedCount == 1 {
			if _, err := s.overflow.Append(ctx, id, e); err != nil {
				return 0, fmt.Errorf("outlier: append: overflow: %w", err)
			}
			return Overflowed, nil
		}
		if err := s.checkParent(ctx, id); err != nil {
			return 0, fmt.Errorf("outlier: append: %w", err)
		}
	}
	return 0, fmt.Errorf("outlier: append: parent %v: counter keeps changing under the append", id)
}

// initialise gives a parent without a counter (inserted by the
// application, not by Create) its counter, list and flag: count the length
// of the list it may already hold, an empty list when it has none, the
// flag false when it has none. It is one pipeline update conditional on
// the counter still missing, so concurrent first Appends initialise the
// parent once. A list that is not an array is left alone and reported.
func (s *Store[P, E]) initialise(ctx context.Context, id any) error {
	list := "$" + s.cfg.List
	filter := bson.D{
		{Key: "_id", Value: id},
		{Key: s.cfg.Count, Value: bson.D{{Key: "$exists", Value: false}}},
		{Key: "$or", Value: bson.A{
			bson.D{{Key: s.cfg.List, Value: bson.D{{Key: "$exists", Value: false}}}},
			bson.D{{Key: s.cfg.List, Value: bson.D{{Key: "$type", Value: "array"}}}},
		}},
	}
	upd := bson.A{
		bson.D{{Key: "$set", Value: bson.D{
			{Key: s.cfg.List, Value: bson.D{{Key: "$ifNull", Value: bson.A{list, bson.A{}}}}},
			{Key: s.cfg.Flag, Value: bson.D{{Key: "$ifNull", Value: bson.A{"$" + s.cfg.Flag, false}}}},
		}}},
		bson.D{{Key: "$set", Value: bson.D{{Key: s.cfg.Count, Value: bson.D{{Key: "$size", Value: list}}}}}},
	}
	r, err := s.parents.UpdateOne(ctx, filter, upd)
	if err != nil {
		return err
	}
	if r.MatchedCount == 0 {
		// Initialised meanwhile, deleted, or a list that is not an array.
		var doc bson.Raw
		err := s.parents.FindOne(ctx, bson.D{{Key: "_id", Value: id}}).Decode(&doc)
		if errors.Is(err, mongo.ErrNoDocuments) {
			return fmt.Errorf("parent %v: %w", id, ErrParentNotFound)
		}
		if err != nil {
			return err
		}
		if v, err := doc.LookupErr(s.cfg.List); err == nil && v.Type != bson.TypeArray {
			if _, err := doc.LookupErr(s.cfg.Count); err != nil {
				return fmt.Errorf("parent %v: %s is %v, not an array", id, s.cfg.List, v.Type)
			}
		}
	}
	return nil
}

// checkParent explains why neither conditional update matched: the
// parent is missing, or its counter is (then it initialises it), or the
// counter is not a number; nil means the append can be tried again.
func (s *Store[P, E]) checkParent(ctx context.Context, id any) error {
	var doc bson.Raw
	err := s.parents.FindOne(ctx, bson.D{{Key: "_id", Value: id}},
		options.FindOne().SetProjection(bson.D{{Key: s.cfg.Count, Value: 1}})).Decode(&doc)
	if errors.Is(err, mongo.ErrNoDocuments) {
		return fmt.Errorf("parent %v: %w", id, ErrParentNotFound)
	}
	if err != nil {
		return err
	}
	v, lerr := doc.LookupErr(s.cfg.Count)
	if lerr != nil {
		return s.initialise(ctx, id)
	}
	if !v.IsNumber() {
		return fmt.Errorf("parent %v has %s %v (%v): %w", id, s.cfg.Count, v, v.Type, ErrNoCounter)
	}
	return nil
}
