package storage

// CacheStats are the storage engine's cache figures, the part of
// WiredTiger's serverStatus cache section that Pebble can answer.
type CacheStats struct {
	// ConfiguredBytes is the block cache's capacity.
	ConfiguredBytes int64
	// CachedBytes is what the block cache holds now.
	CachedBytes int64
	// DirtyBytes is what the memtables hold: written, not yet flushed.
	DirtyBytes int64
	// Hits and Misses count block cache lookups; a miss reads a block.
	Hits, Misses int64
	// Flushes and Compactions count the background writes of tables.
	Flushes, Compactions int64
	// DiskBytes is the size of the database's files.
	DiskBytes uint64
}

// CacheStats returns the store's cache figures. It reads Pebble's
// metrics, which takes Pebble's mutex briefly: not for hot paths.
func (s *Store) CacheStats() CacheStats {
	if s.closed.Load() {
		return CacheStats{}
	}
	m := s.db.Metrics()
	return CacheStats{
		ConfiguredBytes: s.cacheSize,
		CachedBytes:     m.BlockCache.Size,
		DirtyBytes:      int64(m.MemTable.Size),
		Hits:            m.BlockCache.Hits,
		Misses:          m.BlockCache.Misses,
		Flushes:         m.Flush.Count,
		Compactions:     m.Compact.Count,
		DiskBytes:       m.DiskSpaceUsage(),
	}
}

// WALStats are the write-ahead log's figures, the part of WiredTiger's
// serverStatus log section that Pebble's log can answer. Commits divided
// by Syncs is how many writes one sync carried (group commit).
type WALStats struct {
	// Commits counts the durable writes that waited for a log sync.
	Commits int64
	// Syncs counts the log's fdatasyncs, and SyncMicros the time they
	// took; both stay zero for a store on another file system than the
	// operating system's (tests).
	Syncs, SyncMicros int64
	// BytesWritten is what the log wrote, record framing included.
	BytesWritten uint64
}

// WALStats returns the log's figures; zero for an in-memory store. It
// reads Pebble's metrics, which takes Pebble's mutex briefly.
func (s *Store) WALStats() WALStats {
	if !s.durable || s.closed.Load() {
		return WALStats{}
	}
	st := WALStats{Commits: s.commits.Load(), BytesWritten: s.db.Metrics().WAL.BytesWritten}
	if s.wal != nil {
		st.Syncs = s.wal.syncs.Load()
		st.SyncMicros = s.wal.syncNanos.Load() / 1000
	}
	return st
}
