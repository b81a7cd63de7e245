package storage

import (
	"context"
	"fmt"

	"github.com/cockroachdb/pebble/v2"

	"github.com/formworkdb/formwork/engine/internal/admission"
)

// Write runs fn with a Writer while holding the store's write lock, then
// commits the batch. If fn returns an error nothing it staged is applied.
//
// On disk, Write returns only once the batch is synced to the WAL (I3),
// but it waits for that sync after releasing the write lock: the batch is
// applied (and visible) under the lock, so the next writer reads it, and
// the sync happens outside it, so concurrent writers share one fsync —
// Pebble's WAL writer syncs everything queued when a sync starts (group
// commit, I8). Write is safe for concurrent use; fn runs on the calling
// goroutine and must not call Write.
func (s *Store) Write(fn func(w *Writer) error) error {
	return s.write(context.Background(), fn, false)
}

// WriteContext is Write for an operation that holds an admission ticket
// in ctx (package admission): it gives the ticket back while it waits for
// the write lock, holds the lock and waits for its WAL sync. ctx does not
// cancel the write.
func (s *Store) WriteContext(ctx context.Context, fn func(w *Writer) error) error {
	return s.write(ctx, fn, false)
}

// write is Write; wait makes the Writer stop at documents held by open
// transactions (WriteWait). The operation's admission ticket in ctx, if
// any, is given back from before it waits for the write lock until its
// WAL sync is done: waiting uses no CPU, writers blocked on the lock
// (fsyncLock holds it for as long as a backup takes) must not keep the
// tickets from reads, the sync must gather every writer that committed
// meanwhile (group commit) however few tickets there are, and the one
// writer holding the lock must never queue for a ticket.
func (s *Store) write(ctx context.Context, fn func(w *Writer) error, wait bool) error {
	resume := admission.Suspend(ctx)
	defer resume()
	b, err := s.apply(fn, wait)
	if b == nil {
		return err
	}
	defer s.syncing.Done()
	defer b.Close()
	err = b.SyncWait()
	if err != nil {
		return s.wrapCommitErr(err, true)
	}
	return nil
}

// apply runs fn and applies its batch under the write lock. It returns
// the batch when the caller must still wait for its WAL sync (and then
// call syncing.Done and close it), or nil when the write is finished.
func (s *Store) apply(fn func(w *Writer) error, wait bool) (*pebble.Batch, error) {
	if err := s.disk.admit(); err != nil {
		return nil, err
	}
	s.wmu.Lock()
	defer s.wmu.Unlock()
	if s.closed.Load() {
		return nil, ErrClosed
	}
	if err := s.disk.admit(); err != nil {
		return nil, err // the disk filled while this writer waited
	}
	w := &Writer{s: s, b: s.db.NewIndexedBatch(), pending: map[string]*Collection{}, early: map[string]bool{}}
	w.wait.on = wait
	defer w.publishOplog()
	err := fn(w)
	if w.wait.blocked != nil {
		err = &heldError{t: w.wait.blocked}
	}
	if err == nil {
		err = w.flushOplog()
	}
	w.closeProbes()
	if err != nil {
		w.b.Close()
		return nil, err
	}
	if len(w.early) > 0 {
		early := make(map[string]*Collection, len(w.early))
		for ns := range w.early {
			if c := w.pending[ns]; c != nil {
				early[ns] = c
			}
		}
		s.publish(early)
	}
	if w.b.Empty() {
		w.b.Close()
		if len(w.pending) > 0 {
			s.publish(w.pending)
		}
		return nil, nil
	}
	if !s.durable {
		err := w.b.Commit(pebble.NoSync)
		w.b.Close()
		if err != nil {
			return nil, fmt.Errorf("storage: commit: %w", err)
		}
		if len(w.pending) > 0 {
			s.publish(w.pending)
		}
		return nil, nil
	}
	if err := s.db.ApplyNoSyncWait(w.b, pebble.Sync); err != nil {
		w.b.Close()
		return nil, s.wrapCommitErr(err, true)
	}
	if len(w.pending) > 0 {
		s.publish(w.pending)
	}
	s.commits.Add(1)
	s.syncing.Add(1)
	return w.b, nil
}
