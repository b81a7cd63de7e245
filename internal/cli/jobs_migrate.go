package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"time"

	"github.com/spf13/cobra"
	"github.com/vbauerster/mpb/v8"
	"github.com/vbauerster/mpb/v8/decor"
	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo"
	"go.mongodb.org/mongo-driver/v2/mongo/options"

	"github.com/formworkdb/formwork/pattern/versioning"
)

func init() { jobCommands = append(jobCommands, newMigrateCmd) }

// migrateOptions are the flags of formwork jobs migrate.
type migrateOptions struct {
	URI      string
	DB       string
	Coll     string
	Spec     string
	Field    string
	Batch    int
	Throttle time.Duration
	DryRun   bool
	Quiet    bool
}

// newMigrateCmd is formwork jobs migrate: versioning.Migrate driven by a
// declarative spec file.
func newMigrateCmd(env Env) *cobra.Command {
	o := &migrateOptions{}
	c := &cobra.Command{
		Use:   "migrate --uri URI --db DB --coll COLL --spec FILE",
		Short: "Upgrade a versioned collection's documents to the newest schema version",
		Long: `Upgrade every document of a collection whose documents carry a schema
version field to the newest version, in batches, with guarded pipeline
updates ({_id, schemaVersion: <old>}), recording progress in the
database's formwork_jobs collection so that a killed run resumes.

The upgrades come from a spec file (relaxed extended JSON), since a
command line job cannot run Go upgrade functions: each step renames
paths, sets defaults where a path is missing or null, and unsets paths,
in that order, from one version to the next:

  {"field": "schemaVersion", "first": 1,
   "steps": [ {"rename": {"work": "contactInfo.work", "home": "contactInfo.home"}},
              {"set": {"tags": []}, "unset": ["fax"]} ]}

A document without the field is the first version (or "missing").
--dry-run prints the live versions and what a run would upgrade.`,
		Example: `  formwork jobs migrate --uri mongodb://127.0.0.1:27017 --db crm --coll contacts --spec contacts.json --dry-run
  formwork jobs migrate --uri mongodb://127.0.0.1:27017 --db crm --coll contacts --spec contacts.json --batch 1000 --throttle 50ms`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			for name, v := range map[string]string{"--uri": o.URI, "--db": o.DB, "--coll": o.Coll, "--spec": o.Spec} {
				if v == "" {
					return usageError{fmt.Errorf("%s is required", name)}
				}
			}
			if o.Batch < 1 {
				return usageError{errors.New("--batch must be at least 1")}
			}
			if o.Throttle < 0 {
				return usageError{errors.New("--throttle must not be negative")}
			}
			return runMigrate(env, o)
		},
	}
	f := c.Flags()
	f.StringVar(&o.URI, "uri", "", "MongoDB connection string")
	f.StringVar(&o.DB, "db", "", "database")
	f.StringVar(&o.Coll, "coll", "", "collection")
	f.StringVar(&o.Spec, "spec", "", "declarative upgrade spec (JSON file)")
	f.StringVar(&o.Field, "field", "", `version field (default: the spec's, else "schemaVersion")`)
	f.IntVar(&o.Batch, "batch", 500, "documents per batch")
	f.DurationVar(&o.Throttle, "throttle", 0, "pause between batches")
	f.BoolVar(&o.DryRun, "dry-run", false, "report what a run would upgrade; write nothing")
	f.BoolVar(&o.Quiet, "quiet", false, "no progress on stderr")
	return c
}

// runMigrate connects, runs the migration and prints the summary.
func runMigrate(env Env, o *migrateOptions) error {
	data, err := os.ReadFile(o.Spec)
	if err != nil {
		return err
	}
	spec, err := versioning.ParseSpec(data)
	if err != nil {
		return usageError{err}
	}
	if o.Field != "" {
		spec.Field = o.Field
	}
	cfg, err := spec.Config(versioning.Config{Batch: o.Batch, Throttle: o.Throttle})
	if err != nil {
		return usageError{err}
	}
	ctx, stop := env.Signals()
	defer stop()
	client, err := mongo.Connect(options.Client().ApplyURI(o.URI).SetServerSelectionTimeout(10 * time.Second))
	if err != nil {
		return err
	}
	defer client.Disconnect(context.Background())
	s, err := versioning.New[bson.Raw](client.Database(o.DB).Collection(o.Coll), cfg)
	if err != nil {
		return err
	}
	before, err := s.Report(ctx)
	if err != nil {
		return migrateInterrupted(ctx, err)
	}
	fmt.Fprintf(env.Stdout, "%s.%s before:\n%s\n", o.DB, o.Coll, migrateIndent(before.String()))

	var bar *mpb.Bar
	var prog *mpb.Progress
	opts := versioning.MigrateOptions{DryRun: o.DryRun}
	if !o.Quiet && !o.DryRun {
		if isTerminal(env.Stderr) {
			prog = mpb.New(mpb.WithOutput(env.Stderr), mpb.WithWidth(32), mpb.WithRefreshRate(100*time.Millisecond))
			opts.OnBatch = func(p versioning.Progress) {
				if bar == nil {
					bar = prog.AddBar(p.Total, mpb.PrependDecorators(decor.Name("migrate", decor.WCSyncSpaceR)),
						mpb.AppendDecorators(decor.CountersNoUnit("%d / %d", decor.WCSyncSpace), decor.Elapsed(decor.ET_STYLE_GO, decor.WCSyncSpace)))
				}
				bar.SetTotal(p.Total, false)
				bar.SetCurrent(p.Done)
			}
		} else {
			opts.OnBatch = migrateLines(env.Stderr)
		}
	}
	p, err := s.Migrate(ctx, opts)
	if bar != nil {
		if err == nil {
			bar.SetTotal(p.Total, true)
		} else {
			bar.Abort(false)
		}
	}
	if prog != nil {
		prog.Wait()
	}
	if err != nil {
		err = migrateInterrupted(ctx, fmt.Errorf("migrate stopped at %s (rerun to resume): %w", p, err))
		if errors.Is(err, errInterrupted) {
			fmt.Fprintf(env.Stderr, "formwork: migrate interrupted at %s; progress is recorded, rerun to resume\n", p)
		}
		return err
	}
	if o.DryRun {
		fmt.Fprintf(env.Stdout, "dry run: %d documents to upgrade to version %d; nothing written\n", p.Total-p.Done, p.Version)
		return nil
	}
	after, err := s.Report(ctx)
	if err != nil {
		return migrateInterrupted(ctx, err)
	}
	resumed := ""
	if p.Resumed {
		resumed = " (resumed)"
	}
	fmt.Fprintf(env.Stdout, "migrated%s: %s in %d batches\n%s.%s after:\n%s\n", resumed, p, p.Batches, o.DB, o.Coll, migrateIndent(after.String()))
	if p.Failed > 0 {
		return fmt.Errorf("%d documents could not be upgraded; see formwork_jobs %q", p.Failed, s.JobID())
	}
	return nil
}

// migrateLines returns an OnBatch writing a line per batch, for logs.
func migrateLines(w io.Writer) func(versioning.Progress) {
	return func(p versioning.Progress) { fmt.Fprintf(w, "migrate: %s\n", p) }
}

// migrateInterrupted maps an error after a signal to errInterrupted.
func migrateInterrupted(ctx context.Context, err error) error {
	if ctx.Err() != nil && errors.Is(err, context.Canceled) {
		return errInterrupted
	}
	return err
}

// migrateIndent prefixes each line of s with two spaces.
func migrateIndent(s string) string {
	out := "  "
	for _, r := range s {
		out += string(r)
		if r == '\n' {
			out += "  "
		}
	}
	return out
}
