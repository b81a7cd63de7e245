package cli

import (
	"context"
	"fmt"
	"io"
	"sync"
	"time"

	"github.com/vbauerster/mpb/v8"
	"github.com/vbauerster/mpb/v8/decor"
	"go.mongodb.org/mongo-driver/v2/mongo"
	"go.mongodb.org/mongo-driver/v2/mongo/options"
)

// jobFlags are the flags every job shares.
type jobFlags struct {
	URI    string
	DryRun bool
	Quiet  bool
}

// bind adds the shared flags to c.
func (f *jobFlags) bind(c interface {
	StringVar(*string, string, string, string)
	BoolVar(*bool, string, bool, string)
}) {
	c.StringVar(&f.URI, "uri", "", "MongoDB connection string (required)")
	c.BoolVar(&f.DryRun, "dry-run", false, "report what a run would do, write nothing")
	c.BoolVar(&f.Quiet, "quiet", false, "no progress on stderr")
}

// check reports a missing --uri as a usage error.
func (f *jobFlags) check() error {
	if f.URI == "" {
		return usageError{fmt.Errorf("--uri is required")}
	}
	return nil
}

// connectJob connects to the job's deployment.
func connectJob(ctx context.Context, uri string) (*mongo.Client, func(), error) {
	client, err := mongo.Connect(options.Client().ApplyURI(uri).SetServerSelectionTimeout(10 * time.Second))
	if err != nil {
		return nil, nil, err
	}
	if err := client.Ping(ctx, nil); err != nil {
		client.Disconnect(context.Background())
		return nil, nil, fmt.Errorf("connect %s: %w", redactURI(uri), err)
	}
	return client, func() { client.Disconnect(context.Background()) }, nil
}

// redactURI drops a password from uri for messages.
func redactURI(uri string) string {
	for i := 0; i+3 <= len(uri); i++ {
		if uri[i:i+3] == "://" {
			rest := uri[i+3:]
			for j := 0; j < len(rest); j++ {
				switch rest[j] {
				case '/':
					return uri
				case '@':
					return uri[:i+3] + "…@" + rest[j+1:]
				}
			}
		}
	}
	return uri
}

// jobProgress shows a job's advance: a bar on a terminal, a line per
// step otherwise, nothing with --quiet.
type jobProgress interface {
	// Set records done of total units (total 0: unknown).
	Set(done, total int64)
	// Finish ends the display; err says whether the job failed.
	Finish(err error)
}

// newJobProgress picks the display for env's stderr.
func newJobProgress(env Env, name, unit string, quiet bool) jobProgress {
	switch {
	case quiet:
		return noProgress{}
	case isTerminal(env.Stderr):
		p := mpb.New(mpb.WithOutput(env.Stderr), mpb.WithWidth(40), mpb.WithRefreshRate(100*time.Millisecond))
		bar := p.AddBar(0,
			mpb.PrependDecorators(decor.Name(name, decor.WCSyncSpaceR), decor.CountersNoUnit("%d / %d "+unit)),
			mpb.AppendDecorators(decor.OnAbort(decor.OnComplete(decor.Percentage(), "done"), "stopped")))
		return &barProgress{p: p, bar: bar}
	}
	return &lineProgress{w: env.Stderr, name: name, unit: unit}
}

// noProgress shows nothing.
type noProgress struct{}

// Set does nothing.
func (noProgress) Set(int64, int64) {}

// Finish does nothing.
func (noProgress) Finish(error) {}

// barProgress is an mpb bar.
type barProgress struct {
	p   *mpb.Progress
	bar *mpb.Bar
}

// Set moves the bar.
func (b *barProgress) Set(done, total int64) {
	if total > 0 {
		b.bar.SetTotal(total, false)
	}
	b.bar.SetCurrent(done)
}

// Finish completes or aborts the bar and waits for it to render.
func (b *barProgress) Finish(err error) {
	if err != nil {
		b.bar.Abort(false)
	} else {
		b.bar.SetTotal(-1, true)
	}
	b.p.Wait()
}

// lineProgress writes a line per step.
type lineProgress struct {
	mu   sync.Mutex
	w    io.Writer
	name string
	unit string
}

// Set writes "<name>: done/total unit".
func (l *lineProgress) Set(done, total int64) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if total > 0 {
		fmt.Fprintf(l.w, "%s: %d/%d %s\n", l.name, done, total, l.unit)
	} else {
		fmt.Fprintf(l.w, "%s: %d %s\n", l.name, done, l.unit)
	}
}

// Finish writes nothing: the summary goes to stdout.
func (l *lineProgress) Finish(error) {}
