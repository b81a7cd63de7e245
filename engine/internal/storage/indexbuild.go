package storage

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"

	"github.com/cockroachdb/pebble/v2"
	"go.mongodb.org/mongo-driver/v2/bson"

	"github.com/formworkdb/formwork/engine/internal/index"
	"github.com/formworkdb/formwork/engine/internal/mongoerr"
)

// IndexBuild is a hybrid index build, as mongod's: the indexes are built
// from a snapshot without the write lock while other writes to the
// collection go on, and those writes are recorded meanwhile (the side
// table: the record ids they touched). Commit then takes the lock only to
// re-index the recorded documents, check uniqueness and publish the
// indexes in the catalog.
//
// Invariants:
//
//	B1. The snapshot is taken and the build registered under the write
//	    lock, so every write not in the snapshot is in the side table.
//	B2. The new indexes' ids are reserved in the catalog at Begin, so
//	    entries written before Commit (under ids no reader knows yet) are
//	    invisible and never collide with another index; an abort
//	    range-deletes them, and Open removes those a crash left behind.
//	B3. Commit re-derives each side record's entries from its snapshot
//	    version (removed) and its current version (added), so the
//	    published index holds exactly the current documents' keys.
//
// Run and Commit are called by one goroutine; Progress is safe for
// concurrent use (currentOp reads it).
type IndexBuild struct {
	s       *Store
	ns      string
	collID  uint64
	Indexes []*Index // the indexes being built, with their reserved ids
	snap    *pebble.Snapshot
	// snapOnce closes snap once: at the end of the build or at Close.
	snapOnce sync.Once

	mu   sync.Mutex
	side map[int64]struct{} // record ids written since the snapshot

	// owners holds, for each unique index (nil otherwise), the record
	// ids of each key; dups the keys with more than one.
	owners []map[string][]int64
	dups   map[int]map[string]bool
	// indexed holds, for records a drain pass re-indexed, the document
	// version whose keys the new indexes now hold (nil: deleted); other
	// records are indexed as the snapshot has them.
	indexed map[int64]bson.Raw

	done, total atomic.Int64
	finished    bool
}

// errBuildAborted is the error when the collection went away during a build.
func errBuildAborted(ns string) error {
	return mongoerr.Newf(mongoerr.IndexBuildAborted, "Index build aborted: collection %s was dropped or renamed during the build", ns)
}

// BeginIndexBuild runs prepare under the write lock (it may create the
// collection and decides which specs still need building, checking
// conflicts and limits) and, when it returns specs, reserves their index
// ids, takes the build's snapshot and registers the build so that writes
// to the collection are recorded from now on. It returns nil when there
// is nothing to build. The caller must call Run and then Commit, or Abort.
func (s *Store) BeginIndexBuild(prepare func(w *Writer) (ns string, specs []index.Spec, err error)) (*IndexBuild, error) {
	var b *IndexBuild
	err := s.Write(func(w *Writer) error {
		ns, specs, err := prepare(w)
		if err != nil || len(specs) == 0 {
			return err
		}
		c := w.Collection(ns)
		if c == nil {
			return mongoerr.New(mongoerr.NamespaceNotFound, "ns does not exist")
		}
		n := *c
		b = &IndexBuild{s: s, ns: ns, collID: c.ID, side: map[int64]struct{}{}, dups: map[int]map[string]bool{}}
		for _, sp := range specs {
			ix, err := compiledIndex(n.nextIndexID, sp)
			if err != nil {
				return err
			}
			n.nextIndexID++
			b.Indexes = append(b.Indexes, ix)
		}
		if err := w.putCatalog(&n); err != nil {
			return err
		}
		b.snap = s.db.NewSnapshot() // under wmu: B1
		s.registerBuild(b)
		return nil
	})
	if err != nil {
		if b != nil {
			s.unregisterBuild(b)
			b.closeSnap()
		}
		return nil, err
	}
	return b, nil
}

// registerBuild adds b to the builds writers report to.
func (s *Store) registerBuild(b *IndexBuild) {
	s.buildsMu.Lock()
	defer s.buildsMu.Unlock()
	if s.builds == nil {
		s.builds = map[uint64][]*IndexBuild{}
	}
	s.builds[b.collID] = append(s.builds[b.collID], b)
	s.buildCount.Add(1)
	if s.openBuilds == nil {
		s.openBuilds = map[*IndexBuild]struct{}{}
	}
	s.openBuilds[b] = struct{}{}
}

// unregisterBuild removes b; it is a no-op when b is not registered.
func (s *Store) unregisterBuild(b *IndexBuild) {
	s.buildsMu.Lock()
	defer s.buildsMu.Unlock()
	bs := s.builds[b.collID]
	for i, o := range bs {
		if o == b {
			s.builds[b.collID] = append(bs[:i:i], bs[i+1:]...)
			s.buildCount.Add(-1)
			break
		}
	}
	if len(s.builds[b.collID]) == 0 {
		delete(s.builds, b.collID)
	}
}

// noteSide records that record rid of collection collID is being written,
// for the index builds running on it. Writers call it for every insert,
// update and delete; without a build it costs one atomic load.
func (w *Writer) noteSide(collID uint64, rid int64) {
	s := w.s
	if s.buildCount.Load() == 0 {
		return
	}
	s.buildsMu.Lock()
	bs := s.builds[collID]
	s.buildsMu.Unlock()
	for _, b := range bs {
		b.mu.Lock()
		b.side[rid] = struct{}{}
		b.mu.Unlock()
	}
}

// Progress returns how many of the snapshot's documents the build has
// scanned, and how many there are.
func (b *IndexBuild) Progress() (done, total int64) { return b.done.Load(), b.total.Load() }

// buildChunk is how many bytes of entries one bulk batch carries.
const buildChunk = 4 << 20

// Run scans the snapshot and writes the new indexes' entries without the
// write lock. ctx interrupts it (killOp, maxTimeMS); a unique index's
// duplicates are only noted here, since writes recorded in the side table
// may still resolve them, and judged at Commit.
func (b *IndexBuild) Run(ctx context.Context) error {
	b.s.buildRun.RLock()
	defer b.s.buildRun.RUnlock()
	if b.s.closed.Load() {
		return ErrClosed
	}
	coll := &Collection{ID: b.collID}
	if n, err := b.count(); err != nil {
		return err
	} else {
		b.total.Store(n)
	}
	rd := reader{src: b.snap}
	recs, err := rd.Scan(coll, false)
	if err != nil {
		return err
	}
	defer recs.Close()
	b.owners = make([]map[string][]int64, len(b.Indexes))
	for i, ix := range b.Indexes {
		if ix.Unique {
			b.owners[i] = map[string][]int64{}
		}
	}
	batch := b.s.db.NewBatch()
	defer func() { batch.Close() }()
	flush := func() error {
		if batch.Empty() {
			return nil
		}
		if err := b.s.disk.admit(); err != nil {
			return err
		}
		if err := batch.Commit(pebble.NoSync); err != nil {
			return b.s.wrapCommitErr(err, true)
		}
		batch.Close()
		batch = b.s.db.NewBatch()
		return nil
	}
	var kbuf []byte
	for recs.Next() {
		if n := b.done.Add(1); n%512 == 0 {
			if err := ctx.Err(); err != nil {
				return err
			}
			if b.s.closed.Load() {
				return ErrClosed
			}
		}
		doc, err := recs.it.ValueAndErr()
		if err != nil {
			return err
		}
		rid := recs.RecordID()
		for i, ix := range b.Indexes {
			keys, mk, err := ix.Def.Keys(bson.Raw(doc))
			if err != nil {
				return err
			}
			if mk.Any() {
				ix.Multikey, _ = mergeMultikey(ix.Multikey, mk)
			}
			for _, k := range keys {
				if ix.Unique {
					b.addOwner(i, k, rid)
					continue
				}
				kbuf = appendEntryKey(kbuf[:0], coll, ix, k, rid)
				if err := batch.Set(kbuf, nil, nil); err != nil {
					return err
				}
			}
		}
		if batch.Len() >= buildChunk {
			if err := flush(); err != nil {
				return err
			}
		}
	}
	if err := recs.Err(); err != nil {
		return err
	}
	for i, ix := range b.Indexes {
		for k, rids := range b.owners[i] {
			kbuf = appendEntryKey(kbuf[:0], coll, ix, []byte(k), 0)
			var v [8]byte
			binary.BigEndian.PutUint64(v[:], uint64(rids[0]))
			if err := batch.Set(kbuf, v[:], nil); err != nil {
				return err
			}
			if batch.Len() >= buildChunk {
				if err := flush(); err != nil {
					return err
				}
			}
		}
	}
	return flush()
}

// count returns the number of documents in the snapshot.
func (b *IndexBuild) count() (int64, error) {
	lo := recordPrefix(b.collID)
	it, err := b.snap.NewIter(&pebble.IterOptions{LowerBound: lo, UpperBound: prefixEnd(lo)})
	if err != nil {
		return 0, err
	}
	var n int64
	for it.First(); it.Valid(); it.Next() {
		n++
	}
	if err := it.Error(); err != nil {
		it.Close()
		return 0, err
	}
	return n, it.Close()
}

// addOwner records that rid holds key k in unique index i.
func (b *IndexBuild) addOwner(i int, k []byte, rid int64) {
	m := b.owners[i]
	rids := m[string(k)]
	for _, r := range rids {
		if r == rid {
			return
		}
	}
	m[string(k)] = append(rids, rid)
	if len(rids) > 0 {
		if b.dups[i] == nil {
			b.dups[i] = map[string]bool{}
		}
		b.dups[i][string(k)] = true
	}
}

// removeOwner records that rid no longer holds key k in unique index i.
func (b *IndexBuild) removeOwner(i int, k []byte, rid int64) {
	m := b.owners[i]
	rids := m[string(k)]
	for j, r := range rids {
		if r == rid {
			rids = append(rids[:j:j], rids[j+1:]...)
			break
		}
	}
	if len(rids) == 0 {
		delete(m, string(k))
	} else {
		m[string(k)] = rids
	}
}

// Commit applies the side table and publishes the indexes under the
// write lock. check runs first, under the lock, with the collection as
// it is now: it re-checks conflicts with indexes created meanwhile and
// reports which of the built indexes to publish (false: an identical one
// exists now). A unique index whose keys collide fails with
// DuplicateKeyError and publishes nothing. Commit aborts the build on
// any error; the build is finished either way.
func (b *IndexBuild) Commit(check func(c *Collection, ixs []*Index) ([]bool, error)) (*Collection, error) {
	if err := b.drain(); err != nil {
		b.Abort()
		return nil, err
	}
	var out *Collection
	err := b.s.Write(func(w *Writer) error {
		c := w.Collection(b.ns)
		if c == nil || c.ID != b.collID {
			return errBuildAborted(b.ns)
		}
		keep, err := check(c, b.Indexes)
		if err != nil {
			return err
		}
		b.s.unregisterBuild(b) // wmu is held: no write is missed (B1)
		b.mu.Lock()
		side := b.side
		b.side = map[int64]struct{}{}
		b.mu.Unlock()
		if err := b.applySide(side, w.Reader(), w.b, c, true); err != nil {
			return err
		}
		n := *c
		n.Indexes = append([]*Index(nil), c.Indexes...)
		for i, ix := range b.Indexes {
			if !keep[i] {
				p := indexPrefix(c.ID, ix.ID)
				if err := w.b.DeleteRange(p, prefixEnd(p), nil); err != nil {
					return err
				}
				continue
			}
			n.Indexes = append(n.Indexes, ix)
			w.logCreateIndex(&n, ix)
		}
		w.markSlow(c.ID)
		out = &n
		return w.putCatalog(&n)
	})
	if err != nil {
		b.Abort()
		return nil, err
	}
	b.finish()
	return out, nil
}

// drainPasses bounds the catch-up passes Commit runs before it takes the
// write lock, and drainDone is the side table size at which it stops.
const (
	drainPasses = 8
	drainDone   = 256
)

// drain applies the side table without the write lock, in passes, so
// that the final pass under the lock handles only the writes made during
// the last one (mongod drains its side writes table the same way). Each
// pass swaps the side table and takes its snapshot under the write lock,
// so a write is either in that snapshot or recorded for the next pass.
func (b *IndexBuild) drain() error {
	c := &Collection{ID: b.collID}
	last := -1
	for range drainPasses {
		b.s.wmu.Lock()
		if b.s.closed.Load() {
			b.s.wmu.Unlock()
			return ErrClosed
		}
		b.mu.Lock()
		side := b.side
		// Stop when little is left, or when writers add as fast as a pass
		// applies (draining more would not shrink the final pass).
		if len(side) <= drainDone || (last >= 0 && len(side) >= last) {
			b.mu.Unlock()
			b.s.wmu.Unlock()
			return nil
		}
		b.side = map[int64]struct{}{}
		b.mu.Unlock()
		last = len(side)
		// buildRun is taken before wmu is released, so Close (which
		// holds wmu, then waits for buildRun) cannot start in between.
		b.s.buildRun.RLock()
		sn := b.s.db.NewSnapshot()
		b.s.wmu.Unlock()
		batch := b.s.db.NewBatch()
		err := b.applySide(side, reader{src: sn}, batch, c, false)
		if err == nil {
			if err = b.s.disk.admit(); err == nil {
				if err = batch.Commit(pebble.NoSync); err != nil {
					err = b.s.wrapCommitErr(err, true)
				}
			}
		}
		batch.Close()
		sn.Close()
		b.s.buildRun.RUnlock()
		if err != nil {
			return err
		}
	}
	return nil
}

// entrySink receives entry changes: a Writer's batch or a bulk batch.
type entrySink interface {
	Set(key, value []byte, _ *pebble.WriteOptions) error
	Delete(key []byte, _ *pebble.WriteOptions) error
}

// applySide re-indexes the records in side (B3): it removes the keys of
// the version the indexes hold and adds those of the version cur reads,
// writing to sink. Unique keys that changed are rewritten from owners;
// final (under the write lock) also judges every key that ever had two
// owners and reports a DuplicateKeyError if one still has.
func (b *IndexBuild) applySide(side map[int64]struct{}, cur Reader, sink entrySink, c *Collection, final bool) error {
	if b.indexed == nil {
		b.indexed = map[int64]bson.Raw{}
	}
	snapRd := reader{src: b.snap}
	touched := make([]map[string]bool, len(b.Indexes))
	for rid := range side {
		old, ok := b.indexed[rid]
		if !ok {
			var err error
			if old, err = snapRd.Fetch(c, rid); err != nil {
				return err
			}
		}
		now, err := cur.Fetch(c, rid)
		if err != nil {
			return err
		}
		b.indexed[rid] = now
		for i, ix := range b.Indexes {
			var oldKeys, newKeys [][]byte
			if old != nil {
				if oldKeys, _, err = ix.Def.Keys(old); err != nil {
					return err
				}
			}
			if now != nil {
				var mk index.Multikey
				if newKeys, mk, err = ix.Def.Keys(now); err != nil {
					return err
				}
				if mk.Any() {
					ix.Multikey, _ = mergeMultikey(ix.Multikey, mk)
				}
			}
			if ix.Unique {
				if touched[i] == nil {
					touched[i] = map[string]bool{}
				}
				for _, k := range oldKeys {
					b.removeOwner(i, k, rid)
					touched[i][string(k)] = true
				}
				for _, k := range newKeys {
					b.addOwner(i, k, rid)
					touched[i][string(k)] = true
				}
				continue
			}
			for _, k := range oldKeys {
				if err := sink.Delete(entryKey(c, ix, k, rid), nil); err != nil {
					return err
				}
			}
			for _, k := range newKeys {
				if err := sink.Set(entryKey(c, ix, k, rid), nil, nil); err != nil {
					return err
				}
			}
		}
	}
	for i, ix := range b.Indexes {
		if !ix.Unique {
			continue
		}
		if touched[i] == nil {
			touched[i] = map[string]bool{}
		}
		if final {
			for k := range b.dups[i] {
				touched[i][k] = true
			}
		}
		for k := range touched[i] {
			rids := b.owners[i][k]
			ek := entryKey(c, ix, []byte(k), 0)
			if len(rids) == 0 {
				if err := sink.Delete(ek, nil); err != nil {
					return err
				}
				continue
			}
			if len(rids) > 1 && !final {
				continue // judged in the final pass
			}
			if len(rids) > 1 {
				doc, err := cur.Fetch(c, rids[1])
				if err != nil {
					return err
				}
				return &DuplicateKeyError{Coll: c, Index: ix, Doc: doc, Key: []byte(k)}
			}
			var v [8]byte
			binary.BigEndian.PutUint64(v[:], uint64(rids[0]))
			if err := sink.Set(ek, v[:], nil); err != nil {
				return err
			}
		}
	}
	return nil
}

// Abort stops the build: it unregisters it and removes the entries it
// wrote. It is safe to call after Commit failed or instead of Commit.
func (b *IndexBuild) Abort() {
	if b.finished {
		return
	}
	b.s.unregisterBuild(b)
	err := b.s.Write(func(w *Writer) error {
		for _, ix := range b.Indexes {
			p := indexPrefix(b.collID, ix.ID)
			if err := w.b.DeleteRange(p, prefixEnd(p), nil); err != nil {
				return err
			}
		}
		w.markSlow(b.collID)
		return nil
	})
	if err != nil && !errors.Is(err, ErrClosed) {
		b.s.disk.logf("index build abort: entries left for the next open to remove", "err", err)
	}
	b.finish()
}

// finish releases the snapshot.
func (b *IndexBuild) finish() {
	if !b.finished {
		b.finished = true
		b.s.buildRun.RLock()
		if !b.s.closed.Load() {
			b.closeSnap()
		}
		b.s.buildRun.RUnlock()
	}
}

// closeSnap releases the build's snapshot once.
func (b *IndexBuild) closeSnap() {
	b.snapOnce.Do(func() {
		b.snap.Close()
		b.s.buildsMu.Lock()
		delete(b.s.openBuilds, b)
		b.s.buildsMu.Unlock()
	})
}

// closeBuilds releases the snapshots of the builds not finished yet;
// Close calls it holding buildRun exclusively, so no build is reading
// them.
func (s *Store) closeBuilds() {
	s.buildsMu.Lock()
	open := make([]*IndexBuild, 0, len(s.openBuilds))
	for b := range s.openBuilds {
		open = append(open, b)
	}
	s.buildsMu.Unlock()
	for _, b := range open {
		b.closeSnap()
	}
}

// dropOrphanEntries removes index entries whose index id is not in the
// catalog: those of a build a crash interrupted (B2). It runs at Open,
// one seek per index of each collection.
func (s *Store) dropOrphanEntries(colls map[string]*Collection) error {
	b := s.db.NewBatch()
	defer b.Close()
	for _, c := range colls {
		known := map[uint32]bool{}
		for _, ix := range c.Indexes {
			known[ix.ID] = true
		}
		lo := collIndexPrefix(c.ID)
		it, err := s.db.NewIter(&pebble.IterOptions{LowerBound: lo, UpperBound: prefixEnd(lo)})
		if err != nil {
			return err
		}
		for valid := it.First(); valid; {
			id := binary.BigEndian.Uint32(it.Key()[9:13])
			p := indexPrefix(c.ID, id)
			if !known[id] {
				if err := b.DeleteRange(p, prefixEnd(p), nil); err != nil {
					it.Close()
					return err
				}
			}
			valid = it.SeekGE(prefixEnd(p))
		}
		if err := it.Close(); err != nil {
			return err
		}
	}
	if b.Empty() {
		return nil
	}
	if err := b.Commit(pebble.Sync); err != nil {
		return fmt.Errorf("storage: remove interrupted index builds: %w", err)
	}
	return nil
}
