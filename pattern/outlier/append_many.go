package outlier

import (
	"context"
	"errors"
	"fmt"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo"
	"go.mongodb.org/mongo-driver/v2/mongo/options"

	"github.com/formworkdb/formwork/pattern"
)

// maxManySwaps bounds the compare-and-set retries of one AppendMany on the
// parent's counter under concurrent Appends.
const maxManySwaps = 64

// AppendMany adds es, in order, to the parent with _id id, as many Appends
// would, in a few round trips: one conditional update of the parent pushes
// the elements that fit under Threshold into its list, adds len(es) to the
// counter and, when some do not fit, sets the flag, all in one
// single-document atomic update made on the counter value just read (a
// compare-and-set, retried a bounded number of times when concurrent
// Appends or Removes move the counter); then the rest go to overflow
// buckets, the first len%Size of them through bucket's AppendMany (into an
// open bucket with room, or a new one) and the full buckets' worth through
// bucket's Load, one insertMany. It returns how many elements it embedded
// and how many it overflowed.
//
// When elements overflow, the writes run in pattern.Atomic: one
// transaction where the deployment has them. Without transactions the
// parent is written first, as Append does, so a failure before the
// overflow writes leaves the counter ahead of the stored elements (never
// an element without its count); Verify reports it and Repair fixes the
// counter. A parent inserted without Create is initialised first;
// ErrParentNotFound and ErrNoCounter are returned as by Append.
func (s *Store[P, E]) AppendMany(ctx context.Context, id any, es []E) (embedded, overflowed int, err error) {
	if len(es) == 0 {
		return 0, 0, nil
	}
	for range maxManySwaps {
		count, err := s.counter(ctx, id)
		if err != nil {
			return 0, 0, fmt.Errorf("outlier: append many: %w", err)
		}
		k := min(max(s.cfg.Threshold-count, 0), len(es))
		done := false
		write := func(ctx context.Context) error {
			done = false
			ok, err := s.pushMany(ctx, id, count, es[:k], len(es))
			if err != nil || !ok {
				return err
			}
			if err := s.overflowMany(ctx, id, es[k:]); err != nil {
				return fmt.Errorf("overflow: %w", err)
			}
			done = true
			return nil
		}
		if k == len(es) {
			err = write(ctx)
		} else {
			err = s.atomic(ctx, write)
		}
		if err != nil {
			return 0, 0, fmt.Errorf("outlier: append many: %w", err)
		}
		if done {
			return k, len(es) - k, nil
		}
		if err := ctx.Err(); err != nil {
			return 0, 0, fmt.Errorf("outlier: append many: %w", err)
		}
	}
	return 0, 0, fmt.Errorf("outlier: append many: parent %v: counter keeps changing under the append", id)
}

// counter reads the parent's counter, initialising a parent without one.
// It wraps ErrParentNotFound and ErrNoCounter.
func (s *Store[P, E]) counter(ctx context.Context, id any) (int, error) {
	for range 2 {
		doc, err := s.parents.FindOne(ctx, bson.D{{Key: "_id", Value: id}},
			options.FindOne().SetProjection(bson.D{{Key: s.cfg.Count, Value: 1}})).Raw()
		if errors.Is(err, mongo.ErrNoDocuments) {
			return 0, fmt.Errorf("parent %v: %w", id, ErrParentNotFound)
		}
		if err != nil {
			return 0, err
		}
		v, lerr := doc.LookupErr(s.cfg.Count)
		if lerr != nil {
			if err := s.initialise(ctx, id); err != nil {
				return 0, err
			}
			continue
		}
		n, ok := v.AsInt64OK()
		if !ok {
			return 0, fmt.Errorf("parent %v has %s %v (%v): %w", id, s.cfg.Count, v, v.Type, ErrNoCounter)
		}
		return int(n), nil
	}
	return 0, fmt.Errorf("parent %v: %s missing after initialisation", id, s.cfg.Count)
}

// pushMany is the parent's compare-and-set: while its counter is still
// count, push head onto the list, add total to the counter and, when
// total exceeds len(head), set the flag. It reports whether it matched.
func (s *Store[P, E]) pushMany(ctx context.Context, id any, count int, head []E, total int) (bool, error) {
	upd := bson.D{{Key: "$inc", Value: bson.D{{Key: s.cfg.Count, Value: int32(total)}}}}
	if len(head) > 0 {
		upd = append(upd, bson.E{Key: "$push", Value: bson.D{{Key: s.cfg.List, Value: bson.D{{Key: "$each", Value: head}}}}})
	}
	if total > len(head) {
		upd = append(upd, bson.E{Key: "$set", Value: bson.D{{Key: s.cfg.Flag, Value: true}}})
	}
	// Numeric equality matches an int32, int64 or double counter alike.
	r, err := s.parents.UpdateOne(ctx, bson.D{{Key: "_id", Value: id}, {Key: s.cfg.Count, Value: int64(count)}}, upd)
	if err != nil {
		return false, err
	}
	return r.MatchedCount == 1, nil
}

// overflowMany writes tail to the parent's overflow: its first
// len(tail)%Size elements through bucket's AppendMany, so they fill an
// open bucket with room where there is one, then the rest as full buckets
// through Load (one insertMany), in order.
func (s *Store[P, E]) overflowMany(ctx context.Context, id any, tail []E) error {
	if len(tail) == 0 {
		return nil
	}
	if r := len(tail) % s.overflow.Config().Size; r > 0 {
		if _, err := s.overflow.AppendMany(ctx, id, tail[:r]); err != nil {
			return err
		}
		tail = tail[r:]
	}
	if len(tail) == 0 {
		return nil
	}
	_, err := s.overflow.Load(ctx, id, tail)
	return err
}

// atomic runs fn in pattern.Atomic, or directly when ctx already carries a
// session (a caller's transaction, such as pattern.Source's), so that the
// writes join it instead of starting a second transaction.
func (s *Store[P, E]) atomic(ctx context.Context, fn func(ctx context.Context) error) error {
	if mongo.SessionFromContext(ctx) != nil {
		return fn(ctx)
	}
	_, err := pattern.Atomic(ctx, s.parents.Database().Client(), fn)
	return err
}
