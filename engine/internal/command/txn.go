package command

import (
	"context"
	"time"

	"go.mongodb.org/mongo-driver/v2/bson"

	"github.com/formworkdb/formwork/engine/internal/mongoerr"
	"github.com/formworkdb/formwork/engine/internal/storage"
)

// txnState is where a session's multi-document transaction stands.
type txnState int

const (
	txnInProgress txnState = iota
	txnCommitted
	txnAborted
)

// txnRun is one multi-document transaction of a session (storage.Txn
// does the data work). Its fields are guarded by the session's mutex,
// which every command of the session holds while it runs.
type txnRun struct {
	number  int64
	state   txnState
	st      *storage.Txn
	started time.Time
	// timer aborts the transaction when transactionLifetimeLimitSeconds
	// pass (mongod's periodic reaper does it there).
	timer *time.Timer
	// readConcern is the level the first statement asked for.
	readConcern string
}

// txnCommandName reports whether a command belongs to a transaction's
// control: commitTransaction and abortTransaction.
func txnControl(name string) bool { return name == "commitTransaction" || name == "abortTransaction" }

// inTxn reports whether r runs inside a multi-document transaction.
func (r *Request) inTxn() bool { return r.Generic.Autocommit != nil }

// txnRun wraps h so that it runs inside r's transaction: txnEnter
// before, txnExit after, the session locked in between.
func (e *Env) txnRun(h handler) handler {
	return func(ctx context.Context, r *Request) (bson.D, error) {
		unlock, err := e.txnEnter(r)
		if err != nil {
			return nil, err
		}
		if unlock != nil {
			defer unlock()
		}
		reply, err := h(ctx, r)
		e.txnExit(r, reply, err)
		return reply, err
	}
}

// txnEnter checks r's transaction fields, locks its session and begins
// or continues the transaction r names (mongod's beginOrContinue). On
// success the caller must call the returned function when r finishes.
func (e *Env) txnEnter(r *Request) (func(), error) {
	g := &r.Generic
	if g.Autocommit != nil && *g.Autocommit {
		return nil, mongoerr.New(mongoerr.InvalidOptions, "Specifying autocommit=true is not allowed.")
	}
	if g.startGiven && !g.StartTransaction {
		return nil, mongoerr.New(mongoerr.InvalidOptions, "Specifying startTransaction=false is not allowed.")
	}
	if g.Autocommit == nil {
		if g.StartTransaction {
			return nil, mongoerr.New(mongoerr.InvalidOptions, "startTransaction requires autocommit=false to also be specified")
		}
		if txnControl(r.Name) {
			return nil, mongoerr.Newf(mongoerr.InvalidOptions, "%s must be run within a transaction", r.Name)
		}
		return nil, nil
	}
	if e.Config.Standalone {
		return nil, mongoerr.New(mongoerr.IllegalOperation, "Transaction numbers are only allowed on a replica set member or mongos")
	}
	if g.LSID == nil {
		return nil, mongoerr.New(mongoerr.InvalidOptions, "Transaction number requires a session ID to also be specified")
	}
	if g.TxnNumber == nil {
		return nil, mongoerr.New(mongoerr.InvalidOptions, "'autocommit' field requires a transaction number to also be specified")
	}
	if !txnAllowed[r.Name] {
		if r.Name == "count" {
			return nil, mongoerr.New(mongoerr.OperationNotSupportedInTransaction, "Cannot run 'count' in a multi-document transaction. Please see http://dochub.mongodb.org/core/transaction-count for a recommended alternative.")
		}
		return nil, mongoerr.Newf(mongoerr.OperationNotSupportedInTransaction, "Cannot run '%s' in a multi-document transaction.", r.Body.Index(0).Key())
	}
	if err := txnNamespaceAllowed(r); err != nil {
		return nil, err
	}
	if g.WriteConcern.set && !txnControl(r.Name) {
		return nil, mongoerr.New(mongoerr.InvalidOptions, "Cannot set write concern after starting a transaction.")
	}
	s := e.retry.session(g.LSID)
	s.mu.Lock()
	e.retry.load(s, g.LSID)
	if err := e.beginOrContinue(r, s); err != nil {
		s.mu.Unlock()
		return nil, err
	}
	r.txn = s.tx
	return s.mu.Unlock, nil
}

// beginOrContinue starts the transaction r names or finds it; s.mu is
// held.
func (e *Env) beginOrContinue(r *Request, s *retrySession) error {
	g := &r.Generic
	n := *g.TxnNumber
	if n < s.txn {
		return mongoerr.Newf(mongoerr.TransactionTooOld, "Cannot start transaction %d on session %s because a newer transaction %d has already started.", n, lsidString(g.LSID), s.txn)
	}
	if g.StartTransaction {
		if n == s.txn {
			return mongoerr.Newf(mongoerr.Code(50911), "Cannot start a transaction at given transaction number %d a transaction with the same number is in state %s", n, s.stateName())
		}
		if err := txnReadConcernAllowed(g); err != nil {
			return err
		}
		e.abortTxn(s)
		st, err := e.Store.BeginTxn()
		if err != nil {
			return err
		}
		st.Limit = int(e.params.Int("transactionSizeLimitBytes"))
		tx := &txnRun{number: n, st: st, started: time.Now(), readConcern: g.ReadConcernLevel}
		limit := time.Duration(e.params.Int("transactionLifetimeLimitSeconds")) * time.Second
		if limit > 0 {
			tx.timer = time.AfterFunc(limit, func() { e.expireTxn(s, tx) })
		}
		s.txn, s.done, s.reply, s.incomplete = n, false, nil, false
		s.tx = tx
		return nil
	}
	if n > s.txn || s.tx == nil || s.tx.number != n {
		return mongoerr.Newf(mongoerr.NoSuchTransaction, "Given transaction number %d does not match any in-progress transactions. The active transaction number is %d", n, s.txn)
	}
	if g.readConcernGiven {
		return mongoerr.New(mongoerr.InvalidOptions, "Only the first command in a transaction may specify a readConcern")
	}
	switch s.tx.state {
	case txnAborted:
		return mongoerr.Newf(mongoerr.NoSuchTransaction, "Transaction with { txnNumber: %d } has been aborted.", n)
	case txnCommitted:
		if !txnControl(r.Name) {
			return mongoerr.Newf(mongoerr.TransactionCommitted, "Transaction with { txnNumber: %d } has been committed.", n)
		}
	}
	return nil
}

// stateName names the transaction state for error messages.
func (s *retrySession) stateName() string {
	if s.tx == nil || s.tx.number != s.txn {
		return "TxnState::kExecutedRetryableWrite"
	}
	switch s.tx.state {
	case txnCommitted:
		return "TxnState::kCommitted"
	case txnAborted:
		return "TxnState::kAbortedWithoutPrepare"
	}
	return "TxnState::kInProgress"
}

// abortTxn aborts s's transaction when one is in progress; s.mu is held.
func (e *Env) abortTxn(s *retrySession) {
	tx := s.tx
	if tx == nil || tx.state != txnInProgress {
		return
	}
	tx.state = txnAborted
	if tx.timer != nil {
		tx.timer.Stop()
	}
	tx.st.Abort()
	e.Cursors.killTxn(tx)
}

// expireTxn aborts tx when it is still s's open transaction, as mongod
// does once transactionLifetimeLimitSeconds pass.
func (e *Env) expireTxn(s *retrySession, tx *txnRun) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.tx == tx && tx.state == txnInProgress {
		e.log.Info("Aborting transaction because it has been running for longer than 'transactionLifetimeLimitSeconds'", "txnNumber", tx.number, "code", mongoerr.TransactionExceededLifetimeLimitSeconds.Name())
		e.abortTxn(s)
	}
}

// txnExit ends r's statement in its transaction: a statement that failed
// (or reported write errors) aborts the transaction, as mongod does.
func (e *Env) txnExit(r *Request, reply bson.D, err error) {
	tx := r.txn
	if tx == nil || txnControl(r.Name) || tx.state != txnInProgress {
		return
	}
	failed := err != nil
	for _, el := range reply {
		if el.Key == "writeErrors" {
			failed = true
		}
	}
	if failed {
		if s := e.retry.session(r.Generic.LSID); s.tx == tx {
			e.abortTxn(s)
		}
	}
}

// lsidString renders an lsid the way mongod's messages show it.
func lsidString(lsid bson.Raw) string {
	v, err := lsid.LookupErr("id")
	if err != nil {
		return lsid.String()
	}
	if _, b, ok := v.BinaryOK(); ok && len(b) == 16 {
		const hx = "0123456789abcdef"
		out := make([]byte, 0, 36)
		for i, c := range b {
			if i == 4 || i == 6 || i == 8 || i == 10 {
				out = append(out, '-')
			}
			out = append(out, hx[c>>4], hx[c&15])
		}
		return string(out) + " - 47DEQpj8HBSa+/TImW+5JCeuQeRkm5NMpJWZG3hSuFU= -  - "
	}
	return v.String()
}

// write runs fn as r's write: staged in r's transaction, or committed at
// once (with the session record of a retryable write in the same batch).
// Outside a transaction, a write that meets a document an open
// transaction holds waits for it to end and runs fn again from scratch
// (storage.Store.WriteWait), until ctx ends: fn must reset what it
// reports at its start.
func (r *Request) write(ctx context.Context, fn func(w *storage.Writer) error) error {
	if r.txn != nil {
		return r.txn.st.Stage(fn)
	}
	if r.retryMark != nil {
		mark := r.retryMark
		return r.Env.Store.WriteWait(ctx, func(w *storage.Writer) error {
			if err := fn(w); err != nil {
				return err
			}
			return mark(w)
		})
	}
	return r.Env.Store.WriteWait(ctx, fn)
}

// collection returns ns as r sees it: in r's transaction, with what it
// created, or the published catalog's.
func (r *Request) collection(ns string) *storage.Collection {
	if r.txn != nil {
		return r.txn.st.Collection(ns)
	}
	return r.Env.Store.Collection(ns)
}

// storeSnapshot returns the view r reads: its transaction's, or a new
// snapshot of the store.
func (r *Request) storeSnapshot() *storage.Snapshot {
	if r.txn != nil {
		return r.txn.st.Snapshot()
	}
	if r.snapView != nil {
		return r.snapView.Snapshot()
	}
	return r.Env.Store.Snapshot()
}

// endSessionTxn aborts the open transaction of session lsid, as
// endSessions and killSessions do.
func (e *Env) endSessionTxn(lsid bson.Raw) {
	s := e.retry.session(lsid)
	s.mu.Lock()
	e.abortTxn(s)
	s.mu.Unlock()
}

// abortAllTxns aborts every open transaction (killAllSessions, Close).
func (e *Env) abortAllTxns() {
	e.retry.mu.Lock()
	all := make([]*retrySession, 0, len(e.retry.sessions))
	for _, s := range e.retry.sessions {
		all = append(all, s)
	}
	e.retry.mu.Unlock()
	for _, s := range all {
		s.mu.Lock()
		e.abortTxn(s)
		s.mu.Unlock()
	}
}
