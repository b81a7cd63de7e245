package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
	"time"

	"github.com/spf13/cobra"
	"go.mongodb.org/mongo-driver/v2/mongo"
	"go.mongodb.org/mongo-driver/v2/mongo/options"

	"github.com/formworkdb/formwork/advisor"
	"github.com/formworkdb/formwork/engine"
)

// errFindings reports findings at or above --fail-on: exit status 3.
var errFindings = errors.New("findings at or above --fail-on")

// adviseOptions are the flags of formwork advise.
type adviseOptions struct {
	URI            string
	DBs            []string
	ProfileFrom    string
	Sample         int
	Budget         time.Duration
	MaxTime        time.Duration
	JSON           string
	SARIF          string
	HTML           string
	FailOn         string
	EnableProfiler bool
	Demo           bool
	Checks         []string
	Thresholds     []string
	ListChecks     bool
}

func newAdviseCmd(env Env) *cobra.Command {
	o := &adviseOptions{}
	c := &cobra.Command{
		Use:   "advise",
		Short: "Find where each schema pattern fits and which mistake is present",
		Long: `Read a deployment through the official driver — read-only, every command
bounded by maxTimeMS, a sample size and a time budget — and report, with
measured evidence and the exact fix, where a catalogue pattern fits and
which common schema or indexing mistake is present.

It reads server version and topology; per collection $collStats, indexes,
$indexStats and a schema inferred on the server from a $sample; the
workload from each database's system.profile (or a file of JSON lines:
mongod logv2 slow-query lines or system.profile documents); explain of the
top query shapes. The only write it can make is --enable-profiler.

Checks: ` + strings.Join(checkIDs(), ", ") + `.

Thresholds (--threshold name=value): ` + thresholdNames() + `.

--demo builds a demo database with the catalogue's mistakes on an
in-memory embedded engine, runs its workload with the profiler on and
advises on it.`,
		Example: `  formwork advise --demo
  formwork advise --list-checks
  formwork advise --uri mongodb://127.0.0.1:27017 --db shop
  formwork advise --uri "$URI" --profile-from slow.log --json=report.json --html report.html
  formwork advise --uri "$URI" --sarif advise.sarif --fail-on warning
  formwork advise --uri "$URI" --threshold arrayLen=500 --sample 5000

Exit status: 0 on success, 1 on error, 2 on usage error, 3 when a finding
at or above --fail-on exists, 130 if interrupted.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			if o.ListChecks {
				return listChecks(env)
			}
			opts, err := o.parse()
			if err != nil {
				return usageError{err}
			}
			return runAdvise(env, o, opts)
		},
	}
	f := c.Flags()
	f.StringVar(&o.URI, "uri", "", "MongoDB connection string (required unless --demo)")
	f.StringArrayVar(&o.DBs, "db", nil, "database to inspect (repeatable; default: all but admin, local, config)")
	f.StringVar(&o.ProfileFrom, "profile-from", advisor.ProfileSource, `workload source: "system.profile" or a FILE of JSON lines`)
	f.IntVar(&o.Sample, "sample", advisor.DefaultSample, "documents sampled per collection ($sample)")
	f.DurationVar(&o.Budget, "budget", advisor.DefaultBudget, "time budget of the whole run")
	f.DurationVar(&o.MaxTime, "max-time", advisor.DefaultMaxTime, "maxTimeMS of each command")
	f.StringVar(&o.JSON, "json", "", `write the JSON report to FILE (--json alone or --json=-: stdout, instead of the text)`)
	f.Lookup("json").NoOptDefVal = "-"
	f.StringVar(&o.SARIF, "sarif", "", "write a SARIF 2.1.0 log to FILE")
	f.StringVar(&o.HTML, "html", "", "write a self-contained HTML report to FILE")
	f.StringVar(&o.FailOn, "fail-on", "", "exit 3 when a finding of this severity or higher exists: info, warning, error")
	f.BoolVar(&o.EnableProfiler, "enable-profiler", false, "set the profiler of each inspected database to level 1 (the only write)")
	f.BoolVar(&o.Demo, "demo", false, "advise on a demo database built on an in-memory engine")
	f.StringArrayVar(&o.Checks, "check", nil, "run only this check (repeatable)")
	f.StringArrayVar(&o.Thresholds, "threshold", nil, "set a threshold, name=value (repeatable)")
	f.BoolVar(&o.ListChecks, "list-checks", false, "list the checks with what they look for, and the thresholds, then exit")
	return c
}

// listChecks prints each check's id, pattern and description, then the
// thresholds with their defaults.
func listChecks(env Env) error {
	for _, c := range advisor.Checks() {
		fmt.Fprintf(env.Stdout, "%-30s %-12s %s\n", c.ID, c.Pattern, c.Doc)
	}
	_, err := fmt.Fprintf(env.Stdout, "\nthresholds (--threshold name=value): %s\n", advisor.ThresholdList())
	return err
}

// checkIDs lists the advisor's check ids.
func checkIDs() []string {
	var out []string
	for _, c := range advisor.Checks() {
		out = append(out, c.ID)
	}
	return out
}

// thresholdNames lists the thresholds with their defaults.
func thresholdNames() string {
	return advisor.ThresholdList()
}

// parse checks the flags and turns them into advisor options.
func (o *adviseOptions) parse() (advisor.Options, error) {
	var opts advisor.Options
	if o.URI == "" && !o.Demo {
		return opts, errors.New("--uri is required (or --demo)")
	}
	if o.URI != "" && o.Demo {
		return opts, errors.New("--demo runs on its own in-memory engine: drop --uri")
	}
	if o.Demo && (o.EnableProfiler || len(o.DBs) > 0 || o.ProfileFrom != advisor.ProfileSource) {
		return opts, errors.New("--demo takes no --db, --profile-from or --enable-profiler")
	}
	if o.Sample < 1 || o.Sample > 100000 {
		return opts, fmt.Errorf("--sample %d: must be between 1 and 100000", o.Sample)
	}
	if o.Budget <= 0 || o.MaxTime <= 0 {
		return opts, errors.New("--budget and --max-time must be positive")
	}
	if o.FailOn != "" {
		if _, err := advisor.ParseSeverity(o.FailOn); err != nil {
			return opts, err
		}
	}
	known := map[string]bool{}
	for _, id := range checkIDs() {
		known[id] = true
	}
	for _, id := range o.Checks {
		if !known[id] {
			return opts, fmt.Errorf("unknown check %q", id)
		}
	}
	for _, kv := range o.Thresholds {
		name, value, ok := strings.Cut(kv, "=")
		if !ok {
			return opts, fmt.Errorf("--threshold %q: want name=value", kv)
		}
		if err := opts.Thresholds.Set(name, value); err != nil {
			return opts, err
		}
	}
	opts.Databases, opts.Sample, opts.Budget, opts.MaxTime = o.DBs, o.Sample, o.Budget, o.MaxTime
	opts.EnableProfiler, opts.Checks = o.EnableProfiler, o.Checks
	if o.ProfileFrom != advisor.ProfileSource {
		data, err := os.ReadFile(o.ProfileFrom)
		if err != nil {
			return opts, fmt.Errorf("--profile-from: %w", err)
		}
		opts.ProfileFrom, opts.Workload = o.ProfileFrom, data
	}
	return opts, nil
}

func runAdvise(env Env, o *adviseOptions, opts advisor.Options) error {
	ctx, stop := env.Signals()
	defer stop()
	client, closeAll, err := adviseConnect(ctx, env, o, &opts)
	if err != nil {
		if ctx.Err() != nil {
			return errInterrupted
		}
		return err
	}
	defer closeAll()
	rep, err := advisor.Run(ctx, client, opts)
	if ctx.Err() != nil && errors.Is(err, context.Canceled) {
		return errInterrupted
	}
	if err != nil {
		return err
	}
	for _, out := range []struct {
		name  string
		write func(io.Writer) error
	}{{o.JSON, rep.WriteJSON}, {o.SARIF, rep.WriteSARIF}, {o.HTML, rep.WriteHTML}} {
		if out.name == "" {
			continue
		}
		if err := writeTo(env.Stdout, out.name, out.write); err != nil {
			return err
		}
	}
	if o.JSON != "-" && o.SARIF != "-" && o.HTML != "-" {
		if err := rep.WriteText(env.Stdout, isTerminal(env.Stdout) && os.Getenv("NO_COLOR") == ""); err != nil {
			return err
		}
	}
	if o.FailOn != "" {
		sev, _ := advisor.ParseSeverity(o.FailOn)
		if rep.AtLeast(sev) {
			return errFindings
		}
	}
	return nil
}

// adviseConnect connects to --uri, or builds the demo on an in-memory
// engine.
func adviseConnect(ctx context.Context, env Env, o *adviseOptions, opts *advisor.Options) (*mongo.Client, func(), error) {
	copts := options.Client().SetServerSelectionTimeout(15 * time.Second)
	if !o.Demo {
		client, err := mongo.Connect(copts.ApplyURI(o.URI))
		if err != nil {
			return nil, nil, err
		}
		opts.Target = advisor.Redact(o.URI)
		return client, func() { client.Disconnect(context.Background()) }, nil
	}
	db, err := engine.Open(ctx, engine.Options{})
	if err != nil {
		return nil, nil, err
	}
	client, err := mongo.Connect(copts.ApplyURI("mongodb://localhost:27017").SetDialer(db.Dialer()))
	if err != nil {
		db.Close()
		return nil, nil, err
	}
	closeAll := func() {
		client.Disconnect(context.Background())
		db.Close()
	}
	fmt.Fprintln(env.Stderr, "advise: building the demo database on an in-memory engine…")
	if err := advisor.Demo(ctx, client.Database(advisor.DemoDatabase)); err != nil {
		closeAll()
		return nil, nil, fmt.Errorf("demo: %w", err)
	}
	opts.Databases = []string{advisor.DemoDatabase}
	opts.Target = "demo database on the embedded engine (in memory)"
	return client, closeAll, nil
}
