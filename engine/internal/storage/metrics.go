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
