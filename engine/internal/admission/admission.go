// Package admission limits how many operations execute at once, as
// mongod's execution control does with its read and write tickets, and
// decides which waiting operation runs next.
//
// With more clients than CPUs, every runnable operation shares the CPUs,
// so each one's latency grows with the number running, reads included,
// however little they need. A Gate lets only a few operations run and
// queues the rest where they cost nothing; when a ticket frees up, a
// waiting read goes before a waiting write, so that point reads keep
// their latency while writes absorb the queueing. Writes are never
// starved: after ReadBurst reads in a row have passed a waiting write,
// the write goes next. Writes hold at most half the tickets, and when no
// read has run for a while (a load of writes only) they are not limited
// at all.
//
// An operation that waits for something other than the CPU (a WAL sync,
// a transaction holding its document, an awaitData getMore) gives its
// ticket back for the wait (Suspend), so that a ticket never waits on
// another operation that may need one.
package admission

import (
	"context"
	"sync"
	"time"
)

// Class is the queue an operation waits in.
type Class uint8

const (
	// Read is an operation that only reads: find, getMore, count,
	// distinct, aggregate, explain.
	Read Class = iota
	// Write is an operation that writes: insert, update, delete,
	// findAndModify.
	Write
)

func (c Class) String() string {
	if c == Read {
		return "read"
	}
	return "write"
}

// ReadBurst is how many reads in a row may be admitted ahead of a write
// that is waiting; the next ticket then goes to the write.
const ReadBurst = 8

// readQuiet is how long no read must have run before writes stop being
// limited.
const readQuiet = 10 * time.Millisecond

// Gate hands out a fixed number of tickets. A nil *Gate admits everything
// at once (no limit). It is safe for concurrent use.
type Gate struct {
	mu   sync.Mutex
	size int
	// writeCap is how many tickets writes may hold at once, so that
	// writes stalled on the write lock or a full WAL never take every
	// ticket from the reads.
	writeCap int
	// held counts each class's tickets, handed over or granted.
	held   [2]int
	queues [2]queue
	// streak counts the reads admitted in a row while a write waited.
	streak int
	// lastRead is when a read last held a ticket.
	lastRead time.Time
	stats    [2]counters
}

// queue is a FIFO of waiters.
type queue struct {
	ws   []*waiter
	head int
}

func (q *queue) len() int { return len(q.ws) - q.head }

// push appends w. Once half the slice is popped it moves the waiters
// left to its front, so a queue that never empties under steady load
// does not grow without bound.
func (q *queue) push(w *waiter) {
	if q.head > 0 && q.head >= len(q.ws)/2 {
		n := copy(q.ws, q.ws[q.head:])
		clear(q.ws[n:])
		q.ws, q.head = q.ws[:n], 0
	}
	q.ws = append(q.ws, w)
}

func (q *queue) pop() *waiter {
	w := q.ws[q.head]
	q.ws[q.head] = nil
	q.head++
	return w
}

// remove takes w out of the queue; it reports whether w was there.
func (q *queue) remove(w *waiter) bool {
	for i := q.head; i < len(q.ws); i++ {
		if q.ws[i] == w {
			copy(q.ws[i:], q.ws[i+1:])
			q.ws[len(q.ws)-1] = nil
			q.ws = q.ws[:len(q.ws)-1]
			return true
		}
	}
	return false
}

// waiter is one operation waiting for a ticket; ready is closed when the
// ticket is handed to it.
type waiter struct {
	ready chan struct{}
	since time.Time
}

// counters are one class's figures, as serverStatus reports them.
type counters struct {
	addedToQueue, removedFromQueue, canceled         int64
	startedProcessing, finishedProcessing, admission int64
	queuedMicros, processingMicros                   int64
}

// New returns a Gate with size tickets; size <= 0 returns nil, which
// admits everything.
func New(size int) *Gate {
	if size <= 0 {
		return nil
	}
	return &Gate{size: size, writeCap: (size + 1) / 2}
}

// Ticket is one operation's admission. Its methods are for the one
// goroutine running the operation.
type Ticket struct {
	g     *Gate
	class Class
	held  bool
	since time.Time
}

// Acquire waits for a ticket of class c and returns it, or ctx's error
// when ctx ends first (a maxTimeMS spent in the queue, a killOp). A nil
// Gate returns a Ticket that holds nothing.
func (g *Gate) Acquire(ctx context.Context, c Class) (*Ticket, error) {
	t := &Ticket{g: g, class: c}
	if g == nil {
		return t, nil
	}
	if err := g.acquire(ctx, t, true); err != nil {
		return nil, err
	}
	return t, nil
}

// acquire takes a ticket for t, queueing when none is free. fresh marks a
// new admission, not a return from Suspend.
func (g *Gate) acquire(ctx context.Context, t *Ticket, fresh bool) error {
	g.mu.Lock()
	st := &g.stats[t.class]
	if fresh {
		st.admission++
	}
	if g.admissibleLocked(t.class) && g.queues[t.class].len() == 0 {
		g.held[t.class]++
		g.grantLocked(t, time.Now())
		g.mu.Unlock()
		return nil
	}
	w := &waiter{ready: make(chan struct{}), since: time.Now()}
	g.queues[t.class].push(w)
	st.addedToQueue++
	g.mu.Unlock()
	select {
	case <-w.ready:
	case <-ctx.Done():
		g.mu.Lock()
		if g.queues[t.class].remove(w) {
			st.removedFromQueue++
			st.canceled++
			st.queuedMicros += time.Since(w.since).Microseconds()
			g.mu.Unlock()
			return ctx.Err()
		}
		g.mu.Unlock()
		// The ticket was handed over as ctx ended: keep it, as the
		// operation may as well run now that it is admitted.
	}
	g.mu.Lock()
	g.grantLocked(t, time.Now())
	g.mu.Unlock()
	return nil
}

// admissibleLocked reports whether class c may run now. When no read has
// run for readQuiet (a load of writes only), writes are not limited:
// there is no read to keep the CPUs for, and holding writers back then
// only leaves tickets idle while the goroutines they were handed to wait
// to be scheduled (a quarter of the insert throughput of 32 clients on 2
// CPUs). A shorter lull between reads does not count: writers let in
// during it would be running when the next reads arrive.
func (g *Gate) admissibleLocked(c Class) bool {
	if c == Write && g.held[Read] == 0 && g.queues[Read].len() == 0 && time.Since(g.lastRead) > readQuiet {
		return true
	}
	if g.held[Read]+g.held[Write] >= g.size {
		return false
	}
	return c == Read || g.held[Write] < g.writeCap
}

// grantLocked records that t holds a ticket, already counted in g.held:
// by acquire's fast path, or by the release that handed it over.
func (g *Gate) grantLocked(t *Ticket, now time.Time) {
	if !t.held {
		t.held = true
		t.since = now
		g.stats[t.class].startedProcessing++
	}
}

// Release gives the ticket back. It is safe to call more than once.
func (t *Ticket) Release() {
	if t != nil && t.g != nil {
		t.g.release(t)
	}
}

// release gives t's ticket back, to the next waiter if any; it reports
// false when t held none.
func (g *Gate) release(t *Ticket) bool {
	g.mu.Lock()
	if !t.held {
		g.mu.Unlock()
		return false
	}
	t.held = false
	st := &g.stats[t.class]
	st.finishedProcessing++
	st.processingMicros += time.Since(t.since).Microseconds()
	g.held[t.class]--
	if t.class == Read {
		g.lastRead = time.Now()
	}
	// Usually the freed ticket passes to one waiter; when the last read
	// leaves, every waiting write may go.
	var one [1]*waiter
	admitted := one[:0]
	for {
		w, c := g.nextLocked()
		if w == nil {
			break
		}
		g.held[c]++
		wst := &g.stats[c]
		wst.removedFromQueue++
		wst.queuedMicros += time.Since(w.since).Microseconds()
		admitted = append(admitted, w)
	}
	g.mu.Unlock()
	for _, w := range admitted {
		close(w.ready)
	}
	return true
}

// nextLocked picks the waiter a freed ticket goes to: reads first, unless
// ReadBurst reads in a row have passed a write that could have run.
func (g *Gate) nextLocked() (*waiter, Class) {
	reads, writes := &g.queues[Read], &g.queues[Write]
	readOK := reads.len() > 0 && g.admissibleLocked(Read)
	writeOK := writes.len() > 0 && g.admissibleLocked(Write)
	switch {
	case readOK && (!writeOK || g.streak < ReadBurst):
		if writeOK {
			g.streak++
		} else {
			g.streak = 0
		}
		return reads.pop(), Read
	case writeOK:
		g.streak = 0
		return writes.pop(), Write
	}
	return nil, 0
}

type ticketKey struct{}

// NewContext returns ctx carrying t, for Suspend and for nested
// operations, which run on their caller's ticket.
func NewContext(ctx context.Context, t *Ticket) context.Context {
	return context.WithValue(ctx, ticketKey{}, t)
}

// FromContext returns the ticket ctx carries, or nil.
func FromContext(ctx context.Context) *Ticket {
	t, _ := ctx.Value(ticketKey{}).(*Ticket)
	return t
}

// Suspend gives back the ticket ctx carries, if any, while its caller
// waits for something that is not the CPU; the returned function takes a
// ticket again (queueing like any other operation of its class, but not
// cancelled by ctx: the operation must finish what it started). Call it
// exactly once.
func Suspend(ctx context.Context) (resume func()) {
	t := FromContext(ctx)
	if t == nil || t.g == nil || !t.g.release(t) {
		return func() {}
	}
	return func() { _ = t.g.acquire(context.Background(), t, false) }
}

// ClassStats is one class's figures, with the names of mongod's
// serverStatus queues.execution.<read|write> fields.
type ClassStats struct {
	Out, Available, TotalTickets                          int64
	AddedToQueue, RemovedFromQueue, QueueLength, Canceled int64
	StartedProcessing, Processing, FinishedProcessing     int64
	TotalTimeProcessingMicros, TotalTimeQueuedMicros      int64
	NewAdmissions                                         int64
}

// Stats returns the figures of class c. The tickets are shared by both
// classes, so Available and TotalTickets are the same for each.
func (g *Gate) Stats(c Class) ClassStats {
	if g == nil {
		return ClassStats{}
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	st := g.stats[c]
	return ClassStats{
		Out:                       int64(g.held[c]),
		Available:                 int64(g.size - g.held[Read] - g.held[Write]),
		TotalTickets:              int64(g.size),
		AddedToQueue:              st.addedToQueue,
		RemovedFromQueue:          st.removedFromQueue,
		QueueLength:               int64(g.queues[c].len()),
		Canceled:                  st.canceled,
		StartedProcessing:         st.startedProcessing,
		Processing:                st.startedProcessing - st.finishedProcessing,
		FinishedProcessing:        st.finishedProcessing,
		TotalTimeProcessingMicros: st.processingMicros,
		TotalTimeQueuedMicros:     st.queuedMicros,
		NewAdmissions:             st.admission,
	}
}
