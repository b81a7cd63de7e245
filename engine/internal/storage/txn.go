package storage

import (
	"bytes"
	"errors"
	"fmt"
	"sort"
	"sync"

	"github.com/cockroachdb/pebble/v2"
	"github.com/cockroachdb/pebble/v2/batchrepr"
	"go.mongodb.org/mongo-driver/v2/bson"

	"github.com/formworkdb/formwork/engine/internal/mongoerr"
)

// Txn is a multi-document transaction (T1–T5 below).
//
//	T1. Reads see the store as it was at Begin (a Pebble snapshot) plus
//	    the transaction's own writes (an overlay), through the same Reader
//	    interface as any read, so index scans and aggregation see them.
//	T2. Each write statement runs through an ordinary Writer under the
//	    store's write lock (Stage), staging into a private indexed batch
//	    that is never applied; the overlay is folded from that batch.
//	T3. First writer wins: a document (or unique index key) that another
//	    open transaction has written, or that changed since the snapshot,
//	    answers WriteConflict when the statement that writes it runs. The
//	    table of keys held by open transactions lives on the Store,
//	    guarded by its write lock. A write outside any transaction made
//	    through Store.WriteWait that meets a held document or key waits,
//	    without the lock, until the holder commits or aborts, then runs
//	    again (txnwait.go); one made through Store.Write commits, and the
//	    holder fails at commit with WriteConflict. DDL goes through
//	    Store.WriteExclusive, which waits while an open transaction holds
//	    any document of the collections it changes (txnddl.go); the TTL
//	    monitor skips held documents (Writer.Held).
//	T4. Commit takes the write lock (Store.Write), checks again that no
//	    held document changed, and replays each statement's write of each
//	    document, in order, through the real Writer marked with
//	    MarkTransaction; index entries and multikey paths are computed
//	    again against the current catalog. Either all of it commits in
//	    one batch or none.
//	T5. Collections (and their indexes) created in the transaction are
//	    created first at commit; creating one whose name another client
//	    took meanwhile is a WriteConflict.
//
// A Txn is used by one goroutine at a time (its session's).
type Txn struct {
	s    *Store
	snap *pebble.Snapshot
	b    *pebble.Batch // private, never applied
	// pending holds catalog changes staged in the transaction.
	pending map[string]*Collection
	// startIDs are the collection ids that existed at Begin.
	startIDs map[uint64]bool
	// folded is how many bytes of b's representation the overlay holds.
	folded int
	ov     overlay
	// held maps the record keys written to their value in the snapshot
	// (nil when the record did not exist there).
	held map[string][]byte
	// order lists the record keys written, first write first.
	order [][]byte
	// steps lists every write of a record, in statement order, so that
	// commit replays (and the oplog records) each statement's effect.
	steps []txnStep
	// replaces marks the record keys whose staged update was a whole
	// replacement (Writer.LogReplacement), until fold takes them.
	replaces map[string]bool
	// unique caches, by collection and index id, whether an index is
	// unique (conflicts).
	unique map[string]bool
	// refs counts the Snapshots handed out and not yet closed; the Pebble
	// snapshot closes when the transaction ended and refs is zero.
	mu    sync.Mutex
	refs  int
	ended bool
	// err is a conflict found while folding; the transaction must abort.
	err error
	// done is closed once the transaction holds nothing (unhold): writes
	// waiting for its documents run again. released guards the close;
	// both under the write lock.
	done     chan struct{}
	released bool
	// Limit is the largest staged batch, in bytes, before a statement
	// fails with TransactionTooLarge; zero means DefaultTxnLimit.
	Limit int
}

// txnStep is one staged write of a record: its new image, or a delete.
type txnStep struct {
	key     string
	v       []byte
	del     bool
	replace bool // an update that replaced the whole document
}

// DefaultTxnLimit bounds what one transaction may stage.
const DefaultTxnLimit = 64 << 20

// ErrWriteConflict is the error a transaction's statement or commit gets
// when another writer won a document first (T3).
var ErrWriteConflict = mongoerr.New(mongoerr.WriteConflict, "Write conflict during plan execution and yielding is disabled. :: Please retry your operation or multi-document transaction.")

// txnTable is the Store's table of documents held by open transactions.
type txnTable struct {
	held map[string]*Txn // record key → holder; guarded by wmu
}

// BeginTxn starts a transaction reading the store as it is now.
func (s *Store) BeginTxn() (*Txn, error) {
	if s.closed.Load() {
		return nil, ErrClosed
	}
	t := &Txn{s: s, snap: s.db.NewSnapshot(), b: s.db.NewIndexedBatch(), pending: map[string]*Collection{}, startIDs: map[uint64]bool{}, held: map[string][]byte{}, done: make(chan struct{})}
	for _, c := range s.catalog() {
		t.startIDs[c.ID] = true
	}
	t.ov.m = map[string]ovEntry{}
	// Until the transaction writes, its reads change nothing in it, so
	// that a view that never writes (a snapshot read's) can be read from
	// several goroutines.
	t.folded = len(t.b.Repr())
	t.ov.sorted = []ovEntry{}
	return t, nil
}

// Collection returns ns as the transaction sees it: created or changed
// in it, or else the published catalog's.
func (t *Txn) Collection(ns string) *Collection {
	if c, ok := t.pending[ns]; ok {
		return c
	}
	return t.s.Collection(ns)
}

// Snapshot returns a Reader over the transaction's view (T1). It must be
// closed; it stays readable after the transaction ends until then.
func (t *Txn) Snapshot() *Snapshot {
	t.mu.Lock()
	t.refs++
	t.mu.Unlock()
	return &Snapshot{reader: reader{view: t}}
}

// release drops one Snapshot's reference.
func (t *Txn) release() {
	t.mu.Lock()
	t.refs--
	last := t.refs == 0 && t.ended
	t.mu.Unlock()
	if last {
		t.snap.Close()
	}
}

// Size is the number of bytes the transaction staged.
func (t *Txn) Size() int { return t.b.Len() }

// Stage runs fn with a Writer whose writes go to the transaction (T2),
// under the store's write lock. An error means the transaction must
// abort: part of fn's writes may be staged.
func (t *Txn) Stage(fn func(w *Writer) error) error {
	s := t.s
	s.wmu.Lock()
	defer s.wmu.Unlock()
	if s.closed.Load() {
		return ErrClosed
	}
	if t.err != nil {
		return t.err
	}
	w := &Writer{s: s, b: t.b, pending: t.pending, early: map[string]bool{}, view: t}
	err := fn(w)
	w.closeProbes()
	if ferr := t.fold(); ferr != nil {
		return ferr
	}
	if err != nil {
		return err
	}
	limit := t.Limit
	if limit <= 0 {
		limit = DefaultTxnLimit
	}
	if t.b.Len() > limit {
		t.err = mongoerr.Newf(mongoerr.TransactionTooLarge, "Total size of all transaction operations must be less than server parameter 'transactionSizeLimitBytes' = %d", limit)
		return t.err
	}
	return nil
}

// fold adds what the batch staged since the last fold to the overlay,
// checking each newly written record for conflicts (T3). It runs under
// the write lock, or with nothing new to fold.
func (t *Txn) fold() error {
	repr := t.b.Repr()
	if len(repr) <= t.folded {
		return t.err
	}
	r := batchrepr.Reader(repr[t.folded:])
	for {
		kind, k, v, ok, err := r.Next()
		if err != nil {
			t.err = fmt.Errorf("storage: transaction batch: %w", err)
			return t.err
		}
		if !ok {
			break
		}
		switch kind {
		case pebble.InternalKeyKindSet:
			t.ov.put(k, v, false)
			t.step(k)
		case pebble.InternalKeyKindDelete, pebble.InternalKeyKindSingleDelete:
			t.ov.put(k, nil, true)
			t.step(k)
		case pebble.InternalKeyKindRangeDelete:
			t.err = mongoerr.New(mongoerr.OperationNotSupportedInTransaction, "Cannot drop a collection or an index in a multi-document transaction.")
			return t.err
		}
		if t.err == nil && t.conflicts(k) {
			if err := t.hold(k); err != nil {
				t.err = err
			}
		}
	}
	t.folded = len(repr)
	return t.err
}

// hold claims record key k for the transaction, or answers WriteConflict
// when another transaction holds it or it changed since the snapshot.
// The write lock is held.
func (t *Txn) hold(k []byte) error {
	if _, ok := t.held[string(k)]; ok {
		return nil
	}
	tab := &t.s.txns
	if h := tab.held[string(k)]; h != nil && h != t {
		return ErrWriteConflict
	}
	was, err := pointGet(t.snap, k)
	if err != nil {
		return err
	}
	now, err := pointGet(t.s.db, k)
	if err != nil {
		return err
	}
	if !bytes.Equal(was, now) || (was == nil) != (now == nil) {
		return ErrWriteConflict
	}
	if tab.held == nil {
		tab.held = map[string]*Txn{}
	}
	key := string(k)
	tab.held[key] = t
	t.held[key] = was
	if k[0] == prefixRecord {
		t.order = append(t.order, []byte(key))
	}
	return nil
}

// conflicts reports whether writing key k can conflict with another
// writer: a document, or an entry of a unique index (two transactions
// inserting the same unique key conflict, as in mongod, rather than the
// second failing only at commit). Entries of other indexes carry their
// record id, so their conflicts are the document's.
func (t *Txn) conflicts(k []byte) bool {
	if len(k) == 0 {
		return false
	}
	switch k[0] {
	case prefixRecord:
		return true
	case prefixIndex:
		if len(k) < indexPrefixLen {
			return false
		}
		id := string(k[1:indexPrefixLen])
		if u, ok := t.unique[id]; ok {
			return u
		}
		collID, ixID := beUint64(k[1:9]), uint32(beUint64(append(make([]byte, 4), k[9:13]...)))
		u := false
		for _, c := range t.pending {
			if c != nil && c.ID == collID {
				u = indexUnique(c, ixID)
			}
		}
		if !u {
			for _, c := range t.s.catalog() {
				if c.ID == collID {
					u = indexUnique(c, ixID)
				}
			}
		}
		if t.unique == nil {
			t.unique = map[string]bool{}
		}
		t.unique[id] = u
		return u
	}
	return false
}

// indexUnique reports whether c's index ixID is unique.
func indexUnique(c *Collection, ixID uint32) bool {
	for _, ix := range c.Indexes {
		if ix.ID == ixID {
			return ix.Unique
		}
	}
	return false
}

// unhold releases the documents the transaction holds and wakes the
// writes waiting for them; wmu is held. Later calls do nothing.
func (t *Txn) unhold() {
	if t.released {
		return
	}
	t.released = true
	for k := range t.held {
		if t.s.txns.held[k] == t {
			delete(t.s.txns.held, k)
		}
	}
	close(t.done)
}

// end closes the batch and, once no Snapshot uses it, the snapshot.
func (t *Txn) end() {
	t.mu.Lock()
	if t.ended {
		t.mu.Unlock()
		return
	}
	t.ended = true
	last := t.refs == 0
	t.mu.Unlock()
	t.b.Close()
	if last {
		t.snap.Close()
	}
}

// Abort discards the transaction.
func (t *Txn) Abort() {
	t.s.wmu.Lock()
	t.unhold()
	t.s.wmu.Unlock()
	t.end()
}

// Commit applies the transaction in one batch (T4, T5), marked as the
// transaction info, after running extra (when not nil) on the same
// Writer. On error nothing is applied and the transaction is over.
func (t *Txn) Commit(info TxnInfo, extra func(w *Writer) error) error {
	defer t.end()
	if t.err != nil {
		t.Abort()
		return t.err
	}
	err := t.s.Write(func(w *Writer) error {
		defer t.unhold()
		if info.LSID != nil {
			w.MarkTransaction(info)
		}
		if err := t.replay(w); err != nil {
			return err
		}
		if extra != nil {
			return extra(w)
		}
		return nil
	})
	if err != nil {
		// Write may fail before running fn (a closed store, a full disk).
		t.s.wmu.Lock()
		t.unhold()
		t.s.wmu.Unlock()
	}
	return err
}

// replay stages the transaction's effects on the real Writer w.
func (t *Txn) replay(w *Writer) error {
	// Collections created in the transaction, with their indexes.
	real := map[uint64]*Collection{} // staged collection id → now
	created := make([]*Collection, 0, len(t.pending))
	for _, c := range t.pending {
		if c != nil && !t.startIDs[c.ID] {
			created = append(created, c)
		}
	}
	sort.Slice(created, func(i, j int) bool { return created[i].ID < created[j].ID })
	for _, c := range created {
		if w.Collection(c.NS) != nil {
			return ErrWriteConflict
		}
		nc, err := w.CreateCollection(c.NS, c.Options)
		if err != nil {
			return err
		}
		for _, ix := range c.Indexes {
			if nc.IndexByName(ix.Name) != nil {
				continue
			}
			if _, err := w.CreateIndex(c.NS, ix.Def.Spec()); err != nil {
				return err
			}
		}
		real[c.ID] = nc
	}
	byID := map[uint64]*Collection{}
	for _, c := range t.s.catalog() {
		byID[c.ID] = c
	}
	// Held documents and unique keys must be as the snapshot had them.
	for k, was := range t.held {
		now, err := pointGet(t.s.db, []byte(k))
		if err != nil {
			return err
		}
		if !bytes.Equal(was, now) || (was == nil) != (now == nil) {
			return ErrWriteConflict
		}
	}
	// Each statement's write of each document, in statement order, so
	// that the oplog (and change streams) see every insert, update and
	// delete as mongod logs them in a transaction's applyOps. cur is a
	// document's image as the commit has it so far, rids its record id
	// in the commit (an insert gets a new one).
	cur := map[string][]byte{}
	rids := map[string]int64{}
	for _, st := range t.steps {
		collID, rid := decodeRecordKey([]byte(st.key))
		var c *Collection
		if nc := real[collID]; nc != nil {
			c = w.Collection(nc.NS)
		} else if oc := byID[collID]; oc != nil {
			c = w.Collection(oc.NS)
		}
		if c == nil {
			return ErrWriteConflict
		}
		if c.DB == "local" {
			continue
		}
		prev, ok := cur[st.key]
		if !ok {
			prev = t.held[st.key]
		}
		if r, ok := rids[st.key]; ok {
			rid = r
		}
		switch {
		case prev == nil && !st.del:
			r, err := w.Insert(c, st.v)
			if err != nil {
				return err
			}
			rids[st.key] = r
			cur[st.key] = st.v
		case prev != nil && st.del:
			if err := w.Delete(c, rid, prev); err != nil {
				return err
			}
			cur[st.key] = nil
		case prev != nil && !st.del:
			if st.replace {
				w.LogReplacement()
			}
			if err := w.Update(c, rid, prev, st.v); err != nil {
				return err
			}
			cur[st.key] = st.v
		}
	}
	return nil
}

// step records the write of k just folded into the overlay, when k is a
// document's record.
func (t *Txn) step(k []byte) {
	if len(k) == 0 || k[0] != prefixRecord {
		return
	}
	e := t.ov.m[string(k)]
	rep := t.replaces[string(k)]
	delete(t.replaces, string(k))
	t.steps = append(t.steps, txnStep{key: string(k), v: e.v, del: e.del, replace: rep})
}

// markReplace notes that the update of record key k being staged replaces
// the whole document, so that commit logs it as a replacement too.
func (t *Txn) markReplace(k []byte) {
	if t.replaces == nil {
		t.replaces = map[string]bool{}
	}
	t.replaces[string(k)] = true
}

// decodeRecordKey splits a record key into collection and record ids.
func decodeRecordKey(k []byte) (uint64, int64) {
	if len(k) < 17 {
		return 0, 0
	}
	return beUint64(k[1:9]), int64(beUint64(k[9:17]))
}

func beUint64(b []byte) uint64 {
	var n uint64
	for _, c := range b[:8] {
		n = n<<8 | uint64(c)
	}
	return n
}

// get is a point read through the transaction's view.
func (t *Txn) get(k []byte) (bson.Raw, error) {
	if err := t.foldRead(); err != nil {
		return nil, err
	}
	if e, ok := t.ov.m[string(k)]; ok {
		if e.del {
			return nil, nil
		}
		return rawCopy(e.v), nil
	}
	return pointGet(t.snap, k)
}

// foldRead folds before a read, so that a statement reads what it (or an
// earlier statement) staged. It measures the batch with Len, not Repr:
// Repr rewrites the batch header, and a view that never writes is read by
// several goroutines at once.
func (t *Txn) foldRead() error {
	if t.b.Len() > t.folded {
		return t.fold()
	}
	return t.err
}

// newIter returns an iterator over the view within o's bounds.
func (t *Txn) newIter(o *pebble.IterOptions) (kvIter, error) {
	if err := t.foldRead(); err != nil {
		return nil, err
	}
	base, err := t.snap.NewIter(o)
	if err != nil {
		return nil, err
	}
	return &mergedIter{base: base, ov: t.ov.between(o.LowerBound, o.UpperBound)}, nil
}

var errTxnIterDirection = errors.New("storage: transaction iterators do not change direction")

// Staging reports whether the Writer stages a transaction's statement
// (Txn.Stage) rather than committing: its batch is never applied, so
// nothing derived from it (an oplog entry) should be written; the
// transaction's commit replays its documents through a Writer marked
// with MarkTransaction.
func (w *Writer) Staging() bool { return w.view != nil }
