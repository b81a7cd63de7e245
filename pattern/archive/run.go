package archive

import (
	"context"
	"errors"
	"fmt"
	"time"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo"
	"go.mongodb.org/mongo-driver/v2/mongo/options"
)

// The states of a progress record.
const (
	StateRunning = "running" // a run started and has not finished
	StateDone    = "done"    // the last run finished every slice
)

// Progress is a run's record in the live database's formwork_jobs
// collection (_id "archive <db>.<coll>"), written when the run starts and
// after every slice, so that a killed run resumes with the same cutoff.
type Progress struct {
	ID      string    `bson:"_id"`
	Job     string    `bson:"job"`
	Live    string    `bson:"live"`
	Archive string    `bson:"archive"`
	State   string    `bson:"state"`
	Cutoff  time.Time `bson:"cutoff"`
	Next    time.Time `bson:"next"`   // the end of the last slice done
	Slices  int64     `bson:"slices"` // slices copied and deleted
	Copied  int64     `bson:"copied"` // documents the copies matched
	Deleted int64     `bson:"deleted"`
	Started time.Time `bson:"started"`
	Updated time.Time `bson:"updated"`
}

// RunOptions tune one Run.
type RunOptions struct {
	// Now is the run's start, from which a new run's cutoff is Now - Age;
	// zero is time.Now(). A run that resumes ignores it.
	Now time.Time
	// Cutoff, when set, is a new run's cutoff instead of Now - Age.
	Cutoff time.Time
	// OnSlice is called after each slice with the record as written.
	OnSlice func(Progress)
}

// Report is the outcome of a Run or a Plan.
type Report struct {
	Cutoff  time.Time // the cutoff used, computed once per run
	Resumed bool      // the run continued one that had stopped
	Slices  int64     // slices this call processed (or, for Plan, would)
	Copied  int64     // documents copied (for Plan: to copy)
	Deleted int64     // documents deleted from the live collection
	Total   Progress  // the record after the call (Plan: as read)
}

// maxSlices bounds the slices one Run or Plan processes.
const maxSlices = 1_000_000

// Run archives every live document matching Config.Filter whose Field
// is older than the cutoff, slice by slice, oldest first: per slice one
// $merge copies the slice into the archive on _id, then one delete with
// the same filter (or, with ProvenDelete, the _ids read back from the
// archive) removes it from the live collection, then the progress record
// is updated. The cutoff is computed once, when a run starts, and
// recorded; a run that finds the record of a run that did not finish
// resumes it with the recorded cutoff, whatever Now says.
//
// Any kill point is safe: before a copy nothing of the slice has moved;
// between copy and delete the slice is in both collections and the
// rerun's $merge rewrites (Replace) or keeps (KeepExisting) the same
// _ids, never adding a second copy, before it deletes; after the delete
// the rerun starts from the oldest document still live. Run returns the
// context's error when cancelled, with the record saying where it was.
func (a *Archiver[T]) Run(ctx context.Context, opts RunOptions) (Report, error) {
	rep, err := a.run(ctx, opts)
	if err != nil {
		return rep, fmt.Errorf("archive: run: %w", err)
	}
	return rep, nil
}

// run is Run without the verb in errors.
func (a *Archiver[T]) run(ctx context.Context, opts RunOptions) (Report, error) {
	var rep Report
	rec, found, err := a.Status(ctx)
	if err != nil {
		return rep, err
	}
	if found && rec.State == StateRunning {
		rep.Resumed = true
	} else {
		rec = a.newRecord(opts)
		if _, err := a.jobs.ReplaceOne(ctx, bson.D{{Key: "_id", Value: rec.ID}}, rec,
			options.Replace().SetUpsert(true)); err != nil {
			return rep, err
		}
	}
	rep.Cutoff = rec.Cutoff
	err = a.slices(ctx, rec.Cutoff, func(f bson.D, end time.Time) error {
		n, err := a.live.CountDocuments(ctx, f)
		if err != nil {
			return err
		}
		if err := a.copySlice(ctx, f); err != nil {
			return err
		}
		a.at("copied")
		del, err := a.deleteSlice(ctx, f)
		if err != nil {
			return err
		}
		a.at("deleted")
		rep.Slices++
		rep.Copied += n
		rep.Deleted += del
		now := time.Now().UTC().Truncate(time.Millisecond)
		err = a.jobs.FindOneAndUpdate(ctx, bson.D{{Key: "_id", Value: rec.ID}}, bson.D{
			{Key: "$inc", Value: bson.D{{Key: "slices", Value: int64(1)}, {Key: "copied", Value: n}, {Key: "deleted", Value: del}}},
			{Key: "$set", Value: bson.D{{Key: "next", Value: end}, {Key: "updated", Value: now}}},
		}, options.FindOneAndUpdate().SetReturnDocument(options.After)).Decode(&rec)
		if err != nil {
			return err
		}
		a.at("recorded")
		if opts.OnSlice != nil {
			opts.OnSlice(rec)
		}
		return nil
	})
	if err != nil {
		return rep, err
	}
	now := time.Now().UTC().Truncate(time.Millisecond)
	err = a.jobs.FindOneAndUpdate(ctx, bson.D{{Key: "_id", Value: rec.ID}},
		bson.D{{Key: "$set", Value: bson.D{{Key: "state", Value: StateDone}, {Key: "updated", Value: now}}}},
		options.FindOneAndUpdate().SetReturnDocument(options.After)).Decode(&rep.Total)
	return rep, err
}

// newRecord starts the record of a new run: the cutoff, computed once.
func (a *Archiver[T]) newRecord(opts RunOptions) Progress {
	now := opts.Now
	if now.IsZero() {
		now = time.Now()
	}
	now = now.UTC().Truncate(time.Millisecond)
	cutoff := opts.Cutoff
	if cutoff.IsZero() {
		cutoff = now.Add(-a.cfg.Age)
	}
	// BSON dates hold milliseconds: truncate so the recorded cutoff is
	// the one every filter compares with.
	cutoff = cutoff.UTC().Truncate(time.Millisecond)
	return Progress{ID: a.jobID(), Job: "archive", Live: ns(a.live), Archive: ns(a.archive),
		State: StateRunning, Cutoff: cutoff, Started: now, Updated: now}
}

// Plan reports what Run would do now without writing: the cutoff it
// would use (the recorded one when a run stopped midway) and, per slice,
// the documents it would copy (counted with the slices' filters).
func (a *Archiver[T]) Plan(ctx context.Context, opts RunOptions) (Report, error) {
	var rep Report
	rec, found, err := a.Status(ctx)
	if err != nil {
		return rep, fmt.Errorf("archive: plan: %w", err)
	}
	if found && rec.State == StateRunning {
		rep.Resumed = true
	} else {
		rec = a.newRecord(opts)
	}
	rep.Cutoff, rep.Total = rec.Cutoff, rec
	err = a.slices(ctx, rec.Cutoff, func(f bson.D, _ time.Time) error {
		n, err := a.live.CountDocuments(ctx, f)
		rep.Slices++
		rep.Copied += n
		return err
	})
	if err != nil {
		return rep, fmt.Errorf("archive: plan: %w", err)
	}
	return rep, nil
}

// Status reads the progress record; found is false before the first run.
func (a *Archiver[T]) Status(ctx context.Context) (p Progress, found bool, err error) {
	err = a.jobs.FindOne(ctx, bson.D{{Key: "_id", Value: a.jobID()}}).Decode(&p)
	if errors.Is(err, mongo.ErrNoDocuments) {
		return p, false, nil
	}
	if err != nil {
		return p, false, err
	}
	return p, true, nil
}

// slices calls fn with the filter and end of every slice holding a live
// document older than cutoff, oldest first. Each slice starts at the
// oldest remaining document's Field, truncated to a multiple of Slice,
// so empty stretches cost one indexed findOne, not one step each.
func (a *Archiver[T]) slices(ctx context.Context, cutoff time.Time, fn func(f bson.D, end time.Time) error) error {
	var from time.Time
	for range maxSlices {
		if err := ctx.Err(); err != nil {
			return err
		}
		oldest, ok, err := a.oldest(ctx, from, cutoff)
		if err != nil || !ok {
			return err
		}
		start := oldest.Truncate(a.cfg.Slice)
		end := start.Add(a.cfg.Slice)
		if end.After(cutoff) {
			end = cutoff
		}
		if err := fn(a.rangeFilter(start, end, true), end); err != nil {
			return err
		}
		from = end
	}
	return fmt.Errorf("more than %d slices: raise Config.Slice", maxSlices)
}

// oldest returns the Field of the oldest live document to archive in
// [from, cutoff): one findOne sorted on the {<Field>: 1} index.
func (a *Archiver[T]) oldest(ctx context.Context, from, cutoff time.Time) (time.Time, bool, error) {
	raw, err := a.live.FindOne(ctx, a.rangeFilter(from, cutoff, true), options.FindOne().
		SetSort(bson.D{{Key: a.cfg.Field, Value: 1}}).
		SetProjection(bson.D{{Key: "_id", Value: 0}, {Key: a.cfg.Field, Value: 1}})).Raw()
	if errors.Is(err, mongo.ErrNoDocuments) {
		return time.Time{}, false, nil
	}
	if err != nil {
		return time.Time{}, false, err
	}
	v, err := raw.LookupErr(splitPath(a.cfg.Field)...)
	if err != nil {
		return time.Time{}, false, fmt.Errorf("oldest document has no %s", a.cfg.Field)
	}
	dt, ok := v.DateTimeOK()
	if !ok {
		return time.Time{}, false, fmt.Errorf("oldest document's %s is a %s, not a date", a.cfg.Field, v.Type)
	}
	return time.UnixMilli(dt).UTC(), true, nil
}

// copySlice copies the slice's documents into the archive with $merge.
func (a *Archiver[T]) copySlice(ctx context.Context, f bson.D) error {
	cur, err := a.live.Aggregate(ctx, a.copyPipeline(f))
	if err != nil {
		return err
	}
	return cur.Close(ctx)
}

// deleteBatch is how many _ids ProvenDelete deletes per command.
const deleteBatch = 1000

// deleteSlice deletes the slice from the live collection: one deleteMany
// with the copy's filter, or with ProvenDelete the _ids the archive
// holds in the slice's range, in batches.
func (a *Archiver[T]) deleteSlice(ctx context.Context, f bson.D) (int64, error) {
	if !a.cfg.ProvenDelete {
		res, err := a.live.DeleteMany(ctx, f)
		if err != nil {
			return 0, err
		}
		return res.DeletedCount, nil
	}
	// The archive side of the filter: the range only (Filter held on
	// the live side when the copy ran).
	rng := f
	if f[0].Key == "$and" {
		rng = f[0].Value.(bson.A)[0].(bson.D)
	}
	cur, err := a.archive.Find(ctx, rng, options.Find().SetProjection(bson.D{{Key: "_id", Value: 1}}))
	if err != nil {
		return 0, err
	}
	defer cur.Close(ctx)
	var n int64
	var ids bson.A
	flush := func() error {
		if len(ids) == 0 {
			return nil
		}
		res, err := a.live.DeleteMany(ctx, bson.D{{Key: "$and", Value: bson.A{f, bson.D{{Key: "_id", Value: bson.D{{Key: "$in", Value: ids}}}}}}})
		if err != nil {
			return err
		}
		n += res.DeletedCount
		ids = ids[:0]
		return nil
	}
	for cur.Next(ctx) {
		id := cur.Current.Lookup("_id")
		id.Value = append([]byte(nil), id.Value...)
		ids = append(ids, id)
		if len(ids) == deleteBatch {
			if err := flush(); err != nil {
				return n, err
			}
		}
	}
	if err := cur.Err(); err != nil {
		return n, err
	}
	return n, flush()
}

// at calls the test hook at a kill point.
func (a *Archiver[T]) at(point string) {
	if a.hook != nil {
		a.hook(point)
	}
}

// splitPath splits a dotted path for bson.Raw.LookupErr.
func splitPath(p string) []string {
	var out []string
	start := 0
	for i := 0; i < len(p); i++ {
		if p[i] == '.' {
			out = append(out, p[start:i])
			start = i + 1
		}
	}
	return append(out, p[start:])
}
