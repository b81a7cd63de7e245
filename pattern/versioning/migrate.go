package versioning

import (
	"context"
	"errors"
	"fmt"
	"time"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo"
	"go.mongodb.org/mongo-driver/v2/mongo/options"
)

// maxFailures bounds the _ids of failed upgrades a job records.
const maxFailures = 20

// Progress is where a Migrate run stands: Done of Total documents
// brought to Version.
type Progress struct {
	Version  int   // the version documents are upgraded to
	Done     int64 // documents upgraded, by this run and the runs it resumes
	Total    int64 // documents outdated when the job started
	Batches  int   // batches run, this run and before
	Failed   int64 // documents whose Up failed; they stay at their version
	Resumed  bool  // this run continued a job a killed run left
	Finished bool  // no outdated document is left (besides Failed ones)
	DryRun   bool  // nothing was written
}

// String returns "N of M at version k", with what else applies.
func (p Progress) String() string {
	s := fmt.Sprintf("%d of %d at version %d", p.Done, p.Total, p.Version)
	if p.Failed > 0 {
		s += fmt.Sprintf(", %d failed", p.Failed)
	}
	if p.Finished {
		s += ", finished"
	}
	return s
}

// MigrateOptions are one Migrate run's options.
type MigrateOptions struct {
	// DryRun counts what would be upgraded and writes nothing.
	DryRun bool
	// OnBatch is called after each batch, with the progress recorded.
	OnBatch func(Progress)
}

// job is the progress document Migrate keeps in Config.Jobs.
type job struct {
	ID         string        `bson:"_id"`
	Kind       string        `bson:"job"`
	Namespace  string        `bson:"ns"`
	Version    int           `bson:"version"`
	Total      int64         `bson:"total"`
	Done       int64         `bson:"done"`
	Batches    int           `bson:"batches"`
	Failed     int64         `bson:"failed"`
	FailedIDs  bson.A        `bson:"failedIds"`
	LastID     bson.RawValue `bson:"lastId,omitempty"`
	Pass       int           `bson:"pass"`
	StartedAt  time.Time     `bson:"startedAt"`
	UpdatedAt  time.Time     `bson:"updatedAt"`
	FinishedAt *time.Time    `bson:"finishedAt"`
}

// JobID returns the _id of the collection's migrate job in Config.Jobs.
func (s *Store[T]) JobID() string {
	return "migrate " + s.coll.Database().Name() + "." + s.coll.Name()
}

// jobs returns the progress collection.
func (s *Store[T]) jobs() *mongo.Collection { return s.coll.Database().Collection(s.cfg.Jobs) }

// Migrate upgrades every outdated document to the newest version, in
// batches of Config.Batch in _id order with Config.Throttle between
// them, and records its progress in Config.Jobs after each batch. Each
// document is upgraded by a guarded write (filter {_id, <field>: <its
// version>}), so a document is never upgraded twice, whether two
// upgraders race or a killed run is rerun. A run killed at any point
// (its context cancelled, the process gone) leaves a job that the next
// Migrate resumes after the last recorded _id; a batch done but not
// recorded is found already upgraded and skipped. Once the scan reaches
// the end, a second pass from the start picks up documents written at an
// old version during the first (by code not yet upgraded). Documents
// whose Up fails are counted in Failed and left as they are.
//
// Resume relies on _id order: the _ids must be of one BSON type (the
// usual ObjectIDs), as $gt compares within one type only.
func (s *Store[T]) Migrate(ctx context.Context, o MigrateOptions) (Progress, error) {
	jobs := s.jobs()
	p := Progress{Version: s.Latest(), DryRun: o.DryRun}
	var j job
	err := jobs.FindOne(ctx, bson.D{{Key: "_id", Value: s.JobID()}}).Decode(&j)
	if err != nil && !errors.Is(err, mongo.ErrNoDocuments) {
		return p, err
	}
	resume := err == nil && j.FinishedAt == nil && j.Version == s.Latest()
	outdated, err := s.coll.CountDocuments(ctx, s.Outdated())
	if err != nil {
		return p, err
	}
	now := time.Now().UTC().Truncate(time.Millisecond)
	if !resume {
		j = job{ID: s.JobID(), Kind: "migrate", Namespace: s.coll.Database().Name() + "." + s.coll.Name(),
			Version: s.Latest(), Total: outdated, Pass: 1, StartedAt: now, UpdatedAt: now, FailedIDs: bson.A{}}
	} else {
		p.Resumed = true
		// A batch upgraded but not recorded before a kill: recount.
		if d := j.Total - outdated + j.Failed; d > j.Done {
			j.Done = min(d, j.Total)
		}
	}
	p.Total, p.Done, p.Batches, p.Failed = j.Total, j.Done, j.Batches, j.Failed
	if o.DryRun {
		p.Finished = outdated == 0
		return p, nil
	}
	if outdated == 0 {
		p.Finished = true
		if resume || j.Total > 0 {
			j.FinishedAt = &now
		}
		if resume {
			return p, s.saveJob(ctx, &j, &p, true)
		}
		return p, nil
	}
	if err := s.saveJob(ctx, &j, &p, false); err != nil {
		return p, err
	}
	// With a pipeline for every step the batch needs only _ids and
	// versions: the upgrade runs on the server.
	_, serverSide := s.pipeline(s.first())
	for {
		if err := ctx.Err(); err != nil {
			return p, err
		}
		filter := s.batchFilter(j.LastID)
		// The hint keeps the scan on the _id index from the last _id on,
		// rather than a collection scan and a sort per batch.
		fo := options.Find().SetSort(byID).SetLimit(int64(s.cfg.Batch)).SetHint(byID)
		if serverSide {
			fo.SetProjection(bson.D{{Key: "_id", Value: 1}, {Key: s.cfg.Field, Value: 1}})
		}
		cur, err := s.coll.Find(ctx, filter, fo)
		if err != nil {
			return p, err
		}
		var batch []bson.Raw
		if err := cur.All(ctx, &batch); err != nil {
			return p, err
		}
		if len(batch) == 0 {
			left, err := s.coll.CountDocuments(ctx, s.Outdated())
			if err != nil {
				return p, err
			}
			if left > j.Failed && j.Pass < 2 {
				j.Pass++
				j.LastID = bson.RawValue{}
				j.Total += max(0, left-j.Failed-(j.Total-j.Done-j.Failed))
				p.Total = j.Total
				if err := s.saveJob(ctx, &j, &p, false); err != nil {
					return p, err
				}
				continue
			}
			done := time.Now().UTC().Truncate(time.Millisecond)
			j.FinishedAt = &done
			// Exact at the end, whatever a killed run's writes still in
			// flight on the server did to the running count.
			j.Failed = left
			j.Done = max(0, j.Total-left)
			p.Finished = true
			return p, s.saveJob(ctx, &j, &p, true)
		}
		n, failed, err := s.upgradeBatch(ctx, batch)
		if err != nil {
			return p, err
		}
		j.Done += n
		if j.Pass > 1 {
			failed = nil // counted in the first pass; recounted at the end
		}
		j.Failed += int64(len(failed))
		for _, id := range failed {
			if len(j.FailedIDs) < maxFailures {
				j.FailedIDs = append(j.FailedIDs, id)
			}
		}
		j.Batches++
		j.LastID = batch[len(batch)-1].Lookup("_id")
		if err := s.saveJob(ctx, &j, &p, false); err != nil {
			return p, err
		}
		if o.OnBatch != nil {
			o.OnBatch(p)
		}
		if s.cfg.Throttle > 0 {
			t := time.NewTimer(s.cfg.Throttle)
			select {
			case <-ctx.Done():
				t.Stop()
				return p, ctx.Err()
			case <-t.C:
			}
		}
	}
}

// byID is the sort and hint of Migrate's batch query.
var byID = bson.D{{Key: "_id", Value: 1}}

// batchFilter is the filter of Migrate's batch query: the outdated
// documents after the last _id done.
func (s *Store[T]) batchFilter(last bson.RawValue) bson.D {
	filter := s.Outdated()
	if last.Type != 0 {
		filter = append(filter, bson.E{Key: "_id", Value: bson.D{{Key: "$gt", Value: last}}})
	}
	return filter
}

// saveJob records j and copies it into p.
func (s *Store[T]) saveJob(ctx context.Context, j *job, p *Progress, final bool) error {
	j.UpdatedAt = time.Now().UTC().Truncate(time.Millisecond)
	p.Total, p.Done, p.Batches, p.Failed = j.Total, j.Done, j.Batches, j.Failed
	_, err := s.jobs().ReplaceOne(ctx, bson.D{{Key: "_id", Value: j.ID}}, j, options.Replace().SetUpsert(true))
	return err
}

// upgradeBatch upgrades the batch's documents: one updateMany per stored
// version when the steps have pipelines, one guarded replace per document
// otherwise. It returns how many this call upgraded and the _ids whose Up
// failed.
func (s *Store[T]) upgradeBatch(ctx context.Context, batch []bson.Raw) (int64, []any, error) {
	byVersion := map[int][]bson.Raw{}
	var failed []any
	for _, doc := range batch {
		n, err := s.versionOf(doc)
		if err != nil {
			var id any
			_ = doc.Lookup("_id").Unmarshal(&id)
			failed = append(failed, id)
			continue
		}
		byVersion[n] = append(byVersion[n], doc)
	}
	var done int64
	for from := s.first(); from < s.Latest(); from++ {
		docs := byVersion[from]
		if len(docs) == 0 {
			continue
		}
		if p, ok := s.pipeline(from); ok {
			ids := make(bson.A, len(docs))
			for i, d := range docs {
				ids[i] = d.Lookup("_id")
			}
			filter := append(bson.D{{Key: "_id", Value: bson.D{{Key: "$in", Value: ids}}}}, s.AtVersion(from)...)
			res, err := s.coll.UpdateMany(ctx, filter, p)
			if err != nil {
				return done, failed, err
			}
			done += res.ModifiedCount
			continue
		}
		for _, d := range docs {
			var id any
			_ = d.Lookup("_id").Unmarshal(&id)
			ok, err := s.upgradeOne(ctx, d.Lookup("_id"), from, d)
			if errors.Is(err, ErrUpgrade) {
				failed = append(failed, id)
				continue
			}
			if err != nil {
				return done, failed, err
			}
			if ok {
				done++
			}
		}
	}
	return done, failed, nil
}
