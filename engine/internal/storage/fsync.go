package storage

// Flush writes the memtables to sorted tables on disk, as mongod's fsync
// command forces a checkpoint. Acknowledged writes are already durable in
// the WAL; Flush makes the table files alone a complete copy for a file
// backup. An in-memory store flushes to memory.
func (s *Store) Flush() error {
	if s.closed.Load() {
		return ErrClosed
	}
	return s.db.Flush()
}

// LockWrites blocks writers until UnlockWrites (fsyncLock): it waits for
// the write in progress and the syncs of committed writes, so that the
// files on disk hold every acknowledged write and do not change until
// unlocked. Reads continue. Each LockWrites is paired with one
// UnlockWrites, which may run on another goroutine.
func (s *Store) LockWrites() error {
	s.wmu.Lock()
	if s.closed.Load() {
		s.wmu.Unlock()
		return ErrClosed
	}
	s.syncing.Wait()
	if err := s.db.Flush(); err != nil {
		s.wmu.Unlock()
		return err
	}
	return nil
}

// UnlockWrites lets writers blocked by LockWrites continue.
func (s *Store) UnlockWrites() { s.wmu.Unlock() }
