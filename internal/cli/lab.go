package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"

	"github.com/mattn/go-isatty"
	"github.com/spf13/cobra"

	"github.com/formworkdb/formwork/lab"
)

// labOptions are the flags and arguments of formwork lab.
type labOptions struct {
	Patterns []string
	Scale    int
	Seed     int64
	URI      string
	JSON     string
	HTML     string
	Quiet    bool
}

func newLabCmd(env Env) *cobra.Command {
	o := &labOptions{}
	c := &cobra.Command{
		Use:   "lab [PATTERN…]",
		Short: "Measure what each schema pattern buys and what it charges",
		Long: `Run each pattern's scenario (orders with their customer, products with
reviews and ratings, page views, trades, books with buyers, product specs)
in its naive form and its patterned form on the same seeded data, measure
both with the server's own instruments (explain executionStats, command
monitoring, collStats) and print a verdict and a table per pattern.

Patterns: ` + fmt.Sprint(lab.Patterns()) + `; none named runs them all.

Without --uri the lab runs on an in-memory embedded engine. With --uri it
runs in a scratch database formwork_lab_<random>, refuses one that holds
data, drops it afterwards, and reports the server's version and topology.`,
		Example: `  formwork lab
  formwork lab subset outlier --scale 300
  formwork lab --json report.json --html report.html
  formwork lab --uri mongodb://127.0.0.1:27017 --json -

Exit status: 0 on success, 1 on error, 2 on usage error, 130 if interrupted.`,
		RunE: func(cmd *cobra.Command, args []string) error {
			o.Patterns = args
			if o.Scale < 1 {
				return usageError{fmt.Errorf("--scale must be at least 1")}
			}
			for _, p := range args {
				if !contains(lab.Patterns(), p) {
					return usageError{fmt.Errorf("unknown pattern %q (have %v)", p, lab.Patterns())}
				}
			}
			return runLab(env, o)
		},
	}
	f := c.Flags()
	f.IntVar(&o.Scale, "scale", lab.DefaultScale, "data size; 100 is the default, 10 a tenth of it")
	f.Int64Var(&o.Seed, "seed", lab.DefaultSeed, "seed of the data generator")
	f.StringVar(&o.URI, "uri", "", "MongoDB connection string (default: an in-memory embedded engine)")
	f.StringVar(&o.JSON, "json", "", `write the report as JSON to FILE ("-": stdout, instead of the table)`)
	f.StringVar(&o.HTML, "html", "", "write the report as one self-contained HTML file")
	f.BoolVar(&o.Quiet, "quiet", false, "no progress on stderr")
	return c
}

// contains reports whether xs holds x.
func contains(xs []string, x string) bool {
	for _, y := range xs {
		if y == x {
			return true
		}
	}
	return false
}

// isTerminal reports whether w is a terminal.
func isTerminal(w io.Writer) bool {
	f, ok := w.(*os.File)
	return ok && (isatty.IsTerminal(f.Fd()) || isatty.IsCygwinTerminal(f.Fd()))
}

func runLab(env Env, o *labOptions) error {
	ctx, stop := env.Signals()
	defer stop()
	opts := lab.Options{Patterns: o.Patterns, Scale: o.Scale, Seed: o.Seed, URI: o.URI}
	var bars *lab.Bars
	switch {
	case o.Quiet:
	case isTerminal(env.Stderr):
		bars = lab.NewBars(env.Stderr)
		opts.Progress = bars
	default:
		opts.Progress = lab.NewLines(env.Stderr)
	}
	rep, err := lab.Run(ctx, opts)
	if bars != nil {
		bars.Wait()
	}
	if ctx.Err() != nil && errors.Is(err, context.Canceled) {
		return errInterrupted
	}
	if err != nil {
		return err
	}
	if o.JSON != "" {
		if err := writeTo(env.Stdout, o.JSON, rep.WriteJSON); err != nil {
			return err
		}
	}
	if o.HTML != "" {
		if err := writeTo(env.Stdout, o.HTML, rep.WriteHTML); err != nil {
			return err
		}
	}
	if o.JSON == "-" || o.HTML == "-" {
		return nil
	}
	return rep.WriteTable(env.Stdout, isTerminal(env.Stdout) && os.Getenv("NO_COLOR") == "")
}

// writeTo runs write on the file name, or on stdout for "-".
func writeTo(stdout io.Writer, name string, write func(io.Writer) error) error {
	if name == "-" {
		return write(stdout)
	}
	f, err := os.Create(name)
	if err != nil {
		return err
	}
	if err := write(f); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}
