package storage

import (
	"encoding/binary"

	"github.com/cockroachdb/pebble/v2"
)

// truncateTarget is the share of the size cap a truncation brings the
// oplog down to, so that truncations run once per tenth of the cap
// written rather than at every commit.
const truncateTarget = 0.9

// maybeTruncate starts a background truncation when the oplog is over its
// cap and none runs. It returns at once.
func (s *Store) maybeTruncate() {
	o := &s.oplog
	if o.size.Load() <= o.maxSize.Load() || !o.truncating.CompareAndSwap(false, true) {
		return
	}
	go s.truncateOplog()
}

// stopOplog stops truncation for Close: it waits for a truncation in
// progress and keeps later ones from touching the store.
func (s *Store) stopOplog() {
	s.oplog.stopped.Store(true)
	s.oplog.tmu.Lock()
	defer s.oplog.tmu.Unlock()
}

// truncateOplog removes the oldest entries (and their images) until the
// oplog is within truncateTarget of its cap, keeping the newest entry. It
// finds the cut point without the write lock and then removes everything
// before it with range deletions in one small batch, so writers wait only
// for that commit.
func (s *Store) truncateOplog() {
	o := &s.oplog
	o.tmu.Lock()
	defer o.tmu.Unlock()
	defer func() {
		// Commits made while this ran may have passed the cap again.
		o.truncating.Store(false)
		if !o.stopped.Load() {
			s.maybeTruncate()
		}
	}()
	if o.stopped.Load() {
		return
	}
	excess := o.size.Load() - int64(float64(o.maxSize.Load())*truncateTarget)
	if excess <= 0 {
		return
	}
	lo := recordPrefix(o.collID)
	it, err := s.db.NewIter(&pebble.IterOptions{LowerBound: lo, UpperBound: prefixEnd(lo)})
	if err != nil {
		return
	}
	var removed int64
	var cut, last int64 // the first ts kept, the last removed
	for it.First(); it.Valid(); it.Next() {
		ts := int64(binary.BigEndian.Uint64(it.Key()[9:]))
		if removed >= excess {
			cut = ts
			break
		}
		removed += int64(len(it.Key()) + valueLen(it))
		last = ts
	}
	if cut == 0 && it.Last() {
		// Keep the newest entry, whatever its size.
		cut = int64(binary.BigEndian.Uint64(it.Key()[9:]))
		if cut == last {
			removed -= int64(len(it.Key()) + valueLen(it))
		}
	}
	if err := it.Close(); err != nil || cut == 0 || last == 0 || last >= cut {
		return
	}
	imgLo := []byte{prefixImage}
	imgHi := binary.BigEndian.AppendUint64([]byte{prefixImage}, uint64(cut))
	if it, err := s.db.NewIter(&pebble.IterOptions{LowerBound: imgLo, UpperBound: imgHi}); err == nil {
		for it.First(); it.Valid(); it.Next() {
			removed += int64(valueLen(it))
		}
		it.Close()
	}
	// Published before the entries go, so that a reader never misses
	// them without knowing it.
	o.truncatedTo.Store(last)
	err = s.Write(func(w *Writer) error {
		if err := w.b.DeleteRange(lo, recordKey(o.collID, cut), nil); err != nil {
			return err
		}
		if err := w.b.DeleteRange(imgLo, imgHi, nil); err != nil {
			return err
		}
		return w.b.Set(append([]byte{prefixMeta}, metaOplogTruncated...), binary.BigEndian.AppendUint64(nil, uint64(last)), nil)
	})
	if err == nil {
		o.size.Add(-removed)
	}
}

// valueLen returns the length of the value at it without loading it.
func valueLen(it *pebble.Iterator) int {
	lv := it.LazyValue()
	return lv.Len()
}
