package archive

import (
	"context"
	"fmt"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo/options"

	"github.com/formworkdb/formwork/pattern"
)

// checkBatch is how many live _ids Check looks up in the archive per
// query.
const checkBatch = 500

// Check compares the live collection with the last run's cutoff: every
// live document matching Config.Filter older than that cutoff is a
// problem (a run stopped midway, or a document written with an old date
// after the run), and those already in the archive are copied but not
// yet deleted. Checked counts the live documents older than the cutoff.
// With repair, Check resumes the stopped run, or runs again with the
// recorded cutoff, and reports what it moved as Repaired. Before any run
// it checks nothing.
func (a *Archiver[T]) Check(ctx context.Context, repair bool) (pattern.Result, error) {
	res := pattern.Result{Name: a.Name()}
	rec, found, err := a.Status(ctx)
	if err != nil || !found {
		return res, wrapCheck(err)
	}
	f := a.rangeFilter(zeroTime, rec.Cutoff, true)
	cur, err := a.live.Find(ctx, f, options.Find().SetProjection(bson.D{{Key: "_id", Value: 1}}))
	if err != nil {
		return res, wrapCheck(err)
	}
	defer cur.Close(ctx)
	var ids bson.A
	var both int64
	flush := func() error {
		if len(ids) == 0 {
			return nil
		}
		n, err := a.archive.CountDocuments(ctx, bson.D{{Key: "_id", Value: bson.D{{Key: "$in", Value: ids}}}})
		both += n
		ids = ids[:0]
		return err
	}
	for cur.Next(ctx) {
		res.Checked++
		id := cur.Current.Lookup("_id")
		id.Value = append([]byte(nil), id.Value...)
		ids = append(ids, id)
		if len(ids) == checkBatch {
			if err := flush(); err != nil {
				return res, wrapCheck(err)
			}
		}
	}
	if err := cur.Err(); err != nil {
		return res, wrapCheck(err)
	}
	if err := flush(); err != nil {
		return res, wrapCheck(err)
	}
	res.Problems = res.Checked
	if rec.State == StateRunning {
		res.Details = append(res.Details, fmt.Sprintf("a run with cutoff %s stopped after %d slices", rec.Cutoff.Format("2006-01-02T15:04:05.000Z"), rec.Slices))
	}
	if res.Problems > 0 {
		res.Details = append(res.Details, fmt.Sprintf("%d live documents older than the cutoff, %d of them already archived", res.Problems, both))
	}
	if !repair || res.Problems == 0 {
		return res, nil
	}
	opts := RunOptions{}
	if rec.State == StateDone {
		opts.Cutoff = rec.Cutoff
	}
	rep, err := a.Run(ctx, opts)
	res.Repaired = int(rep.Deleted)
	return res, err
}

// wrapCheck adds the verb to err; nil stays nil.
func wrapCheck(err error) error {
	if err == nil {
		return nil
	}
	return fmt.Errorf("archive: check: %w", err)
}
