package command

import (
	"context"
	"crypto/rand"
	"encoding/binary"
	"sync"
	"sync/atomic"
	"time"

	"go.mongodb.org/mongo-driver/v2/bson"

	"github.com/formworkdb/formwork/engine/internal/mongoerr"
	"github.com/formworkdb/formwork/engine/internal/wire"
)

// source yields result documents one at a time. Next returns nil, nil at
// the end. Close releases what the source holds (snapshots, iterators).
type source interface {
	Next(ctx context.Context) (bson.Raw, error)
	Close()
}

// Cursor is an open server-side cursor.
type Cursor struct {
	ID   int64
	NS   string
	lsid string

	mu       sync.Mutex // held by the getMore using the cursor
	src      source
	lastUsed time.Time
	pending  bson.Raw // a document read but not yet sent (batch was full)
	killed   bool
	reads    *readSet // nil: the cursor reads no collection
	origin   bson.Raw // the command that opened the cursor
	owner    string   // the user that opened it, under auth; guarded by Cursors.mu
	// planSummary is the plan the cursor's query runs, which each
	// getMore's profile entry repeats.
	planSummary string
	// txn is the transaction the cursor was opened in, or nil: its
	// commit or abort kills the cursor (Cursors.killTxn).
	txn *txnRun
}

// Cursors is the table of open cursors of one engine.
type Cursors struct {
	mu      sync.Mutex
	m       map[int64]*Cursor
	timeout time.Duration
	// timedOut counts cursors closed for idleness (serverStatus).
	timedOut atomic.Int64
}

func newCursors(timeout time.Duration) *Cursors {
	return &Cursors{m: map[int64]*Cursor{}, timeout: timeout}
}

func (cs *Cursors) add(ns string, lsid bson.Raw, src source, pending bson.Raw) *Cursor {
	c := &Cursor{NS: ns, src: src, lastUsed: time.Now(), pending: pending}
	if lsid != nil {
		c.lsid = lsidKey(lsid)
	}
	cs.mu.Lock()
	defer cs.mu.Unlock()
	for {
		var b [8]byte
		_, _ = rand.Read(b[:])
		id := int64(binary.LittleEndian.Uint64(b[:]) & (1<<63 - 1))
		if id != 0 && cs.m[id] == nil {
			c.ID = id
			cs.m[id] = c
			return c
		}
	}
}

func (cs *Cursors) get(id int64) *Cursor {
	cs.mu.Lock()
	defer cs.mu.Unlock()
	return cs.m[id]
}

func (cs *Cursors) remove(id int64) bool {
	cs.mu.Lock()
	c := cs.m[id]
	delete(cs.m, id)
	cs.mu.Unlock()
	if c == nil {
		return false
	}
	if in, ok := c.src.(interface{ interrupt() }); ok {
		in.interrupt() // a waiting getMore returns and lets go of c.mu
	}
	c.mu.Lock()
	if !c.killed {
		c.killed = true
		c.src.Close()
	}
	c.mu.Unlock()
	return true
}

// Expire closes cursors idle for longer than the timeout, as mongod's
// cursor monitor does, and returns how many it closed.
func (cs *Cursors) Expire(now time.Time) int {
	cs.mu.Lock()
	var old []int64
	for id, c := range cs.m {
		if c.mu.TryLock() {
			if now.Sub(c.lastUsed) > cs.timeout {
				old = append(old, id)
			}
			c.mu.Unlock()
		}
	}
	cs.mu.Unlock()
	for _, id := range old {
		cs.remove(id)
	}
	cs.timedOut.Add(int64(len(old)))
	return len(old)
}

// Open returns the number of open cursors.
func (cs *Cursors) Open() int {
	cs.mu.Lock()
	defer cs.mu.Unlock()
	return len(cs.m)
}

// killSession closes the cursors of one session, or of every session when
// key is empty.
func (cs *Cursors) killSession(key string) {
	cs.mu.Lock()
	var ids []int64
	for id, c := range cs.m {
		if c.lsid != "" && (key == "" || c.lsid == key) {
			ids = append(ids, id)
		}
	}
	cs.mu.Unlock()
	for _, id := range ids {
		cs.remove(id)
	}
}

// killTxn closes the cursors opened in transaction tx, as mongod does
// when a transaction commits or aborts: a later getMore answers
// CursorNotFound.
func (cs *Cursors) killTxn(tx *txnRun) {
	cs.mu.Lock()
	var ids []int64
	for id, c := range cs.m {
		if c.txn == tx {
			ids = append(ids, id)
		}
	}
	cs.mu.Unlock()
	for _, id := range ids {
		cs.remove(id)
	}
}

func (cs *Cursors) closeAll() {
	cs.mu.Lock()
	ids := make([]int64, 0, len(cs.m))
	for id := range cs.m {
		ids = append(ids, id)
	}
	cs.mu.Unlock()
	for _, id := range ids {
		cs.remove(id)
	}
}

// batchLimit is the most document bytes put in one reply batch: mongod
// fills batches up to the maximum user document size.
const batchLimit = wire.MaxDocumentSize

// fillBatch reads up to n documents (n <= 0: no count limit) from src,
// stopping before the batch would pass batchLimit bytes. It returns the
// batch, a document read but not sent (nil if none), and whether src is
// exhausted.
func fillBatch(ctx context.Context, src source, first bson.Raw, n int64) (batch []bson.Raw, pending bson.Raw, done bool, err error) {
	size := 0
	next := first
	for n <= 0 || int64(len(batch)) < n {
		if next == nil {
			if err := ctx.Err(); err != nil {
				return nil, nil, false, err
			}
			next, err = src.Next(ctx)
			if err != nil {
				return nil, nil, false, err
			}
			if next == nil {
				return batch, nil, true, nil
			}
		}
		if len(batch) > 0 && size+len(next) > batchLimit {
			return batch, next, false, nil
		}
		size += len(next)
		batch = append(batch, next)
		next = nil
	}
	if next != nil {
		return batch, next, false, nil
	}
	return batch, nil, false, nil
}

// openCursor sends the first batch of src and registers a cursor when more
// may follow. It returns the reply's cursor document.
func openCursor(ctx context.Context, r *Request, ns string, src source, batchSize int64, singleBatch bool) (bson.D, error) {
	batch, pending, done, err := fillBatch(ctx, src, nil, batchSize)
	if err != nil {
		src.Close()
		return nil, err
	}
	if done && pending == nil {
		src.Close()
		return cursorReply(0, ns, "firstBatch", batch), nil
	}
	if singleBatch {
		src.Close()
		return cursorReply(0, ns, "firstBatch", batch), nil
	}
	// mongod closes a cursor whose first batch exhausted the results; a
	// source cannot always tell, so peek one document ahead.
	if pending == nil {
		pending, err = src.Next(ctx)
		if err != nil {
			src.Close()
			return nil, err
		}
		if pending == nil {
			src.Close()
			return cursorReply(0, ns, "firstBatch", batch), nil
		}
	}
	c := r.Env.Cursors.add(ns, r.Generic.LSID, src, pending)
	bindReadSet(r.Env.Store, c, ns, src)
	c.origin = r.Body
	c.planSummary = r.op.summary()
	if r.txn != nil {
		cs := r.Env.Cursors
		cs.mu.Lock()
		c.txn = r.txn
		cs.mu.Unlock()
	}
	return cursorReply(c.ID, ns, "firstBatch", batch), nil
}

func cursorReply(id int64, ns, field string, batch []bson.Raw) bson.D {
	arr := make(bson.A, len(batch))
	for i, d := range batch {
		arr[i] = d
	}
	return bson.D{{Key: "cursor", Value: bson.D{
		{Key: field, Value: arr},
		{Key: "id", Value: id},
		{Key: "ns", Value: ns},
	}}}
}

func cursorNotFound(id int64) error {
	return mongoerr.Newf(mongoerr.CursorNotFound, "cursor id %d not found", id)
}
