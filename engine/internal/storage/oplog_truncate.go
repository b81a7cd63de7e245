package storage

import (
	"encoding/binary"
	"sync/atomic"
	"time"

	"github.com/cockroachdb/pebble/v2"
)

// oplogRetention is the oplog's minimum retention (minRetentionHours):
// an entry younger than keep is not truncated, even past the size cap.
type oplogRetention struct {
	keep atomic.Int64 // time.Duration; 0: none
	// until (Unix nanoseconds) is when the oldest entry a truncation
	// had to keep comes of age: no truncation is tried before it.
	until atomic.Int64
}

// SetOplogMinRetention sets the oplog's minimum retention
// (replSetResizeOplog's minRetentionHours; zero for none) and truncates
// in the background what it no longer keeps.
// https://www.mongodb.com/docs/v7.0/reference/command/replSetResizeOplog/
func (s *Store) SetOplogMinRetention(d time.Duration) {
	s.oplog.ret.keep.Store(int64(max(d, 0)))
	s.oplog.ret.until.Store(0)
	s.maybeTruncate()
}

// OplogMinRetention returns the oplog's minimum retention.
func (s *Store) OplogMinRetention() time.Duration { return time.Duration(s.oplog.ret.keep.Load()) }

// retained reports whether the entry at ts (PackTS) is younger than the
// minimum retention at now, and when it comes of age.
func (o *oplogState) retained(ts int64, now time.Time) (bool, time.Time) {
	keep := time.Duration(o.ret.keep.Load())
	if keep <= 0 {
		return false, time.Time{}
	}
	due := time.Unix(int64(UnpackTS(ts).T), 0).Add(keep)
	return due.After(now), due
}

// truncateTarget is the share of the size cap a truncation brings the
// oplog down to, so that truncations run once per tenth of the cap
// written rather than at every commit.
const truncateTarget = 0.9

// maybeTruncate starts a background truncation when the oplog is over its
// cap and none runs. It returns at once.
func (s *Store) maybeTruncate() {
	o := &s.oplog
	if o.size.Load() <= o.maxSize.Load() {
		return
	}
	if u := o.ret.until.Load(); u != 0 && time.Now().UnixNano() < u {
		return // the oldest entry is still within the minimum retention
	}
	if !o.truncating.CompareAndSwap(false, true) {
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
// oplog is within truncateTarget of its cap, keeping the newest entry and
// the entries younger than the minimum retention (mongod truncates an
// entry only when the oplog is over its size and the entry older than
// minRetentionHours; its age is its ts's seconds). It
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
	now := time.Now()
	o.ret.until.Store(0)
	for it.First(); it.Valid(); it.Next() {
		ts := int64(binary.BigEndian.Uint64(it.Key()[9:]))
		if removed >= excess {
			cut = ts
			break
		}
		if keep, due := o.retained(ts, now); keep {
			cut = ts
			o.ret.until.Store(due.UnixNano())
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
