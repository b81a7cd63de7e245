package cli

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"sort"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"
	"go.mongodb.org/mongo-driver/v2/mongo"
	"go.mongodb.org/mongo-driver/v2/mongo/options"

	"github.com/formworkdb/formwork/engine"
	"github.com/formworkdb/formwork/internal/workload"
)

// benchOptions are the flags of formwork bench.
type benchOptions struct {
	URI      string
	DBPath   string
	Database string
	Duration time.Duration
	Clients  []int
	Only     []string
	JSON     bool
}

func newBenchCmd(env Env) *cobra.Command {
	o := &benchOptions{}
	c := &cobra.Command{
		Use:   "bench",
		Short: "Measure storage performance against a server or the embedded engine",
		Long: `Run the storage workloads (concurrent inserts, insertMany batches, indexed
point finds, index scan + fetch against a collection scan, a 50/40/10
read/update/insert mix with read latency percentiles, $push to a 100 KB
document) and print one line per workload.

With --uri the workloads run against that deployment (MongoDB or formwork
serve); without it, against an embedded engine, in memory or in --dbpath.
Each workload creates and drops its own collections in --database.`,
		Example: `  formwork bench
  formwork bench --dbpath /tmp/fw --only insertOne,mixed --clients 1,32
  formwork bench --uri mongodb://127.0.0.1:27017 --duration 5s --json

Exit status: 0 on success, 1 on error, 2 on usage error, 130 if interrupted.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			if o.URI != "" && o.DBPath != "" {
				return usageError{fmt.Errorf("--uri and --dbpath exclude each other")}
			}
			if o.Duration <= 0 {
				return usageError{fmt.Errorf("--duration must be positive")}
			}
			for _, n := range o.Clients {
				if n < 1 || n > 1024 {
					return usageError{fmt.Errorf("--clients: %d is not between 1 and 1024", n)}
				}
			}
			return runBench(env, o)
		},
	}
	f := c.Flags()
	f.StringVar(&o.URI, "uri", "", "MongoDB connection string (default: an embedded engine)")
	f.StringVar(&o.DBPath, "dbpath", "", "directory of the embedded engine's files (default: in memory)")
	f.StringVar(&o.Database, "database", "formwork_bench", "database the workloads write to")
	f.DurationVar(&o.Duration, "duration", 2*time.Second, "how long each workload runs")
	f.IntSliceVar(&o.Clients, "clients", []int{1, 8, 32}, "client counts for the concurrent workloads")
	f.StringSliceVar(&o.Only, "only", nil, "run only workloads whose name starts with one of these (e.g. insertOne,mixed)")
	f.BoolVar(&o.JSON, "json", false, "print results as JSON")
	return c
}

// benchReport is the --json output.
type benchReport struct {
	Version int               `json:"version"`
	Target  string            `json:"target"`
	Results []workload.Result `json:"results"`
}

func runBench(env Env, o *benchOptions) error {
	ctx, stop := env.Signals()
	defer stop()
	client, target, closeAll, err := benchClient(ctx, o)
	if err != nil {
		return err
	}
	defer closeAll()
	db := client.Database(o.Database)
	rep := benchReport{Version: 1, Target: target}
	for _, sp := range workload.All(o.Clients) {
		if !selected(sp.Name, o.Only) {
			continue
		}
		fmt.Fprintf(env.Stderr, "running %s…\n", sp.Name)
		r, err := sp.Run(ctx, db, o.Duration)
		if ctx.Err() != nil {
			return errInterrupted
		}
		if err != nil {
			return fmt.Errorf("%s: %w", sp.Name, err)
		}
		r.Name = sp.Name
		rep.Results = append(rep.Results, r)
	}
	if o.JSON {
		enc := json.NewEncoder(env.Stdout)
		enc.SetIndent("", "  ")
		return enc.Encode(rep)
	}
	printBench(env.Stdout, rep)
	return nil
}

// benchClient connects to o.URI, or opens an embedded engine and connects
// to it in process. It returns a description of the target and a
// function that disconnects and closes.
func benchClient(ctx context.Context, o *benchOptions) (*mongo.Client, string, func(), error) {
	if o.URI != "" {
		client, err := mongo.Connect(options.Client().ApplyURI(o.URI))
		if err != nil {
			return nil, "", nil, err
		}
		return client, o.URI, func() { client.Disconnect(context.Background()) }, nil
	}
	db, err := engine.Open(ctx, engine.Options{Dir: o.DBPath})
	if err != nil {
		return nil, "", nil, err
	}
	client, err := mongo.Connect(options.Client().ApplyURI("mongodb://localhost:27017").SetDialer(db.Dialer()).SetServerSelectionTimeout(10 * time.Second))
	if err != nil {
		db.Close()
		return nil, "", nil, err
	}
	target := "embedded engine in memory"
	if o.DBPath != "" {
		target = "embedded engine in " + o.DBPath
	}
	return client, target, func() { client.Disconnect(context.Background()); db.Close() }, nil
}

// selected reports whether name starts with one of only, or only is empty.
func selected(name string, only []string) bool {
	if len(only) == 0 {
		return true
	}
	for _, p := range only {
		if strings.HasPrefix(name, p) {
			return true
		}
	}
	return false
}

// printBench writes one line per result: name, operations, seconds and
// the metrics in name order.
func printBench(w io.Writer, rep benchReport) {
	fmt.Fprintf(w, "target: %s\n", rep.Target)
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	for _, r := range rep.Results {
		keys := make([]string, 0, len(r.Metrics))
		for k := range r.Metrics {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		var ms []string
		for _, k := range keys {
			ms = append(ms, formatMetric(r.Metrics[k])+" "+k)
		}
		fmt.Fprintf(tw, "%s\t%d ops\t%.2fs\t%s\n", r.Name, r.Ops, r.Seconds, strings.Join(ms, "  "))
	}
	tw.Flush()
}

// formatMetric prints v with three significant digits, without an
// exponent for values of 1,000 and more.
func formatMetric(v float64) string {
	if v >= 1000 || v <= -1000 {
		return fmt.Sprintf("%.0f", v)
	}
	return fmt.Sprintf("%.3g", v)
}
