package lab

import (
	"fmt"
	"io"
	"sync"
	"time"

	"github.com/vbauerster/mpb/v8"
	"github.com/vbauerster/mpb/v8/decor"
)

// Bars is a Progress that draws one mpb bar per pattern, for a terminal.
// Call Wait after Run to let the last bar render.
type Bars struct {
	p *mpb.Progress
}

// NewBars returns bars drawn on w, normally a terminal's stderr.
func NewBars(w io.Writer) *Bars {
	return &Bars{p: mpb.New(mpb.WithOutput(w), mpb.WithWidth(32), mpb.WithRefreshRate(100*time.Millisecond))}
}

// Begin adds the pattern's bar.
func (b *Bars) Begin(pattern string, steps int) (step func(), done func(err error)) {
	bar := b.p.AddBar(int64(steps),
		mpb.PrependDecorators(decor.Name(pattern, decor.WCSyncSpaceR)),
		mpb.AppendDecorators(
			decor.OnAbort(decor.OnComplete(decor.Elapsed(decor.ET_STYLE_GO), "done"), "failed"),
		),
	)
	return bar.Increment, func(err error) {
		if err != nil {
			bar.Abort(false)
			return
		}
		bar.SetTotal(-1, true)
	}
}

// Wait waits for the bars to finish rendering.
func (b *Bars) Wait() { b.p.Wait() }

// Lines is a Progress that writes one line per pattern as it starts and
// ends, for logs and pipes where bars would be noise.
type Lines struct {
	mu sync.Mutex
	w  io.Writer
}

// NewLines returns a Progress writing lines to w.
func NewLines(w io.Writer) *Lines { return &Lines{w: w} }

// Begin writes the pattern's first line.
func (l *Lines) Begin(pattern string, steps int) (step func(), done func(err error)) {
	start := time.Now()
	l.printf("lab: %s…\n", pattern)
	return func() {}, func(err error) {
		if err != nil {
			l.printf("lab: %s failed after %.1fs\n", pattern, time.Since(start).Seconds())
			return
		}
		l.printf("lab: %s done in %.1fs\n", pattern, time.Since(start).Seconds())
	}
}

// printf writes one line under the lock.
func (l *Lines) printf(format string, args ...any) {
	l.mu.Lock()
	defer l.mu.Unlock()
	fmt.Fprintf(l.w, format, args...)
}
