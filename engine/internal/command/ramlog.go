package command

import (
	"context"
	"encoding/json"
	"log/slog"
	"sync"
	"time"

	"go.mongodb.org/mongo-driver/v2/bson"
)

// ramLogLines is how many lines a RAMLog keeps, as mongod's RamLog.
const ramLogLines = 1024

// ramLogLineMax bounds one line so the ring stays small.
const ramLogLineMax = 16 << 10

// RAMLog keeps the most recent log lines in memory for getLog: "global"
// holds every record at info level or above, "startupWarnings" the
// warnings logged while the engine opened. It is safe for concurrent use.
type RAMLog struct {
	mu       sync.Mutex
	lines    []string // ring of the newest lines
	next     int      // where the next line goes once full
	total    int64    // lines ever written
	warnings []string
	started  bool // startup is over: warnings no longer recorded
}

// EndStartup stops recording startupWarnings.
func (l *RAMLog) EndStartup() {
	l.mu.Lock()
	l.started = true
	l.mu.Unlock()
}

func (l *RAMLog) add(line string, warn bool) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if len(l.lines) < ramLogLines {
		l.lines = append(l.lines, line)
	} else {
		l.lines[l.next] = line
		l.next = (l.next + 1) % ramLogLines
	}
	l.total++
	if warn && !l.started && len(l.warnings) < ramLogLines {
		l.warnings = append(l.warnings, line)
	}
}

// snapshot returns the lines of the named log, oldest first, and how many
// were ever written.
func (l *RAMLog) snapshot(name string) ([]string, int64) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if name == "startupWarnings" {
		return append([]string(nil), l.warnings...), int64(len(l.warnings))
	}
	out := make([]string, 0, len(l.lines))
	out = append(out, l.lines[l.next:]...)
	out = append(out, l.lines[:l.next]...)
	return out, l.total
}

// WithRAMLog returns a logger that writes to log (nil discards) and also
// keeps recent records, formatted as mongod's JSON log lines, in the
// returned RAMLog.
func WithRAMLog(log *slog.Logger) (*slog.Logger, *RAMLog) {
	var next slog.Handler = slog.DiscardHandler
	if log != nil {
		next = log.Handler()
	}
	ram := &RAMLog{}
	return slog.New(&ramHandler{next: next, ram: ram}), ram
}

// ramHandler tees records into a RAMLog.
type ramHandler struct {
	next   slog.Handler
	ram    *RAMLog
	attrs  []slog.Attr
	groups []string
}

func (h *ramHandler) Enabled(ctx context.Context, l slog.Level) bool {
	return l >= slog.LevelInfo || h.next.Enabled(ctx, l)
}

func (h *ramHandler) Handle(ctx context.Context, r slog.Record) error {
	if r.Level >= slog.LevelInfo {
		h.ram.add(h.format(r), r.Level >= slog.LevelWarn)
	}
	if h.next.Enabled(ctx, r.Level) {
		return h.next.Handle(ctx, r)
	}
	return nil
}

func (h *ramHandler) WithAttrs(as []slog.Attr) slog.Handler {
	c := *h
	c.next = h.next.WithAttrs(as)
	c.attrs = append(append([]slog.Attr(nil), h.attrs...), as...)
	return &c
}

func (h *ramHandler) WithGroup(name string) slog.Handler {
	c := *h
	c.next = h.next.WithGroup(name)
	c.groups = append(append([]string(nil), h.groups...), name)
	return &c
}

// format renders r as a mongod structured log line: t, s, c, ctx, msg,
// attr.
func (h *ramHandler) format(r slog.Record) string {
	sev := "I"
	switch {
	case r.Level >= slog.LevelError:
		sev = "E"
	case r.Level >= slog.LevelWarn:
		sev = "W"
	}
	comp, ctxName := "-", "formwork"
	attr := map[string]any{}
	put := func(a slog.Attr) {
		switch a.Key {
		case "component":
			comp = a.Value.String()
		case "conn":
			ctxName = "conn" + a.Value.String()
		default:
			attr[a.Key] = a.Value.Resolve().Any()
		}
	}
	for _, a := range h.attrs {
		put(a)
	}
	r.Attrs(func(a slog.Attr) bool { put(a); return true })
	for k, v := range attr {
		if err, ok := v.(error); ok {
			attr[k] = err.Error()
		}
	}
	line := struct {
		T    map[string]string `json:"t"`
		S    string            `json:"s"`
		C    string            `json:"c"`
		Ctx  string            `json:"ctx"`
		Msg  string            `json:"msg"`
		Attr map[string]any    `json:"attr,omitempty"`
	}{
		T:   map[string]string{"$date": r.Time.UTC().Format("2006-01-02T15:04:05.000Z07:00")},
		S:   sev,
		C:   comp,
		Ctx: ctxName,
		Msg: r.Message,
	}
	if len(attr) > 0 {
		line.Attr = attr
	}
	b, err := json.Marshal(line)
	if err != nil {
		b, _ = json.Marshal(struct {
			T   time.Time `json:"t"`
			Msg string    `json:"msg"`
		}{r.Time, r.Message})
	}
	if len(b) > ramLogLineMax {
		b = b[:ramLogLineMax]
	}
	return string(b)
}

// getLog answers getLog for "global" or "startupWarnings".
func (e *Env) getLog(name string) bson.D {
	var lines []string
	var total int64
	if e.Config.RAMLog != nil {
		lines, total = e.Config.RAMLog.snapshot(name)
	}
	a := make(bson.A, len(lines))
	for i, l := range lines {
		a[i] = l
	}
	return bson.D{{Key: "totalLinesWritten", Value: int32(min(total, 1<<31-1))}, {Key: "log", Value: a}}
}
