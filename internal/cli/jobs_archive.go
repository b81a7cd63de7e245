package cli

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/spf13/cobra"
	"go.mongodb.org/mongo-driver/v2/bson"

	"github.com/formworkdb/formwork/pattern/archive"
)

// init adds formwork jobs archive to the jobs.
func init() { jobCommands = append(jobCommands, newJobsArchiveCmd) }

// archiveOptions are the flags of formwork jobs archive.
type archiveOptions struct {
	jobFlags
	DB, Coll         string
	IntoDB, IntoColl string
	Field            string
	OlderThan        time.Duration
	Slice            time.Duration
	Filter           string
	KeepExisting     bool
	ProvenDelete     bool
}

// newJobsArchiveCmd is formwork jobs archive.
func newJobsArchiveCmd(env Env) *cobra.Command {
	o := &archiveOptions{}
	c := &cobra.Command{
		Use:   "archive",
		Short: "Move documents older than a cutoff to an archive collection",
		Long: `Copy the documents of --db/--coll whose --field is older than now minus
--older-than into the archive collection ($merge on _id), slice by slice,
oldest first, deleting each slice after its copy. The cutoff is computed
once and recorded in <db>.formwork_jobs with the progress, so a killed run
resumes with the same cutoff and neither loses nor duplicates a document.
--dry-run prints the cutoff and the documents a run would move.`,
		Example: `  formwork jobs archive --uri mongodb://127.0.0.1:27017 --db shop --coll orders \
      --field createdAt --older-than 8760h --into-db archive
  formwork jobs archive --uri mongodb://127.0.0.1:27017 --db shop --coll orders \
      --field createdAt --older-than 720h --filter '{"keep": {"$ne": true}}' --dry-run

Exit status: 0 on success, 1 on error, 2 on usage error, 130 if interrupted
(rerun to resume).`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := o.check(); err != nil {
				return err
			}
			if o.DB == "" || o.Coll == "" || o.Field == "" || o.OlderThan <= 0 {
				return usageError{errors.New("--db, --coll, --field and a positive --older-than are required")}
			}
			return runJobsArchive(env, o)
		},
	}
	f := c.Flags()
	o.bind(f)
	f.StringVar(&o.DB, "db", "", "database of the live collection")
	f.StringVar(&o.Coll, "coll", "", "live collection")
	f.StringVar(&o.IntoDB, "into-db", "", "database of the archive (default: --db)")
	f.StringVar(&o.IntoColl, "into-coll", "", "archive collection (default: <coll>_archive, or <coll> in another --into-db)")
	f.StringVar(&o.Field, "field", "", "date field that ages documents, e.g. createdAt")
	f.DurationVar(&o.OlderThan, "older-than", 0, "archive documents older than this, e.g. 8760h")
	f.DurationVar(&o.Slice, "slice", 24*time.Hour, "width of one copy-and-delete step")
	f.StringVar(&o.Filter, "filter", "", "extra query filter (Extended JSON) a document must match to be archived")
	f.BoolVar(&o.KeepExisting, "keep-existing", false, "never overwrite an archived copy (whenMatched keepExisting)")
	f.BoolVar(&o.ProvenDelete, "proven-delete", false, "delete only the _ids found in the archive")
	return c
}

// config builds the archive.Config from the flags.
func (o *archiveOptions) config() (archive.Config, error) {
	cfg := archive.Config{Field: o.Field, Age: o.OlderThan, Slice: o.Slice, ProvenDelete: o.ProvenDelete}
	if o.KeepExisting {
		cfg.WhenMatched = archive.KeepExisting
	}
	if o.Filter != "" {
		if err := bson.UnmarshalExtJSON([]byte(o.Filter), false, &cfg.Filter); err != nil {
			return cfg, usageError{fmt.Errorf("--filter: %w", err)}
		}
	}
	if err := cfg.Validate(); err != nil {
		return cfg, usageError{err}
	}
	return cfg, nil
}

// runJobsArchive plans, then (unless --dry-run) runs the archive job
// and prints its summary on stdout.
func runJobsArchive(env Env, o *archiveOptions) error {
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
	intoDB, intoColl := o.IntoDB, o.IntoColl
	if intoDB == "" {
		intoDB = o.DB
	}
	if intoColl == "" {
		intoColl = o.Coll
		if intoDB == o.DB {
			intoColl = o.Coll + "_archive"
		}
	}
	a, err := archive.New[bson.Raw](client.Database(o.DB).Collection(o.Coll), client.Database(intoDB).Collection(intoColl), cfg)
	if err != nil {
		return usageError{err}
	}
	now := time.Now()
	plan, err := a.Plan(ctx, archive.RunOptions{Now: now})
	if err != nil {
		return interrupted(ctx, err)
	}
	if o.DryRun {
		fmt.Fprintf(env.Stdout, "%s (dry run): cutoff %s%s; would move %d documents in %d slices\n",
			a.Name(), stamp(plan.Cutoff), resumedNote(plan.Resumed), plan.Copied, plan.Slices)
		return nil
	}
	if err := a.EnsureIndexes(ctx); err != nil {
		return interrupted(ctx, err)
	}
	bar := newJobProgress(env, "archive "+o.DB+"."+o.Coll, "documents", o.Quiet)
	var base int64 // deleted by the stopped run this one resumes
	if plan.Resumed {
		base = plan.Total.Deleted
	}
	bar.Set(0, plan.Copied)
	rep, err := a.Run(ctx, archive.RunOptions{Now: now, OnSlice: func(rec archive.Progress) {
		bar.Set(rec.Deleted-base, plan.Copied)
	}})
	bar.Finish(err)
	if err != nil {
		return interrupted(ctx, err)
	}
	fmt.Fprintf(env.Stdout, "%s: cutoff %s%s; moved %d documents in %d slices (copied %d)\n",
		a.Name(), stamp(rep.Cutoff), resumedNote(rep.Resumed), rep.Deleted, rep.Slices, rep.Copied)
	return nil
}

// stamp formats a cutoff.
func stamp(t time.Time) string { return t.UTC().Format("2006-01-02T15:04:05.000Z") }

// resumedNote says a run continued a stopped one.
func resumedNote(resumed bool) string {
	if resumed {
		return " (resuming a stopped run)"
	}
	return ""
}

// interrupted maps a cancelled context to errInterrupted.
func interrupted(ctx context.Context, err error) error {
	if ctx.Err() != nil && errors.Is(err, context.Canceled) {
		return errInterrupted
	}
	return err
}
