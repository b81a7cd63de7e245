package storage

import (
	"encoding/binary"
	"errors"
	"sync"

	"github.com/cockroachdb/pebble/v2"
)

// uniqueProbe answers "who owns this unique index key?" for one Writer
// without a Batch.Get per key (I9). A Batch.Get builds a fresh iterator
// over the batch, every memtable and every level for each key; an
// insertMany of 1,000 documents paid that 1,000 times. Instead the
// answer comes from two places:
//
//   - staged: the unique entries this batch set or deleted, by entry key
//     (owner record id, or 0 for a deleted entry; record ids start at 1);
//   - iters: one iterator per unique index over the committed data,
//     opened on first use and kept until the Writer ends. Committed data
//     cannot change while the Writer runs (writers hold wmu, I2), and
//     Pebble turns seeks to increasing keys into Next calls, so probing
//     ascending or generated keys is nearly free.
//
// A batch that range-deletes index entries (dropping a collection or an
// index) or bulk-adds them (building an index) marks the collection slow:
// its probes fall back to Batch.Get, which sees everything the batch did.
type uniqueProbe struct {
	staged map[string]int64
	iters  map[string]*pebble.Iterator // index prefix → iterator
	slow   map[uint64]bool             // collection ids probed with Batch.Get
}

// owner returns the record id that owns entry key k (built by entryKey for
// a unique index of collection collID), or 0 when no record does.
func (w *Writer) owner(collID uint64, prefix, k []byte) (int64, error) {
	p := &w.probe
	if p.slow[collID] || w.view != nil {
		return w.batchOwner(k)
	}
	if rid, ok := p.staged[string(k)]; ok {
		return rid, nil
	}
	it, err := w.committedIter(prefix)
	if err != nil {
		return 0, err
	}
	if !it.SeekPrefixGE(k) {
		return 0, it.Error()
	}
	if string(it.Key()) != string(k) {
		return 0, nil
	}
	v, err := it.ValueAndErr()
	if err != nil {
		return 0, err
	}
	return int64(binary.BigEndian.Uint64(v)), nil
}

// batchOwner is owner through Batch.Get: the batch's view of k.
func (w *Writer) batchOwner(k []byte) (int64, error) {
	v, closer, err := w.b.Get(k)
	if errors.Is(err, pebble.ErrNotFound) {
		return 0, nil
	}
	if err != nil {
		return 0, err
	}
	defer closer.Close()
	return int64(binary.BigEndian.Uint64(v)), nil
}

// committedIter returns the iterator over the committed entries under
// prefix (one index), opening it on first use.
func (w *Writer) committedIter(prefix []byte) (*pebble.Iterator, error) {
	p := &w.probe
	if it, ok := p.iters[string(prefix)]; ok {
		return it, nil
	}
	lo := append([]byte(nil), prefix...)
	it, err := w.s.db.NewIter(&pebble.IterOptions{LowerBound: lo, UpperBound: prefixEnd(lo)})
	if err != nil {
		return nil, err
	}
	if p.iters == nil {
		p.iters = map[string]*pebble.Iterator{}
	}
	p.iters[string(lo)] = it
	return it, nil
}

// stage records that this batch set (rid > 0) or deleted (rid 0) the
// unique entry key k of collection collID.
func (w *Writer) stage(collID uint64, k []byte, rid int64) {
	p := &w.probe
	if p.slow[collID] {
		return
	}
	if p.staged == nil {
		p.staged = stagedPool.Get().(map[string]int64)
	}
	p.staged[string(k)] = rid
}

// markSlow makes every later probe of collection collID's indexes in this
// batch go through Batch.Get.
func (w *Writer) markSlow(collID uint64) {
	p := &w.probe
	if p.slow == nil {
		p.slow = map[uint64]bool{}
	}
	p.slow[collID] = true
}

// closeProbes closes the committed-data iterators. Write calls it when fn
// returns, before the batch commits.
func (w *Writer) closeProbes() {
	for _, it := range w.probe.iters {
		it.Close()
	}
	w.probe.iters = nil
	if m := w.probe.staged; m != nil && len(m) <= maxPooledStaged {
		clear(m)
		stagedPool.Put(m)
	}
	w.probe.staged = nil
}

// stagedPool keeps the maps of staged unique keys between batches: an
// insertMany of 1,000 documents otherwise grew a fresh map (and rehashed
// it) several times per batch.
var stagedPool = sync.Pool{New: func() any { return map[string]int64{} }}

// maxPooledStaged bounds the maps stagedPool keeps, so that one huge batch
// does not leave a large map (cleared in time proportional to its size)
// behind for every later one.
const maxPooledStaged = 1 << 14
