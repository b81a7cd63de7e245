package storage

import "context"

// CompactCollection runs a manual compaction over c's documents and index
// entries, so deleted and overwritten entries stop taking space, and
// returns the bytes its key ranges shrank by on disk (estimated; 0 when
// they did not shrink). Reads and writes continue meanwhile.
func (s *Store) CompactCollection(ctx context.Context, c *Collection) (int64, error) {
	if s.closed.Load() {
		return 0, ErrClosed
	}
	ranges := [][2][]byte{
		{recordPrefix(c.ID), recordPrefix(c.ID + 1)},
		{collIndexPrefix(c.ID), collIndexPrefix(c.ID + 1)},
	}
	usage := func() uint64 {
		var n uint64
		for _, r := range ranges {
			u, err := s.db.EstimateDiskUsage(r[0], r[1])
			if err == nil {
				n += u
			}
		}
		return n
	}
	before := usage()
	for _, r := range ranges {
		if err := s.db.Compact(ctx, r[0], r[1], true); err != nil {
			return 0, err
		}
	}
	after := usage()
	if after >= before {
		return 0, nil
	}
	return int64(before - after), nil
}
