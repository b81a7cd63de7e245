package versioning

import (
	"context"
	"fmt"

	"go.mongodb.org/mongo-driver/v2/bson"

	"github.com/formworkdb/formwork/pattern"
)

// maxDetails bounds the lines a Result carries.
const maxDetails = 200

// Verify reads every document and reports those the store cannot read:
// an undeclared version, an Up that fails, a result T cannot decode. Its
// Details also say how many documents are outdated (readable, upgraded
// in memory on each read): not a problem while a migration runs, the work
// Migrate has left.
func (s *Store[T]) Verify(ctx context.Context) (pattern.Result, error) {
	return s.Check(ctx, false)
}

// Check is Verify; with repair it first runs Migrate, so that outdated
// documents are rewritten at the newest version, and counts them in
// Repaired. Unreadable documents cannot be repaired by the store: fix or
// delete the ones it names.
func (s *Store[T]) Check(ctx context.Context, repair bool) (pattern.Result, error) {
	r := pattern.Result{Name: "versioning " + s.coll.Name()}
	if repair {
		p, err := s.Migrate(ctx, MigrateOptions{})
		if err != nil {
			return r, err
		}
		r.Repaired = int(p.Done)
	}
	cur, err := s.coll.Find(ctx, bson.D{})
	if err != nil {
		return r, err
	}
	defer cur.Close(ctx)
	outdated := 0
	for cur.Next(ctx) {
		r.Checked++
		_, n, err := s.Decode(cur.Current)
		if err != nil {
			r.Problems++
			if len(r.Details) < maxDetails {
				r.Details = append(r.Details, fmt.Sprintf("%v: %v", cur.Current.Lookup("_id"), err))
			}
			continue
		}
		if n != s.Latest() {
			outdated++
		}
	}
	if err := cur.Err(); err != nil {
		return r, err
	}
	if outdated > 0 {
		r.Details = append(r.Details, fmt.Sprintf("%d documents below version %d (readable; Migrate upgrades them)", outdated, s.Latest()))
	}
	return r, nil
}
