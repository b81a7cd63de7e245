package command

import (
	"bytes"
	"context"
	"strings"
	"sync"

	"go.mongodb.org/mongo-driver/v2/bson"

	"github.com/formworkdb/formwork/engine/internal/agg"
	"github.com/formworkdb/formwork/engine/internal/mongoerr"
	"github.com/formworkdb/formwork/engine/internal/storage"
)

// maxScanPerPoll bounds the oplog entries one poll reads, so that a
// stream that filters out everything still answers in bounded time.
const maxScanPerPoll = 4096

// changeStream is the state of one open change stream cursor. It reads
// the oplog from next on, turns entries into events, runs the user's
// pipeline over each and queues what comes out. It is used by one
// goroutine at a time (the cursor's lock).
type changeStream struct {
	store    *storage.Store
	db, coll string // coll "": a database stream; db "": the deployment
	spec     changeStreamSpec
	pl       *agg.Pipeline
	// split: the pipeline ends in $changeStreamSplitLargeEvent.
	split bool
	// nOps and nEvents count the operations read and the events they
	// made before the pipeline (explain's figures).
	nOps, nEvents int

	next bson.Timestamp // the oplog is read from here on (inclusive)
	// skip, when set, drops events at or before it (resuming from an
	// event token); verify then requires that event to be found.
	skip   *resumeToken
	verify bool

	queue      []csEvent
	queueBytes int
	pbrt       resumeToken
	// invalidated is set once an invalidate is queued; the stream reads
	// no further. sentInvalidate once it went to the client.
	invalidated    bool
	sentInvalidate bool

	// killed is closed when the cursor is killed, to end a getMore that
	// waits for events (it holds the cursor's lock).
	killed   chan struct{}
	killOnce sync.Once
}

// interrupt ends a getMore waiting on the stream; the cursor table calls
// it before it takes the cursor's lock to kill it. Safe for concurrent use.
func (cs *changeStream) interrupt() { cs.killOnce.Do(func() { close(cs.killed) }) }

// csEvent is one event ready for the client with its resume token.
type csEvent struct {
	doc bson.Raw
	tok resumeToken
}

// Next is part of the source interface; a change stream's batches come
// from take, never from Next.
func (cs *changeStream) Next(context.Context) (bson.Raw, error) { return nil, nil }

// Close releases nothing: a change stream holds no snapshot between polls.
func (cs *changeStream) Close() {}

// finished reports whether the invalidate was sent: the cursor closes.
func (cs *changeStream) finished() bool { return cs.sentInvalidate }

// start sets where reading begins: after the token of resumeAfter or
// startAfter, at startAtOperationTime, or just after the newest entry.
func (cs *changeStream) start() {
	var tok *resumeToken
	switch {
	case cs.spec.resumeAfter != nil:
		tok = cs.spec.resumeAfter
	case cs.spec.startAfter != nil:
		tok = cs.spec.startAfter
	}
	switch {
	case tok != nil:
		cs.next = tok.ts
		cs.pbrt = *tok
		if tok.tokenType == tokenEvent {
			cs.skip, cs.verify = tok, true
		}
	case cs.spec.startAt != nil:
		cs.next = *cs.spec.startAt
		cs.pbrt = highWater(cs.next)
	default:
		cs.next = tsNext(cs.store.LastApplied())
		cs.pbrt = highWater(cs.next)
	}
}

// tsNext returns the timestamp just after ts.
func tsNext(ts bson.Timestamp) bson.Timestamp {
	if ts.I == ^uint32(0) {
		return bson.Timestamp{T: ts.T + 1}
	}
	return bson.Timestamp{T: ts.T, I: ts.I + 1}
}

// tsLess reports a < b.
func tsLess(a, b bson.Timestamp) bool { return a.T < b.T || (a.T == b.T && a.I < b.I) }

// checkHistory fails with ChangeStreamHistoryLost when entries the stream
// still needs were truncated from the oplog.
func (cs *changeStream) checkHistory() error {
	tr := cs.store.OplogTruncatedTo()
	if tr.T != 0 && !tsLess(tr, cs.next) {
		return mongoerr.New(mongoerr.ChangeStreamHistoryLost, "Resume of change stream was not possible, as the resume point may no longer be in the oplog.")
	}
	return nil
}

// poll reads the oplog entries committed since the last poll (at most
// maxScanPerPoll, stopping early once limit events are queued when limit
// is positive) and queues their events. It never waits.
func (cs *changeStream) poll(ctx context.Context, h *aggHost, limit int) error {
	if cs.invalidated {
		return nil
	}
	oplog := oplogOf(cs.store)
	if oplog == nil {
		return nil
	}
	last := cs.store.LastApplied()
	sn := cs.store.Snapshot()
	defer sn.Close()
	if err := cs.checkHistory(); err != nil {
		return err
	}
	recs, err := sn.OplogFrom(oplog, cs.next)
	if err != nil {
		return err
	}
	defer recs.Close()
	complete := true
	for n := 0; recs.Next(); n++ {
		if n >= maxScanPerPoll || ctx.Err() != nil || (limit > 0 && len(cs.queue) >= limit) || cs.queueBytes >= batchLimit {
			complete = false
			break
		}
		ts := storage.UnpackTS(recs.RecordID())
		entry, err := recs.Doc()
		if err != nil {
			return err
		}
		if err := cs.processEntry(ctx, h, sn, ts, entry); err != nil {
			return err
		}
		cs.next = tsNext(ts)
		if cs.invalidated {
			return nil
		}
	}
	if err := recs.Err(); err != nil {
		return err
	}
	if complete && tsLess(cs.next, tsNext(last)) {
		cs.next = tsNext(last)
	}
	return nil
}

// take removes up to n queued events (all when n <= 0) for one batch, and
// sets the postBatchResumeToken: the last event's token while events stay
// queued, else the high-water mark where reading stopped.
func (cs *changeStream) take(n int) []bson.Raw {
	var out []bson.Raw
	size := 0
	for len(cs.queue) > 0 && (n <= 0 || len(out) < n) {
		e := cs.queue[0]
		if len(out) > 0 && size+len(e.doc) > batchLimit {
			break
		}
		size += len(e.doc)
		cs.queueBytes -= len(e.doc)
		cs.queue = cs.queue[1:]
		out = append(out, e.doc)
		cs.pbrt = e.tok
		if e.tok.fromInvalidate {
			cs.sentInvalidate = true
		}
	}
	if len(cs.queue) == 0 && !cs.invalidated && cs.pbrt.before(highWater(cs.next)) {
		cs.pbrt = highWater(cs.next)
	}
	return out
}

// inScope reports whether writes to db.coll belong to the stream.
func (cs *changeStream) inScope(db, coll string) bool {
	if db == "admin" || db == "config" || db == "local" || strings.HasPrefix(coll, "system.") {
		return false
	}
	if cs.db == "" {
		return true
	}
	if db != cs.db {
		return false
	}
	return cs.coll == "" || coll == cs.coll
}

// processEntry queues the events of one oplog entry: each operation of a
// transaction's applyOps, or the entry itself.
func (cs *changeStream) processEntry(ctx context.Context, h *aggHost, sn *storage.Snapshot, ts bson.Timestamp, entry bson.Raw) error {
	wall := entry.Lookup("wall")
	if ops, ok := entry.Lookup("o", "applyOps").ArrayOK(); ok && entry.Lookup("op").StringValue() == "c" {
		vals, _ := ops.Values()
		txn := &txnFields{number: entry.Lookup("txnNumber"), lsid: entry.Lookup("lsid")}
		for i, v := range vals {
			op, ok := v.DocumentOK()
			if !ok {
				continue
			}
			if err := cs.processOp(ctx, h, sn, opCtx{ts: ts, wall: wall, index: uint32(i), txn: txn}, op); err != nil {
				return err
			}
		}
		return nil
	}
	return cs.processOp(ctx, h, sn, opCtx{ts: ts, wall: wall}, entry)
}

// txnFields are the lsid and txnNumber of a transaction's events.
type txnFields struct{ number, lsid bson.RawValue }

// opCtx places one operation in the oplog.
type opCtx struct {
	ts    bson.Timestamp
	wall  bson.RawValue
	index uint32 // position in the transaction's applyOps, else 0
	txn   *txnFields
}

// processOp turns one operation into its events (none when out of scope),
// runs them through the pipeline and queues the results.
func (cs *changeStream) processOp(ctx context.Context, h *aggHost, sn *storage.Snapshot, oc opCtx, op bson.Raw) error {
	evs, err := cs.events(ctx, h, sn, oc, op)
	if err != nil {
		return err
	}
	cs.nOps++
	cs.nEvents += len(evs)
	for _, ev := range evs {
		resumeFrag := uint32(0) // resuming after this fragment (1-based)
		if cs.skip != nil {
			if !cs.skip.before(ev.tok) {
				if ev.tok.sameEvent(*cs.skip) {
					cs.verify = false
					resumeFrag = cs.skip.fragment
				}
				if resumeFrag == 0 || !cs.split {
					continue
				}
				cs.skip = nil
			}
		}
		if cs.skip != nil {
			if cs.verify {
				return mongoerr.Newf(mongoerr.ChangeStreamFatalError, "cannot resume stream; the resume token was not found. %s", extJSON(cs.skip.doc()))
			}
			cs.skip = nil
		}
		out := ev.doc
		if cs.pl != nil {
			if out, err = cs.pl.RunEvent(ctx, h, ev.doc); err != nil {
				return err
			}
			if out == nil {
				continue
			}
			if id, err := out.LookupErr("_id"); err != nil || id.Type != bson.TypeEmbeddedDocument || !bytes.Equal(id.Value, ev.tok.doc()) {
				found := "missing"
				if err == nil {
					found = extJSONValue(id)
				}
				return mongoerr.Newf(mongoerr.ChangeStreamFatalError, "Encountered an event whose _id field, which contains the resume token, was modified by the pipeline. Modifying the _id field of an event makes it impossible to resume the stream from that point. Only transformations that retain the unmodified _id field are allowed. Expected: %s Found: %s", extJSON(ev.tok.doc()), found)
			}
		}
		frags, err := cs.fit(ev.tok, out, resumeFrag)
		if err != nil {
			return err
		}
		for _, f := range frags {
			cs.queue = append(cs.queue, f)
			cs.queueBytes += len(f.doc)
		}
		if ev.tok.fromInvalidate {
			cs.invalidated = true
		}
	}
	return nil
}

// extJSON prints a document as relaxed extended JSON for messages.
func extJSON(d bson.Raw) string {
	j, err := bson.MarshalExtJSON(d, false, false)
	if err != nil {
		return d.String()
	}
	return string(j)
}

// extJSONValue prints a value for messages.
func extJSONValue(v bson.RawValue) string { return v.String() }
