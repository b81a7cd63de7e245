package bucket

import (
	"context"
	"fmt"

	"go.mongodb.org/mongo-driver/v2/bson"
)

// Remove deletes one element of the owner, the first whose ElementID field
// equals id in the bucket holding it (a refund, an unlike), in one update
// of that bucket: a pipeline that cuts the element out of the array and
// sets count to the new length and, with Config.Time, the bounds to the
// remaining elements' times, all from the bucket as it is at that moment.
// Concurrent Appends, Removes and Replaces on the bucket therefore keep
// count and bounds exact. A bucket emptied this way stays, open, without
// bounds, and takes the next appends. It returns ErrNotFound, wrapped,
// when no element of the owner has the id.
func (s *Store[E]) Remove(ctx context.Context, owner, id any) error {
	if s.cfg.ElementID == "" {
		return fmt.Errorf("bucket: remove: %w", errNoElementID)
	}
	r, err := s.coll.UpdateOne(ctx, s.elementFilter(owner, id), s.removePipeline(id))
	if err != nil {
		return fmt.Errorf("bucket: remove: %w", err)
	}
	if r.MatchedCount == 0 || r.ModifiedCount == 0 {
		// Not matched, or matched through an id that is an array holding
		// id, which the pipeline leaves alone.
		return fmt.Errorf("bucket: remove: %v: %w", id, ErrNotFound)
	}
	return nil
}

// removePipeline is the update pipeline of Remove: elements without the
// first element whose id equals id, then the derived fields.
func (s *Store[E]) removePipeline(id any) bson.A {
	return bson.A{
		bson.D{{Key: "$set", Value: bson.D{{Key: s.cfg.Elements, Value: s.without(id, nil)}}}},
		bson.D{{Key: "$set", Value: s.derived()}},
	}
}

// replacePipeline is the update pipeline of Replace with Config.Time:
// the first element whose id equals id becomes e, then the derived fields.
func (s *Store[E]) replacePipeline(id any, e bson.Raw) bson.A {
	return bson.A{
		bson.D{{Key: "$set", Value: bson.D{{Key: s.cfg.Elements, Value: s.without(id, e)}}}},
		bson.D{{Key: "$set", Value: s.derived()}},
	}
}

// without is the expression for the elements array with the first element
// whose id equals id cut out, and e (when not nil) put in its place. With
// no such element (an id stored as an array matches the query but not
// this), the array is unchanged.
func (s *Store[E]) without(id any, e bson.Raw) bson.D {
	arr := "$" + s.cfg.Elements
	ids := bson.D{{Key: "$map", Value: bson.D{{Key: "input", Value: arr}, {Key: "in", Value: "$$this." + s.cfg.ElementID}}}}
	middle := bson.A{}
	if e != nil {
		middle = bson.A{bson.D{{Key: "$literal", Value: e}}}
	}
	return bson.D{{Key: "$let", Value: bson.D{
		{Key: "vars", Value: bson.D{{Key: "i", Value: bson.D{{Key: "$indexOfArray", Value: bson.A{ids, bson.D{{Key: "$literal", Value: id}}}}}}}},
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

// derived is a $set stage body recomputing count and, with Config.Time,
// the bounds from the elements array as it stands. A bound over no dated
// element is removed, so the next append's $min/$max sets it afresh.
func (s *Store[E]) derived() bson.D {
	arr := "$" + s.cfg.Elements
	set := bson.D{{Key: s.cfg.Count, Value: bson.D{{Key: "$size", Value: arr}}}}
	if s.cfg.Time == "" {
		return set
	}
	times := bson.D{{Key: "$filter", Value: bson.D{
		{Key: "input", Value: bson.D{{Key: "$map", Value: bson.D{{Key: "input", Value: arr}, {Key: "in", Value: "$$this." + s.cfg.Time}}}}},
		{Key: "cond", Value: bson.D{{Key: "$eq", Value: bson.A{bson.D{{Key: "$type", Value: "$$this"}}, "date"}}}},
	}}}
	bound := func(op string) bson.D {
		return bson.D{{Key: "$let", Value: bson.D{
			{Key: "vars", Value: bson.D{{Key: "ts", Value: times}}},
			{Key: "in", Value: bson.D{{Key: "$cond", Value: bson.A{
				bson.D{{Key: "$eq", Value: bson.A{bson.D{{Key: "$size", Value: "$$ts"}}, 0}}},
				"$$REMOVE",
				bson.D{{Key: op, Value: "$$ts"}},
			}}}},
		}}}
	}
	return append(set,
		bson.E{Key: s.cfg.MinTime, Value: bound("$min")},
		bson.E{Key: s.cfg.MaxTime, Value: bound("$max")})
}
