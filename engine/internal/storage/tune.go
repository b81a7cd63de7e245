package storage

import (
	"github.com/cockroachdb/pebble/v2"
	"github.com/cockroachdb/pebble/v2/bloom"
)

// DefaultCacheSize is the block cache size Open uses when
// Options.CacheSize is zero: 256 MiB, MongoDB's smallest WiredTiger cache.
// Pebble allocates it as blocks are read, so a small database uses little.
const DefaultCacheSize = 256 << 20

// Memtable sizes: a sixteenth of the cache, within these bounds.
const (
	minMemTableSize = 1 << 20
	maxMemTableSize = 64 << 20
)

// memTargetFileSize is the target size of an in-memory store's L0 tables.
const memTargetFileSize = 256 << 10

// tune sets the Pebble options that decide read and write costs.
//
// The real cause of slow index scans was the block cache: Pebble charges
// every live memtable against it (Cache.Reserve), and Pebble's defaults
// (an 8 MiB cache, 4 MiB memtables, a zombie memtable kept alive by an
// open snapshot) left it no room at all, so once data spilled out of the
// memtable every point read decompressed its index and data blocks
// afresh. The cache is therefore sized for the working set, with
// memtables a sixteenth of it so that the few alive at once (one
// filling, one flushing, some pinned by cursors' snapshots) leave most of
// it to blocks. Larger memtables would not help reads: Pebble keeps
// immutable memtables unflushed until together they reach MemTableSize,
// and a read merges every one of them.
//
// Bloom filters make the point reads that find nothing (the unique index
// probe of every insert) skip tables without reading them; larger index
// blocks keep one-level indexes, so a point read loads one index block
// instead of two. Blocks use Pebble's fastest compression (Snappy until
// the format allows MinLZ): the cache holds them decompressed, so only a
// miss pays for it, and in memory the tables themselves take RAM (no
// measurable difference in speed against no compression). In memory
// there is no WAL.
func tune(po *pebble.Options, cacheSize int64, durable bool) {
	if cacheSize <= 0 {
		cacheSize = DefaultCacheSize
	}
	po.CacheSize = cacheSize
	po.MemTableSize = uint64(min(max(cacheSize/16, minMemTableSize), maxMemTableSize))
	po.MemTableStopWritesThreshold = 4

	po.ApplyCompressionSettings(func() pebble.DBCompressionSettings { return pebble.DBCompressionFastest })
	if !durable {
		// An in-memory store has nothing to recover after a crash, so a
		// WAL would only copy every write once more.
		po.DisableWAL = true
		// Small tables (256 KiB in L0, doubling per level below the base
		// level) cut compaction work several times over: a flush holds
		// the new tails of several ascending key ranges (records, each
		// index, the oplog), and with 2 MiB tables each L0 table spanned
		// the gaps between them, so every L0 compaction rewrote nearly
		// all of the base level. Inserting 1.2 million small documents
		// compacted 161 MB for 72 MB flushed with Pebble's sizes, 12 MB
		// with these; L0 kept one sublevel, so reads merge no more.
		po.TargetFileSizes[0] = memTargetFileSize
	}
	for i := range po.Levels {
		l := &po.Levels[i]
		l.FilterPolicy = bloom.FilterPolicy(10)
		l.BlockSize = 16 << 10
		l.IndexBlockSize = 256 << 10
	}
}
