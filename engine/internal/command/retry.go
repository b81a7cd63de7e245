package command

import (
	"context"
	"sync"
	"time"

	"go.mongodb.org/mongo-driver/v2/bson"

	"github.com/formworkdb/formwork/engine/internal/mongoerr"
	"github.com/formworkdb/formwork/engine/internal/storage"
)

// retryCache remembers, per logical session, the newest retryable write
// or transaction and its outcome, so that a retry of the same txnNumber
// is answered without executing the write again (I2). Like mongod's
// config.transactions it keeps only the latest txnNumber of each
// session, and it is durable: each retryable write stages the session's
// record in its own batch (marked incomplete), and the reply follows as
// soon as the command finishes; a committed transaction's record commits
// with it. After a restart a session's record is read back on first use.
// A retry whose write committed but whose reply was lost to a crash
// answers IncompleteTransactionHistory instead of executing again.
type retryCache struct {
	mu       sync.Mutex
	sessions map[string]*retrySession
	store    *storage.Store
	// added counts sessions added since the last sweep of idle ones.
	added int
}

// retrySweepEvery is how many new sessions trigger a sweep of the idle
// ones: sessions unused for logicalSessionTimeoutMinutes without an open
// transaction leave memory (their durable record stays and is read back
// on next use), so the cache does not grow without bound.
const retrySweepEvery = 1024

// retrySession is one session's newest txnNumber and what became of it.
type retrySession struct {
	mu    sync.Mutex // held while a command of this session runs
	txn   int64
	done  bool
	reply bson.D
	// incomplete marks a write whose record survived without its reply.
	incomplete bool
	// loaded is set once the durable record was read.
	loaded bool
	// tx is the session's multi-document transaction, when txn names one.
	tx *txnRun
	// lastUse is when a command last looked the session up (guarded by
	// retryCache.mu).
	lastUse time.Time
}

// durableSession is the durable form of a session's newest txnNumber.
type durableSession struct {
	TxnNumber int64    `bson:"txnNum"`
	Committed bool     `bson:"committed,omitempty"`
	Reply     bson.Raw `bson:"reply,omitempty"`
}

// put stages the record in w's batch.
func (rec durableSession) put(w *storage.Writer, key string) error {
	b, err := bson.Marshal(rec)
	if err != nil {
		return err
	}
	return w.PutSession(key, b)
}

func newRetryCache(st *storage.Store) *retryCache {
	return &retryCache{sessions: map[string]*retrySession{}, store: st}
}

func lsidKey(lsid bson.Raw) string {
	v, err := lsid.LookupErr("id")
	if err != nil {
		return string(lsid)
	}
	return string(v.Value)
}

func (c *retryCache) session(lsid bson.Raw) *retrySession {
	k := lsidKey(lsid)
	c.mu.Lock()
	defer c.mu.Unlock()
	now := time.Now()
	s := c.sessions[k]
	if s == nil {
		c.added++
		if c.added >= retrySweepEvery {
			c.added = 0
			c.sweep(now)
		}
		s = &retrySession{txn: -1}
		c.sessions[k] = s
	}
	s.lastUse = now
	return s
}

// sweep drops sessions idle for sessionTimeout that no command holds and
// that have no open transaction; c.mu is held.
func (c *retryCache) sweep(now time.Time) {
	for k, s := range c.sessions {
		if now.Sub(s.lastUse) <= sessionTimeout || !s.mu.TryLock() {
			continue
		}
		if s.tx == nil || s.tx.state != txnInProgress {
			delete(c.sessions, k)
		}
		s.mu.Unlock()
	}
}

// load reads s's durable record once; s.mu is held.
func (c *retryCache) load(s *retrySession, lsid bson.Raw) {
	if s.loaded || c.store == nil {
		return
	}
	s.loaded = true
	raw, err := c.store.Session(lsidKey(lsid))
	if err != nil || raw == nil {
		return
	}
	var rec durableSession
	if bson.Unmarshal(raw, &rec) != nil || rec.TxnNumber <= s.txn {
		return
	}
	s.txn = rec.TxnNumber
	switch {
	case rec.Committed:
		s.tx = &txnRun{number: rec.TxnNumber, state: txnCommitted}
	case rec.Reply != nil:
		var d bson.D
		if bson.Unmarshal(rec.Reply, &d) == nil {
			s.done, s.reply = true, d
		}
	default:
		s.incomplete = true
	}
}

// end forgets the session's in-memory state; its durable record stays,
// as config.transactions outlives endSessions.
func (c *retryCache) end(lsid bson.Raw) {
	c.mu.Lock()
	delete(c.sessions, lsidKey(lsid))
	c.mu.Unlock()
}

func (c *retryCache) run(ctx context.Context, r *Request, h handler) (bson.D, error) {
	s := c.session(r.Generic.LSID)
	s.mu.Lock()
	defer s.mu.Unlock()
	c.load(s, r.Generic.LSID)
	txn := *r.Generic.TxnNumber
	switch {
	case txn < s.txn:
		return nil, mongoerr.Newf(mongoerr.TransactionTooOld, "Retryable write with txnNumber %d is prohibited on session because a newer retryable write with txnNumber %d has already started on this session.", txn, s.txn)
	case txn == s.txn && s.tx != nil && s.tx.number == txn:
		return nil, mongoerr.Newf(mongoerr.Code(50911), "Cannot start a retryable write at given transaction number %d a transaction with the same number is in state %s", txn, s.stateName())
	case txn == s.txn && s.done:
		return s.reply, nil
	case txn == s.txn && s.incomplete:
		return nil, mongoerr.Newf(mongoerr.Code(217), "Incomplete history detected for transaction %d on session %s.", txn, lsidString(r.Generic.LSID))
	}
	r.Env.abortTxn(s)
	key := lsidKey(r.Generic.LSID)
	r.retryMark = func(w *storage.Writer) error { return durableSession{TxnNumber: txn}.put(w, key) }
	reply, err := h(ctx, r)
	if err != nil {
		// A failed command wrote nothing; a retry may run it again.
		s.txn, s.done, s.incomplete = txn, false, false
		return nil, err
	}
	s.txn, s.done, s.reply, s.incomplete = txn, true, reply, false
	if c.store != nil {
		if rb, merr := bson.Marshal(reply); merr == nil {
			if b, merr := bson.Marshal(durableSession{TxnNumber: txn, Reply: rb}); merr == nil {
				_ = c.store.PutSessionNoSync(key, b)
			}
		}
	}
	return reply, nil
}
