package command

import "time"

// ReapSessions ends the sessions unused for localLogicalSessionTimeoutMinutes,
// as mongod's logical session cache does at each refresh: each one's open
// transaction is aborted (its documents released; a later
// commitTransaction answers NoSuchTransaction) and its cursors are
// killed. A session a command is using now is kept. It returns how many
// sessions it ended. Safe for concurrent use.
func (e *Env) ReapSessions(now time.Time) int {
	e.sessions.mu.Lock()
	gone := e.sessions.expire(now)
	e.sessions.mu.Unlock()
	n := 0
	for k, rec := range gone {
		if !e.reapSession(k) {
			// In use: it stays, as a checked-out session does in mongod.
			e.sessions.mu.Lock()
			if _, ok := e.sessions.m[k]; !ok {
				rec.lastUse = now
				e.sessions.m[k] = rec
			}
			e.sessions.mu.Unlock()
			continue
		}
		e.Cursors.killSession(k)
		n++
	}
	return n
}

// reapSession aborts the open transaction of the session with key k
// (lsidKey), unless a command holds the session: then it reports false.
func (e *Env) reapSession(k string) bool {
	e.retry.mu.Lock()
	s := e.retry.sessions[k]
	e.retry.mu.Unlock()
	if s == nil {
		return true
	}
	if !s.mu.TryLock() {
		return false
	}
	defer s.mu.Unlock()
	if s.tx != nil && s.tx.state == txnInProgress {
		e.log.Info("Aborting transaction of an expired session", "txnNumber", s.tx.number)
		e.abortTxn(s)
	}
	return true
}

// sessionTimeoutMinutes is localLogicalSessionTimeoutMinutes as hello and
// startSession report it: whole minutes, at least one (drivers take zero
// for "no sessions").
func (e *Env) sessionTimeoutMinutes() int32 {
	return int32(max(1, (e.sessions.timeout+time.Minute/2)/time.Minute))
}
