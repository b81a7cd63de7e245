package lab

import (
	"context"
	"sync"
	"time"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/event"
)

// monitor watches the commands the lab's client sends through the
// driver's command monitoring: round trips, bytes each way, documents
// received and written, and, while capturing, the commands themselves so
// that reads can be explained afterwards. It is safe for concurrent use.
type monitor struct {
	mu       sync.Mutex
	on       bool
	c        counts
	capture  bool
	captured []bson.Raw
	started  map[int64]string // request id → command name
}

// counts are what the monitor adds up while it is on.
type counts struct {
	RoundTrips   int64
	BytesSent    int64
	BytesRecv    int64
	DocsReturned int64
	DocsWritten  int64
	// ServerTime is the sum of the command durations the driver saw.
	ServerTime time.Duration
	// TimeByName is ServerTime by command name.
	TimeByName map[string]time.Duration
}

// commandMonitor returns the driver hook.
func (m *monitor) commandMonitor() *event.CommandMonitor {
	return &event.CommandMonitor{Started: m.startedEvent, Succeeded: m.succeededEvent, Failed: m.failedEvent}
}

// start zeroes the counts and starts counting; capture also records each
// command sent.
func (m *monitor) start(capture bool) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.on, m.c, m.capture, m.captured = true, counts{TimeByName: map[string]time.Duration{}}, capture, nil
	m.started = map[int64]string{}
}

// stop stops counting and returns the counts and the captured commands.
func (m *monitor) stop() (counts, []bson.Raw) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.on = false
	cmds := m.captured
	m.captured = nil
	return m.c, cmds
}

// startedEvent counts a command sent and, while capturing, keeps it.
func (m *monitor) startedEvent(_ context.Context, e *event.CommandStartedEvent) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if !m.on {
		return
	}
	m.c.RoundTrips++
	m.c.BytesSent += int64(len(e.Command))
	m.started[e.RequestID] = e.CommandName
	if m.capture {
		m.captured = append(m.captured, append(bson.Raw(nil), e.Command...))
	}
}

// succeededEvent counts a reply: its bytes, duration, and the documents
// it returns or says it wrote.
func (m *monitor) succeededEvent(_ context.Context, e *event.CommandSucceededEvent) {
	m.mu.Lock()
	defer m.mu.Unlock()
	name, ok := m.started[e.RequestID]
	if !m.on || !ok {
		return
	}
	delete(m.started, e.RequestID)
	reply := bson.Raw(e.Reply)
	m.c.BytesRecv += int64(len(reply))
	m.c.ServerTime += e.Duration
	m.c.TimeByName[name] += e.Duration
	m.c.DocsReturned += batchLen(reply)
	m.c.DocsWritten += written(name, reply)
}

// failedEvent forgets a command that failed.
func (m *monitor) failedEvent(_ context.Context, e *event.CommandFailedEvent) {
	m.mu.Lock()
	defer m.mu.Unlock()
	delete(m.started, e.RequestID)
}

// batchLen counts the documents of a reply's cursor batch.
func batchLen(reply bson.Raw) int64 {
	var n int64
	for _, batch := range []string{"firstBatch", "nextBatch"} {
		if arr, ok := reply.Lookup("cursor", batch).ArrayOK(); ok {
			vals, _ := arr.Values()
			n += int64(len(vals))
		}
	}
	return n
}

// written counts the documents a write command's reply says it inserted,
// modified, upserted or deleted.
func written(name string, reply bson.Raw) int64 {
	num := func(keys ...string) int64 {
		v, err := reply.LookupErr(keys...)
		if err != nil {
			return 0
		}
		n, _ := v.AsInt64OK()
		return n
	}
	switch name {
	case "insert", "delete":
		return num("n")
	case "update":
		n := num("nModified")
		if arr, ok := reply.Lookup("upserted").ArrayOK(); ok {
			vals, _ := arr.Values()
			n += int64(len(vals))
		}
		return n
	case "findAndModify":
		if reply.Lookup("lastErrorObject", "upserted").Type != 0 {
			return 1
		}
		if v := reply.Lookup("value"); v.Type == 0 || v.Type == bson.TypeNull {
			return 0
		}
		return num("lastErrorObject", "n")
	}
	return 0
}
