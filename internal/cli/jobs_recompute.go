package cli

import (
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/spf13/cobra"
	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo"
	"go.mongodb.org/mongo-driver/v2/mongo/options"

	"github.com/formworkdb/formwork/pattern/archive"
	"github.com/formworkdb/formwork/pattern/computed"
)

// init adds formwork jobs recompute to the jobs.
func init() { jobCommands = append(jobCommands, newJobsRecomputeCmd) }

// recomputeOptions are the flags of formwork jobs recompute.
type recomputeOptions struct {
	jobFlags
	DB                string
	Parents, Children string
	Parent, Value     string
	Target            string
	Stats             string
	WhenNotMatched    string
	Batch             int
}

// newJobsRecomputeCmd is formwork jobs recompute.
func newJobsRecomputeCmd(env Env) *cobra.Command {
	o := &recomputeOptions{}
	c := &cobra.Command{
		Use:   "recompute",
		Short: "Recompute computed totals on the server ($group + $merge)",
		Long: `Recompute every parent's running totals (pattern/computed) from its
children on the server, in batches of parents in _id order: $group of the
batch's children $merge'd into the parents, and the parents whose children
all disappeared reset to the empty rollup. Progress (the last parent done)
is recorded in <db>.formwork_jobs, so a killed run resumes after it.
--dry-run runs Verify instead and writes nothing.`,
		Example: `  formwork jobs recompute --uri mongodb://127.0.0.1:27017 --db shop \
      --parents products --children reviews --parent productId --value stars --target rating
  formwork jobs recompute --uri mongodb://127.0.0.1:27017 --db shop --parents products \
      --children reviews --parent productId --value stars --target rating --stats sum,count,min,max --dry-run

Exit status: 0 on success, 1 on error, 2 on usage error, 130 if interrupted
(rerun to resume).`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := o.check(); err != nil {
				return err
			}
			if o.DB == "" || o.Parents == "" || o.Children == "" {
				return usageError{errors.New("--db, --parents and --children are required")}
			}
			return runJobsRecompute(env, o)
		},
	}
	f := c.Flags()
	o.bind(f)
	f.StringVar(&o.DB, "db", "", "database of both collections")
	f.StringVar(&o.Parents, "parents", "", "parent collection holding the totals")
	f.StringVar(&o.Children, "children", "", "child collection")
	f.StringVar(&o.Parent, "parent", "", "child field holding the parent's _id")
	f.StringVar(&o.Value, "value", "", "numeric child field the totals are over")
	f.StringVar(&o.Target, "target", "", "parent subdocument holding the totals")
	f.StringVar(&o.Stats, "stats", "sum,count", "statistics kept: sum,count,min,max")
	f.StringVar(&o.WhenNotMatched, "when-not-matched", "discard", "children of missing parents: discard, insert or fail")
	f.IntVar(&o.Batch, "batch", 1000, "parents per step")
	return c
}

// config builds the computed.Config from the flags.
func (o *recomputeOptions) config() (computed.Config, error) {
	cfg := computed.Config{Parent: o.Parent, Value: o.Value, Target: o.Target, WhenNotMatched: o.WhenNotMatched}
	for _, s := range strings.Split(o.Stats, ",") {
		switch strings.TrimSpace(s) {
		case "sum":
			cfg.Stats |= computed.Sum
		case "count":
			cfg.Stats |= computed.Count
		case "min":
			cfg.Stats |= computed.Min
		case "max":
			cfg.Stats |= computed.Max
		default:
			return cfg, usageError{fmt.Errorf("--stats: unknown statistic %q", s)}
		}
	}
	if o.Batch < 1 {
		return cfg, usageError{errors.New("--batch must be at least 1")}
	}
	if err := cfg.Validate(); err != nil {
		return cfg, usageError{err}
	}
	return cfg, nil
}

// recomputeRecord is the job's progress document.
type recomputeRecord struct {
	ID      string        `bson:"_id"`
	Job     string        `bson:"job"`
	State   string        `bson:"state"`
	Last    bson.RawValue `bson:"last,omitempty"`
	Done    int64         `bson:"done"`
	Started time.Time     `bson:"started"`
	Updated time.Time     `bson:"updated"`
}

// runJobsRecompute verifies (--dry-run) or recomputes, resuming after
// the last parent a stopped run recorded, and prints a summary.
func runJobsRecompute(env Env, o *recomputeOptions) error {
	cfg, err := o.config()
	if err != nil {
		return err
	}
	ctx, stop := env.Signals()
	defer stop()
	client, done, err := connectJob(ctx, o.URI)
	if err != nil {
		return err
	}
	defer done()
	db := client.Database(o.DB)
	r, err := computed.New[bson.Raw, bson.Raw](db.Collection(o.Parents), db.Collection(o.Children), cfg)
	if err != nil {
		return usageError{err}
	}
	jobs := db.Collection(archive.JobsCollection)
	id := "recompute " + o.DB + "." + o.Parents + "." + o.Target
	var rec recomputeRecord
	err = jobs.FindOne(ctx, bson.D{{Key: "_id", Value: id}}).Decode(&rec)
	if err != nil && !errors.Is(err, mongo.ErrNoDocuments) {
		return interrupted(ctx, err)
	}
	resumed := err == nil && rec.State == archive.StateRunning
	if o.DryRun {
		rep, err := r.Verify(ctx)
		if err != nil {
			return interrupted(ctx, err)
		}
		fmt.Fprintf(env.Stdout, "%s (dry run)%s: %d parents, %d with wrong totals, %d children of missing parents\n",
			r.Name(), resumedNote(resumed), rep.Checked, len(rep.Drifted), rep.Orphans)
		return nil
	}
	now := time.Now().UTC().Truncate(time.Millisecond)
	if !resumed {
		rec = recomputeRecord{ID: id, Job: "recompute", State: archive.StateRunning, Started: now, Updated: now}
		if _, err := jobs.ReplaceOne(ctx, bson.D{{Key: "_id", Value: id}}, rec, options.Replace().SetUpsert(true)); err != nil {
			return interrupted(ctx, err)
		}
	}
	if err := r.EnsureIndexes(ctx); err != nil {
		return interrupted(ctx, err)
	}
	total, err := db.Collection(o.Parents).EstimatedDocumentCount(ctx)
	if err != nil {
		return interrupted(ctx, err)
	}
	base := rec.Done
	bar := newJobProgress(env, "recompute "+o.DB+"."+o.Parents, "parents", o.Quiet)
	bar.Set(base, total)
	opts := computed.RecomputeOptions{Batch: o.Batch, OnBatch: func(last bson.RawValue, n int64) error {
		bar.Set(base+n, total)
		_, err := jobs.UpdateOne(ctx, bson.D{{Key: "_id", Value: id}}, bson.D{{Key: "$set", Value: bson.D{
			{Key: "last", Value: last}, {Key: "done", Value: base + n}, {Key: "updated", Value: time.Now().UTC().Truncate(time.Millisecond)}}}})
		return err
	}}
	if resumed && rec.Last.Type != 0 {
		opts.After = rec.Last
	}
	rep, err := r.RecomputeAll(ctx, opts)
	bar.Finish(err)
	if err != nil {
		return interrupted(ctx, err)
	}
	if _, err := jobs.UpdateOne(ctx, bson.D{{Key: "_id", Value: id}}, bson.D{{Key: "$set", Value: bson.D{
		{Key: "state", Value: archive.StateDone}, {Key: "updated", Value: time.Now().UTC().Truncate(time.Millisecond)}}}}); err != nil {
		return interrupted(ctx, err)
	}
	fmt.Fprintf(env.Stdout, "%s%s: recomputed %d parents in %d batches (%d in all)\n",
		r.Name(), resumedNote(resumed), rep.Parents, rep.Batches, base+rep.Parents)
	return nil
}
