package command

import (
	"context"
	"sort"
	"strconv"
	"sync"
	"time"

	"go.mongodb.org/mongo-driver/v2/bson"
)

// inProgress is the table of running operations that $currentOp and the
// currentOp command list and killOp interrupts, and of open connections
// (for idleConnections). It is safe for concurrent use.
type inProgress struct {
	mu    sync.Mutex
	next  int32
	ops   map[int32]*runningOp
	conns map[int64]*Conn
}

// runningOp is one operation in progress.
type runningOp struct {
	id     int32
	r      *Request
	cancel context.CancelFunc
	killed bool // guarded by inProgress.mu
}

func newInProgress() *inProgress {
	return &inProgress{ops: map[int32]*runningOp{}, conns: map[int64]*Conn{}}
}

// begin registers r as running and returns the context it runs under,
// which killOp cancels, and the function that unregisters it. killed
// reports, after the operation, whether killOp interrupted it.
func (p *inProgress) begin(ctx context.Context, r *Request) (context.Context, func() (killed bool)) {
	ctx, cancel := context.WithCancel(ctx)
	p.mu.Lock()
	p.next++
	if p.next <= 0 {
		p.next = 1
	}
	op := &runningOp{id: p.next, r: r, cancel: cancel}
	p.ops[op.id] = op
	p.mu.Unlock()
	return ctx, func() bool {
		p.mu.Lock()
		delete(p.ops, op.id)
		killed := op.killed
		p.mu.Unlock()
		cancel()
		return killed
	}
}

// kill interrupts the operation with id; it reports whether one ran.
func (p *inProgress) kill(id int32) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	op, ok := p.ops[id]
	if ok {
		op.killed = true
		op.cancel()
	}
	return ok
}

func (p *inProgress) addConn(c *Conn) {
	p.mu.Lock()
	p.conns[c.ID] = c
	p.mu.Unlock()
}

func (p *inProgress) removeConn(c *Conn) {
	p.mu.Lock()
	delete(p.conns, c.ID)
	p.mu.Unlock()
}

// currentOpOptions are $currentOp's options, shared with the currentOp
// command.
type currentOpOptions struct {
	idleConnections bool
	idleCursors     bool
}

// snapshot returns one document per running operation, per idle
// connection and per idle cursor as the options ask, in mongod's
// $currentOp shape, ordered by opid.
func (e *Env) currentOps(opts currentOpOptions) []bson.Raw {
	p := e.inprog
	now := time.Now()
	p.mu.Lock()
	ops := make([]*runningOp, 0, len(p.ops))
	busy := map[int64]bool{}
	for _, op := range p.ops {
		ops = append(ops, op)
		if op.r.Conn != nil {
			busy[op.r.Conn.ID] = true
		}
	}
	var idle []*Conn
	if opts.idleConnections {
		for id, c := range p.conns {
			if !busy[id] {
				idle = append(idle, c)
			}
		}
	}
	p.mu.Unlock()
	sort.Slice(ops, func(i, j int) bool { return ops[i].id < ops[j].id })
	sort.Slice(idle, func(i, j int) bool { return idle[i].ID < idle[j].ID })

	var out []bson.Raw
	add := func(d bson.D) {
		if raw, err := bson.Marshal(d); err == nil {
			out = append(out, raw)
		}
	}
	for _, op := range ops {
		r := op.r
		d := e.connFields(r.Conn)
		d = append(d,
			bson.E{Key: "active", Value: true},
			bson.E{Key: "currentOpTime", Value: now.Format("2006-01-02T15:04:05.000-07:00")},
			bson.E{Key: "threaded", Value: true},
			bson.E{Key: "opid", Value: op.id})
		if r.Generic.LSID != nil {
			d = append(d, bson.E{Key: "lsid", Value: r.Generic.LSID})
		}
		d = append(d,
			bson.E{Key: "secs_running", Value: int64(now.Sub(r.start).Seconds())},
			bson.E{Key: "microsecs_running", Value: now.Sub(r.start).Microseconds()},
			bson.E{Key: "op", Value: profileOp(r.Name)},
			bson.E{Key: "ns", Value: opNamespace(r)},
			bson.E{Key: "redacted", Value: false},
			bson.E{Key: "command", Value: r.Body},
			bson.E{Key: "numYields", Value: int32(0)},
			bson.E{Key: "locks", Value: bson.D{}},
			bson.E{Key: "waitingForLock", Value: false},
			bson.E{Key: "lockStats", Value: bson.D{}},
			bson.E{Key: "waitingForFlowControl", Value: false},
			bson.E{Key: "flowControlStats", Value: bson.D{}})
		d = append(d, e.buildFields(r)...)
		add(d)
	}
	for _, c := range idle {
		d := e.connFields(c)
		d = append(d,
			bson.E{Key: "active", Value: false},
			bson.E{Key: "currentOpTime", Value: now.Format("2006-01-02T15:04:05.000-07:00")})
		add(d)
	}
	if opts.idleCursors {
		for _, c := range e.Cursors.idle() {
			add(bson.D{
				{Key: "type", Value: "idleCursor"},
				{Key: "host", Value: e.Config.Host},
				{Key: "ns", Value: c.ns},
				{Key: "cursor", Value: bson.D{
					{Key: "cursorId", Value: c.id},
					{Key: "lastAccessDate", Value: c.lastUsed},
					{Key: "noCursorTimeout", Value: false},
					{Key: "tailable", Value: false},
					{Key: "awaitData", Value: false},
				}},
			})
		}
	}
	return out
}

// connFields are the fields of a $currentOp entry that describe the
// connection.
func (e *Env) connFields(c *Conn) bson.D {
	d := bson.D{{Key: "type", Value: "op"}, {Key: "host", Value: e.Config.Host}}
	if c == nil {
		return d
	}
	d = append(d,
		bson.E{Key: "desc", Value: "conn" + strconv.FormatInt(c.ID, 10)},
		bson.E{Key: "connectionId", Value: int32(c.ID)},
		bson.E{Key: "client", Value: c.Remote})
	if c.Client != nil {
		if app, err := c.Client.LookupErr("application", "name"); err == nil {
			if s, ok := app.StringValueOK(); ok {
				d = append(d, bson.E{Key: "appName", Value: s})
			}
		}
		d = append(d, bson.E{Key: "clientMetadata", Value: c.Client})
	}
	return d
}

// idleCursor describes an open cursor that no getMore is using.
type idleCursor struct {
	id       int64
	ns       string
	lastUsed time.Time
}

// idle lists the open cursors that no getMore holds, by id.
func (cs *Cursors) idle() []idleCursor {
	cs.mu.Lock()
	all := make([]*Cursor, 0, len(cs.m))
	for _, c := range cs.m {
		all = append(all, c)
	}
	cs.mu.Unlock()
	var out []idleCursor
	for _, c := range all {
		if !c.mu.TryLock() {
			continue // a getMore is using it: it shows as an operation
		}
		if !c.killed {
			out = append(out, idleCursor{id: c.ID, ns: c.NS, lastUsed: c.lastUsed})
		}
		c.mu.Unlock()
	}
	sort.Slice(out, func(i, j int) bool { return out[i].id < out[j].id })
	return out
}
