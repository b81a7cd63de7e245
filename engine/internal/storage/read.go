package storage

import (
	"encoding/binary"
	"errors"
	"io"

	"github.com/cockroachdb/pebble/v2"
	"go.mongodb.org/mongo-driver/v2/bson"
)

// Reader reads documents and index entries from one consistent view: a
// Snapshot, or a Writer's batch over the committed data.
type Reader interface {
	// Scan iterates over c's documents in record id ($natural) order, or in
	// reverse. The iterator must be closed.
	Scan(c *Collection, reverse bool) (*Records, error)
	// Fetch returns the document at rid, or nil when there is none.
	Fetch(c *Collection, rid int64) (bson.Raw, error)
	// IndexScan iterates over the entries of ix whose encoded keys lie in
	// [lo, hi); a nil hi means to the end of the index.
	IndexScan(c *Collection, ix *Index, lo, hi []byte, reverse bool) (*Entries, error)
	// Lookup returns the record id holding key in the unique index ix.
	Lookup(c *Collection, ix *Index, key []byte) (int64, bool, error)
}

type source interface {
	NewIter(*pebble.IterOptions) (*pebble.Iterator, error)
	Get([]byte) ([]byte, io.Closer, error)
}

// reader implements Reader over a source. fetch is nil for a Writer's
// reader, whose point reads must see what the batch staged since.
type reader struct {
	src   source
	fetch *fetcher
	// view is set instead of src for a transaction's reads (Txn).
	view *Txn
}

// Snapshot is a Reader over a fixed point in time. It must be closed. A
// Snapshot is used by one goroutine at a time.
type Snapshot struct {
	reader
	snap *pebble.Snapshot
}

// Snapshot returns a Reader over the store as it is now. It takes no lock
// that writers hold: a reader never waits for a commit.
func (s *Store) Snapshot() *Snapshot {
	sn := s.db.NewSnapshot()
	return &Snapshot{reader: reader{src: sn, fetch: &fetcher{src: sn}}, snap: sn}
}

// Close releases the snapshot and the iterators its fetches kept open.
func (s *Snapshot) Close() error {
	if s.view != nil {
		s.view.release()
		return nil
	}
	err := s.fetch.close()
	if cerr := s.snap.Close(); err == nil {
		err = cerr
	}
	return err
}

func (r reader) Scan(c *Collection, reverse bool) (*Records, error) {
	lo := recordPrefix(c.ID)
	it, err := r.iter(&pebble.IterOptions{LowerBound: lo, UpperBound: prefixEnd(lo)})
	if err != nil {
		return nil, err
	}
	return &Records{it: it, reverse: reverse}, nil
}

// iter opens an iterator over the reader's view.
func (r reader) iter(o *pebble.IterOptions) (kvIter, error) {
	if r.view != nil {
		return r.view.newIter(o)
	}
	return r.src.NewIter(o)
}

func (r reader) Fetch(c *Collection, rid int64) (bson.Raw, error) {
	if r.view != nil {
		return r.view.get(recordKey(c.ID, rid))
	}
	if r.fetch != nil {
		return r.fetch.get(c.ID, rid)
	}
	return pointGet(r.src, recordKey(c.ID, rid))
}

func (r reader) IndexScan(c *Collection, ix *Index, lo, hi []byte, reverse bool) (*Entries, error) {
	p := indexPrefix(c.ID, ix.ID)
	o := &pebble.IterOptions{LowerBound: append(append([]byte(nil), p...), lo...)}
	if hi != nil {
		o.UpperBound = append(append([]byte(nil), p...), hi...)
	} else {
		o.UpperBound = prefixEnd(p)
	}
	it, err := r.iter(o)
	if err != nil {
		return nil, err
	}
	return &Entries{it: it, reverse: reverse, prefix: len(p), unique: ix.Unique}, nil
}

func (r reader) Lookup(c *Collection, ix *Index, key []byte) (int64, bool, error) {
	if r.view != nil {
		v, err := r.view.get(append(indexPrefix(c.ID, ix.ID), key...))
		if err != nil || v == nil {
			return 0, false, err
		}
		return int64(binary.BigEndian.Uint64(v)), true, nil
	}
	v, closer, err := r.src.Get(append(indexPrefix(c.ID, ix.ID), key...))
	if errors.Is(err, pebble.ErrNotFound) {
		return 0, false, nil
	}
	if err != nil {
		return 0, false, err
	}
	defer closer.Close()
	return int64(binary.BigEndian.Uint64(v)), true, nil
}

// Records iterates over documents. Doc's result stays valid after Next.
type Records struct {
	it      kvIter
	reverse bool
	started bool
}

// Next advances to the next document and reports whether there is one.
func (r *Records) Next() bool {
	if !r.started {
		r.started = true
		if r.reverse {
			return r.it.Last()
		}
		return r.it.First()
	}
	if r.reverse {
		return r.it.Prev()
	}
	return r.it.Next()
}

// RecordID returns the current document's record id.
func (r *Records) RecordID() int64 { return int64(binary.BigEndian.Uint64(r.it.Key()[9:])) }

// Doc returns a copy of the current document.
func (r *Records) Doc() (bson.Raw, error) {
	v, err := r.it.ValueAndErr()
	if err != nil {
		return nil, err
	}
	return rawCopy(v), nil
}

// Err returns the iteration error, if any.
func (r *Records) Err() error { return r.it.Error() }

// Close releases the iterator.
func (r *Records) Close() error { return r.it.Close() }

// Entries iterates over index entries.
type Entries struct {
	it      kvIter
	reverse bool
	started bool
	prefix  int
	unique  bool
}

// Next advances to the next entry and reports whether there is one.
func (e *Entries) Next() bool {
	if !e.started {
		e.started = true
		if e.reverse {
			return e.it.Last()
		}
		return e.it.First()
	}
	if e.reverse {
		return e.it.Prev()
	}
	return e.it.Next()
}

// Key returns the current entry's encoded key (without the record id). It
// is valid until the next call to Next.
func (e *Entries) Key() []byte {
	k := e.it.Key()[e.prefix:]
	if !e.unique {
		k = k[:len(k)-8]
	}
	return k
}

// RecordID returns the record id the current entry points at.
func (e *Entries) RecordID() (int64, error) {
	if !e.unique {
		k := e.it.Key()
		return int64(binary.BigEndian.Uint64(k[len(k)-8:])), nil
	}
	v, err := e.it.ValueAndErr()
	if err != nil {
		return 0, err
	}
	return int64(binary.BigEndian.Uint64(v)), nil
}

// Err returns the iteration error, if any.
func (e *Entries) Err() error { return e.it.Error() }

// Close releases the iterator.
func (e *Entries) Close() error { return e.it.Close() }

// Stats are a collection's sizes: documents, their bytes, and the bytes of
// each index's entries.
type Stats struct {
	Count      int64
	Size       int64
	IndexSizes map[string]int64
}

// CollStats computes c's sizes by reading r.
func CollStats(r Reader, c *Collection) (Stats, error) {
	st := Stats{IndexSizes: map[string]int64{}}
	recs, err := r.Scan(c, false)
	if err != nil {
		return st, err
	}
	for recs.Next() {
		st.Count++
		st.Size += int64(len(recs.it.Value()))
	}
	if err := recs.Close(); err != nil {
		return st, err
	}
	for _, ix := range c.Indexes {
		es, err := r.IndexScan(c, ix, nil, nil, false)
		if err != nil {
			return st, err
		}
		var n int64
		for es.Next() {
			n += int64(len(es.it.Key()) + len(es.it.Value()))
		}
		if err := es.Close(); err != nil {
			return st, err
		}
		st.IndexSizes[ix.Name] = n
	}
	return st, nil
}

// IndexEntries returns, for each encoded key of ix, the record ids its
// entries point at, reading r. Validation compares it with the keys the
// documents generate.
func IndexEntries(r Reader, c *Collection, ix *Index) (map[string][]int64, error) {
	es, err := r.IndexScan(c, ix, nil, nil, false)
	if err != nil {
		return nil, err
	}
	defer es.Close()
	out := map[string][]int64{}
	for es.Next() {
		rid, err := es.RecordID()
		if err != nil {
			return nil, err
		}
		k := string(es.Key())
		out[k] = append(out[k], rid)
	}
	return out, es.Err()
}
