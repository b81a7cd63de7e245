package storage

import (
	"context"
	"errors"

	"github.com/formworkdb/formwork/engine/internal/admission"
)

// DDL (drop, dropDatabase, renameCollection, collMod, createIndexes and
// dropIndexes on an existing collection) takes an exclusive collection
// lock in mongod, so it waits behind any open transaction that holds
// locks on the collection, until that transaction ends or the DDL's
// maxTimeMS runs out. WriteExclusive is that wait: it runs fn only once no
// open transaction holds a document (or unique index key) of a collection
// the lock function names.
//
// Divergence: mongod's transactions also hold intent locks on the
// collections they only read, which block DDL too; here only the
// collections a transaction has written are held (a read-only
// transaction reads its snapshot, which a concurrent drop cannot
// disturb). New transactions that touch a collection while a DDL waits
// for it are not made to wait (mongod's maxTransactionLockRequestTimeoutMillis).

// WriteExclusive is Write for DDL: before fn runs, it waits (without the
// write lock) while an open transaction holds a document of a collection
// for which lock reports true, then checks again. fn runs once, under the
// write lock, when none is held. It returns ctx's error when ctx ends
// first.
func (s *Store) WriteExclusive(ctx context.Context, lock func(c *Collection) bool, fn func(w *Writer) error) error {
	return s.RetryExclusive(ctx, func() error {
		return s.Write(func(w *Writer) error {
			if err := w.Exclusive(lock); err != nil {
				return err
			}
			return fn(w)
		})
	})
}

// Exclusive returns, inside a Write's fn (or any function run under the
// write lock, such as BeginIndexBuild's prepare), the error that makes
// RetryExclusive wait when an open transaction holds a document of a
// collection for which lock reports true; nil when none does. fn must
// then return it, so that nothing it staged commits.
func (w *Writer) Exclusive(lock func(c *Collection) bool) error {
	if t := w.s.holderOf(lock); t != nil {
		return &heldError{t: t}
	}
	return nil
}

// RetryExclusive runs attempt, and again each time it fails because an
// open transaction holds what it writes (Writer.Exclusive, or a Writer
// that waits), once that transaction has ended. It
// returns attempt's other results, or ctx's error when ctx ends first.
func (s *Store) RetryExclusive(ctx context.Context, attempt func() error) error {
	for {
		err := attempt()
		var he *heldError
		if !errors.As(err, &he) {
			return err
		}
		// The wait gives back the operation's admission ticket: the
		// transaction may need one to finish.
		resume := admission.Suspend(ctx)
		select {
		case <-he.t.done:
			resume()
		case <-ctx.Done():
			resume()
			return ctx.Err()
		}
	}
}

// holderOf returns an open transaction holding a document or unique index
// key of a published collection lock names, or nil. The write lock is
// held.
func (s *Store) holderOf(lock func(c *Collection) bool) *Txn {
	if len(s.txns.held) == 0 {
		return nil
	}
	ids := map[uint64]bool{}
	for _, c := range s.catalog() {
		if lock(c) {
			ids[c.ID] = true
		}
	}
	if len(ids) == 0 {
		return nil
	}
	for k, t := range s.txns.held {
		// Record and index keys both carry the collection id after
		// their one-byte prefix.
		if len(k) >= 9 && ids[beUint64([]byte(k[1:9]))] {
			return t
		}
	}
	return nil
}

// Held reports whether record rid of collection c is held by an open
// transaction: written by it, not yet committed or aborted. Call it inside
// a Write's fn (the write lock is held). The TTL monitor skips such a
// document, as mongod's does on a write conflict, and deletes it on a
// later pass.
func (w *Writer) Held(c *Collection, rid int64) bool {
	if len(w.s.txns.held) == 0 {
		return false
	}
	return w.s.txns.held[string(recordKey(c.ID, rid))] != nil
}
