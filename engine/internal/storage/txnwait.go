package storage

import (
	"context"
	"errors"
)

// A write outside any transaction that meets a document (or unique index
// key) held by an open transaction waits for that transaction to end and
// then runs again, as mongod's write-conflict retry loop does (T3). The
// wait happens in Store.WriteWait, after the write lock is released and
// the blocked attempt's batch discarded; a transaction's own statements
// never wait (they answer WriteConflict at once), so no cycle of waiters
// can form.

// errHeld is what a waiting Writer's Insert, Update or Delete returns when
// the document or key it would write is held by an open transaction. The
// whole attempt is discarded whatever fn makes of it (a write error, say).
var errHeld = errors.New("storage: document held by an open transaction")

// heldError carries the transaction a discarded attempt must wait for.
type heldError struct{ t *Txn }

func (e *heldError) Error() string { return errHeld.Error() }

// writeWait is a Writer's part in waiting: whether it waits at all, and
// the transaction that blocked it.
type writeWait struct {
	on      bool
	blocked *Txn
}

// heldBy reports whether record or unique-index key k is held by an open
// transaction, when the Writer waits for those; it notes the holder. The
// write lock is held.
func (w *Writer) heldBy(k []byte) bool {
	if !w.wait.on || len(w.s.txns.held) == 0 {
		return false
	}
	t := w.s.txns.held[string(k)]
	if t == nil {
		return false
	}
	w.wait.blocked = t
	return true
}

// heldRecord is heldBy for the record rid of collection collID.
func (w *Writer) heldRecord(collID uint64, rid int64) bool {
	if !w.wait.on || len(w.s.txns.held) == 0 {
		return false
	}
	return w.heldBy(recordKey(collID, rid))
}

// WriteWait is Write for a write outside any transaction that waits for
// the open transactions holding what it writes: each time fn meets such a
// document, the attempt is discarded, WriteWait waits (without the write
// lock) until that transaction commits or aborts, and runs fn again. fn
// must therefore be safe to run more than once, starting from scratch.
// It returns ctx's error when ctx ends first.
func (s *Store) WriteWait(ctx context.Context, fn func(w *Writer) error) error {
	return s.RetryExclusive(ctx, func() error { return s.write(ctx, fn, true) })
}
