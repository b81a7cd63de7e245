package storage

import (
	"encoding/binary"
	"errors"
	"sync"
	"sync/atomic"
	"time"

	"github.com/cockroachdb/pebble/v2"
	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/x/bsonx/bsoncore"
)

// OplogNS is the namespace of the oplog.
const OplogNS = "local.oplog.rs"

// DefaultOplogSize is the oplog's size cap of an in-memory store, in bytes.
const DefaultOplogSize = 192 << 20

// DefaultDiskOplogSize is the oplog's size cap of a store on disk: 990 MB,
// mongod's smallest default.
//
// Divergence: mongod sizes its oplog at 5% of the file system (990 MB to
// 50 GB); an embedded store takes the minimum unless told otherwise.
const DefaultDiskOplogSize = 990 << 20

// prefixImage keys the pre- and post-images of change streams:
// 'p' ts(8) applyOpsIndex(4) kind(1), kind 'b' before, 'a' after.
const prefixImage = 'p'

// metaOplogTruncated names the metadata entry holding the ts of the
// newest oplog entry truncation removed (8 bytes, PackTS).
const metaOplogTruncated = "oplogTruncatedTo"

// oplogState is the Store's view of its oplog: I10 (doc.go) holds it.
type oplogState struct {
	collID  uint64
	clock   Clock
	maxSize atomic.Int64
	// size approximates the bytes the oplog holds.
	size atomic.Int64
	// lastApplied is the ts (PackTS) of the newest committed entry.
	lastApplied atomic.Int64
	// truncatedTo is the ts (PackTS) of the newest entry truncation
	// removed; 0 when none was.
	truncatedTo atomic.Int64
	truncating  atomic.Bool
	// tmu is held by a running truncation; stopped ends truncation for
	// Close (oplog_truncate.go).
	tmu     sync.Mutex
	stopped atomic.Bool
	// ret is the minimum retention (oplog_truncate.go).
	ret oplogRetention

	mu      sync.Mutex
	changed chan struct{} // closed and replaced at every commit that logs
}

// oplogBuf holds the entries a Writer logs until its batch commits.
type oplogBuf struct {
	ops []pendingOp
	// replaceNext makes the next Update log a replacement ("u" with the
	// whole document) instead of a $v:2 diff.
	replaceNext bool
	// last is the ts the flush gave the newest entry; zero before.
	last  bson.Timestamp
	bytes int64
	// arena holds the fields of the pending entries (alloc).
	arena []byte
}

// Chunk sizes for oplogBuf.alloc: the first chunk of a batch is small
// (a single-document write logs a few hundred bytes), and each next one
// doubles, up to opArenaChunk.
const (
	opArenaFirst = 1 << 10
	opArenaChunk = 64 << 10
)

// alloc returns an empty buffer with capacity n for an entry's fields,
// carved from a shared chunk: an insertMany of 1,000 documents otherwise
// allocated 1,000 small buffers that only live until the batch commits.
// The buffer's capacity is exactly n, so an append past it reallocates
// rather than overwriting the next entry. Large entries get their own
// allocation.
func (o *oplogBuf) alloc(n int) []byte {
	if n > opArenaChunk/8 {
		return make([]byte, 0, n)
	}
	a := o.arena
	if cap(a)-len(a) < n {
		size := min(max(2*cap(a), opArenaFirst), opArenaChunk)
		a = make([]byte, 0, max(size, n))
	}
	o.arena = a[:len(a)+n]
	return a[len(a) : len(a) : len(a)+n]
}

// pendingOp is one logged write: the leading fields of its oplog entry
// (op, ns, ui, o, o2), and the images a change stream may want.
type pendingOp struct {
	fields    []byte
	pre, post bson.Raw
}

// Clock returns the store's cluster time clock, which also times the oplog.
func (s *Store) Clock() *Clock { return &s.oplog.clock }

// openOplog creates local.oplog.rs when the store has none, and loads the
// oplog's size, newest ts and truncation point.
func (s *Store) openOplog(maxSize int64) error {
	if maxSize <= 0 {
		maxSize = defaultOplogSize(s)
	}
	s.oplog.maxSize.Store(maxSize)
	s.oplog.changed = make(chan struct{})
	c := s.Collection(OplogNS)
	if c == nil {
		err := s.Write(func(w *Writer) error {
			opts := bsoncore.NewDocumentBuilder().AppendBoolean("capped", true).
				AppendInt64("size", maxSize).AppendBoolean("autoIndexId", false).Build()
			id := s.nextCollID
			s.nextCollID++
			c = &Collection{NS: OplogNS, DB: "local", Name: "oplog.rs", ID: id, UUID: newUUID(), Options: bson.Raw(opts), nextIndexID: 1}
			return w.putCatalog(c)
		})
		if err != nil {
			return err
		}
	}
	s.oplog.collID = c.ID
	lo := recordPrefix(c.ID)
	it, err := s.db.NewIter(&pebble.IterOptions{LowerBound: lo, UpperBound: prefixEnd(lo)})
	if err != nil {
		return err
	}
	var size int64
	for it.First(); it.Valid(); it.Next() {
		size += int64(len(it.Key()) + valueLen(it))
	}
	if it.Last() {
		last := int64(binary.BigEndian.Uint64(it.Key()[9:]))
		s.oplog.lastApplied.Store(last)
		s.oplog.clock.advance(UnpackTS(last))
	}
	if err := it.Close(); err != nil {
		return err
	}
	s.oplog.size.Store(size)
	v, closer, err := s.db.Get(append([]byte{prefixMeta}, metaOplogTruncated...))
	switch {
	case errors.Is(err, pebble.ErrNotFound):
	case err != nil:
		return err
	default:
		s.oplog.truncatedTo.Store(int64(binary.BigEndian.Uint64(v)))
		closer.Close()
	}
	return nil
}

// defaultOplogSize is the size cap of s when none is configured.
func defaultOplogSize(s *Store) int64 {
	if !s.durable {
		return DefaultOplogSize
	}
	return DefaultDiskOplogSize
}

// SetOplogSize changes the oplog's size cap (replSetResizeOplog); an
// oplog over it is truncated in the background.
func (s *Store) SetOplogSize(bytes int64) {
	s.oplog.maxSize.Store(bytes)
	s.maybeTruncate()
}

// OplogSize returns the oplog's size cap and the bytes it holds now.
func (s *Store) OplogSize() (maxSize, used int64) {
	return s.oplog.maxSize.Load(), s.oplog.size.Load()
}

// LastApplied returns the ts of the newest committed oplog entry (zero
// when the oplog is empty).
func (s *Store) LastApplied() bson.Timestamp { return UnpackTS(s.oplog.lastApplied.Load()) }

// OplogTruncatedTo returns the ts of the newest entry that truncation
// removed: the oplog no longer holds every entry at or before it. Zero
// when nothing was removed.
func (s *Store) OplogTruncatedTo() bson.Timestamp { return UnpackTS(s.oplog.truncatedTo.Load()) }

// OplogChanged returns a channel closed at the next commit that adds oplog
// entries. Take it before reading the oplog, then wait on it: a commit
// between the two closes it, so no entry is missed.
func (s *Store) OplogChanged() <-chan struct{} {
	s.oplog.mu.Lock()
	defer s.oplog.mu.Unlock()
	return s.oplog.changed
}

// flushOplog gives the logged writes their ts and stages their entries
// (applyOps entries for a marked transaction: oplog_chain.go) and images
// in the batch. It runs under the write lock, once fn has succeeded.
func (w *Writer) flushOplog() error {
	ops := w.oplog.ops
	if len(ops) == 0 {
		return nil
	}
	now := time.Now()
	if w.txn != nil {
		return w.flushTxn(ops, now) // oplog_chain.go
	}
	for _, op := range ops {
		ts := w.s.oplog.clock.Tick()
		if err := w.putOplogFields(ts, op.fields, now); err != nil {
			return err
		}
		if err := w.putImages(ts, 0, op); err != nil {
			return err
		}
	}
	return nil
}

// appendEntryTail appends the ts, t, v and wall fields of an entry.
func appendEntryTail(d []byte, ts bson.Timestamp, now time.Time) []byte {
	d = bsoncore.AppendTimestampElement(d, "ts", ts.T, ts.I)
	d = bsoncore.AppendInt64Element(d, "t", 1)
	d = bsoncore.AppendInt64Element(d, "v", 2)
	return bsoncore.AppendDateTimeElement(d, "wall", now.UnixMilli())
}

// frameDoc wraps BSON elements into a document.
func frameDoc(elems []byte) []byte {
	out := make([]byte, 4, len(elems)+5)
	out = append(out, elems...)
	out = append(out, 0)
	binary.LittleEndian.PutUint32(out, uint32(len(out)))
	return out
}

// putOplogFields stages the entry at ts made of fields and the tail
// (appendEntryTail), encoding it straight into the batch: an insertMany
// of 1,000 documents would otherwise copy and allocate every entry twice
// more.
func (w *Writer) putOplogFields(ts bson.Timestamp, fields []byte, now time.Time) error {
	var tbuf [64]byte
	tail := appendEntryTail(tbuf[:0], ts, now)
	n := 4 + len(fields) + len(tail) + 1
	w.kbuf = appendRecordKey(w.kbuf[:0], w.s.oplog.collID, PackTS(ts))
	op := w.b.SetDeferred(len(w.kbuf), n)
	copy(op.Key, w.kbuf)
	v := op.Value
	binary.LittleEndian.PutUint32(v, uint32(n))
	copy(v[4+copy(v[4:], fields):], tail)
	v[n-1] = 0
	w.oplog.last = ts
	w.oplog.bytes += int64(len(w.kbuf) + n)
	return op.Finish()
}

func (w *Writer) putOplogEntry(ts bson.Timestamp, doc []byte) error {
	w.kbuf = appendRecordKey(w.kbuf[:0], w.s.oplog.collID, PackTS(ts))
	w.oplog.last = ts
	w.oplog.bytes += int64(len(w.kbuf) + len(doc))
	return w.b.Set(w.kbuf, doc, nil)
}

// imageKey returns the key of the image of kind ('b' or 'a') of the write
// at ts and applyOps index i.
func imageKey(ts bson.Timestamp, i int, kind byte) []byte {
	k := make([]byte, 0, 14)
	k = append(k, prefixImage)
	k = binary.BigEndian.AppendUint64(k, uint64(PackTS(ts)))
	k = binary.BigEndian.AppendUint32(k, uint32(i))
	return append(k, kind)
}

func (w *Writer) putImages(ts bson.Timestamp, i int, op pendingOp) error {
	if op.pre != nil {
		if err := w.b.Set(imageKey(ts, i, 'b'), op.pre, nil); err != nil {
			return err
		}
		w.oplog.bytes += int64(len(op.pre))
	}
	if op.post != nil {
		if err := w.b.Set(imageKey(ts, i, 'a'), op.post, nil); err != nil {
			return err
		}
		w.oplog.bytes += int64(len(op.post))
	}
	return nil
}

// publishOplog makes the entries of a committed batch known: the newest
// ts, the size, and a wakeup of change streams. It runs under the write
// lock after the batch is applied.
func (w *Writer) publishOplog() {
	o := &w.s.oplog
	if w.oplog.last.T == 0 {
		return
	}
	o.lastApplied.Store(PackTS(w.oplog.last))
	o.size.Add(w.oplog.bytes)
	o.mu.Lock()
	close(o.changed)
	o.changed = make(chan struct{})
	o.mu.Unlock()
	w.s.maybeTruncate()
}

// OplogFrom iterates over the oplog entries whose ts is at or after from,
// in ts order; RecordID gives each entry's PackTS. A transaction logged
// as a chain of applyOps entries comes as its last entry holding all its
// operations (oplog_chain.go). The iterator must be closed.
func (s *Snapshot) OplogFrom(c *Collection, from bson.Timestamp) (*Records, error) {
	lo := recordKey(c.ID, PackTS(from))
	it, err := s.src.NewIter(&pebble.IterOptions{LowerBound: lo, UpperBound: prefixEnd(recordPrefix(c.ID))})
	if err != nil {
		return nil, err
	}
	return &Records{it: &oplogIter{kvIter: it, src: s.src, collID: c.ID}}, nil
}

// Images returns the pre- and post-image stored for the write at ts and
// applyOps index i; nil when none is stored (the collection did not have
// changeStreamPreAndPostImages, or truncation removed them).
func (s *Snapshot) Images(ts bson.Timestamp, i int) (pre, post bson.Raw, err error) {
	if pre, err = pointGet(s.src, imageKey(ts, i, 'b')); err != nil {
		return nil, nil, err
	}
	post, err = pointGet(s.src, imageKey(ts, i, 'a'))
	return pre, post, err
}
