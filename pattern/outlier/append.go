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
// documentation for the statements). It returns ErrNoParent or
// ErrNoCounter, wrapped, instead of diverting an element for a parent that
// is missing or has no counter.
func (s *Store[E]) Append(ctx context.Context, id any, e E) (Placement, error) {
	// A Repair that lowers the counter between the two conditional
	// updates makes both miss; the loop then starts over. Three rounds
	// are plenty: nothing else lowers the counter.
	for range 3 {
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

// checkParent explains why neither conditional update matched: the
// parent is missing, or its counter is; nil means it is now below the
// threshold again.
func (s *Store[E]) checkParent(ctx context.Context, id any) error {
	var doc bson.Raw
	err := s.parents.FindOne(ctx, bson.D{{Key: "_id", Value: id}},
		options.FindOne().SetProjection(bson.D{{Key: s.cfg.Count, Value: 1}})).Decode(&doc)
	if errors.Is(err, mongo.ErrNoDocuments) {
		return fmt.Errorf("%w: %v", ErrNoParent, id)
	}
	if err != nil {
		return err
	}
	v, lerr := doc.LookupErr(s.cfg.Count)
	if lerr != nil {
		return fmt.Errorf("%w: parent %v has no %q", ErrNoCounter, id, s.cfg.Count)
	}
	if !v.IsNumber() {
		return fmt.Errorf("%w: parent %v has %s %v (%v)", ErrNoCounter, id, s.cfg.Count, v, v.Type)
	}
	return nil
}
