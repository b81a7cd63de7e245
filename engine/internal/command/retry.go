package command

import (
	"context"
	"sync"

	"go.mongodb.org/mongo-driver/v2/bson"

	"github.com/formworkdb/formwork/engine/internal/mongoerr"
)

// retryCache remembers, per logical session, the newest retryable write
// and its reply, so that a retry of the same txnNumber is answered without
// executing the write again (I2). Like mongod's config.transactions it
// keeps only the latest txnNumber of each session.
//
// Divergence: the cache lives in memory, so a retry that arrives after a
// restart executes again.
type retryCache struct {
	mu       sync.Mutex
	sessions map[string]*retrySession
}

type retrySession struct {
	mu    sync.Mutex // held while a write of this session runs
	txn   int64
	done  bool
	reply bson.D
}

func newRetryCache() *retryCache { return &retryCache{sessions: map[string]*retrySession{}} }

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
	s := c.sessions[k]
	if s == nil {
		s = &retrySession{txn: -1}
		c.sessions[k] = s
	}
	return s
}

func (c *retryCache) end(lsid bson.Raw) {
	c.mu.Lock()
	delete(c.sessions, lsidKey(lsid))
	c.mu.Unlock()
}

func (c *retryCache) run(ctx context.Context, r *Request, h handler) (bson.D, error) {
	s := c.session(r.Generic.LSID)
	s.mu.Lock()
	defer s.mu.Unlock()
	txn := *r.Generic.TxnNumber
	switch {
	case txn < s.txn:
		return nil, mongoerr.Newf(mongoerr.TransactionTooOld, "Retryable write with txnNumber %d is prohibited on session because a newer retryable write with txnNumber %d has already started on this session.", txn, s.txn)
	case txn == s.txn && s.done:
		return s.reply, nil
	}
	reply, err := h(ctx, r)
	if err != nil {
		// A failed command wrote nothing; a retry may run it again.
		s.txn, s.done = txn, false
		return nil, err
	}
	s.txn, s.done, s.reply = txn, true, reply
	return reply, nil
}
