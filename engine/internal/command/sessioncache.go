package command

import (
	"crypto/sha256"
	"sort"
	"sync"
	"time"

	"go.mongodb.org/mongo-driver/v2/bson"

	"github.com/formworkdb/formwork/engine/internal/mongoerr"
)

// sessionTimeout is localLogicalSessionTimeoutMinutes: a session unused
// for this long leaves the cache.
const sessionTimeout = 30 * time.Minute

// maxSessions is mongod's maxSessions default: more live sessions than
// this fail with TooManyLogicalSessions.
const maxSessions = 1_000_000

// unauthenticatedUID is the uid of sessions started without
// authentication: the SHA-256 of the empty user name.
var unauthenticatedUID = sha256.Sum256(nil)

// sessionCache is the logical session cache that $listLocalSessions
// reads: every command that carries an lsid refreshes its session, and
// endSessions removes it. Safe for concurrent use.
type sessionCache struct {
	mu sync.Mutex
	m  map[string]*sessionRecord
	// timeout is localLogicalSessionTimeoutMinutes (sessionTimeout unless
	// Config.SessionTimeout says otherwise); set before use.
	timeout time.Duration
	// max is maxSessions; tests lower it.
	max int
}

// sessionRecord is one cached session.
type sessionRecord struct {
	id      []byte // the session's UUID
	uid     []byte
	lastUse time.Time
}

func newSessionCache(timeout time.Duration) *sessionCache {
	if timeout <= 0 {
		timeout = sessionTimeout
	}
	return &sessionCache{m: map[string]*sessionRecord{}, timeout: timeout, max: maxSessions}
}

// touch records a use of the session lsid now. It fails with
// TooManyLogicalSessions when the cache is full of live sessions.
func (s *sessionCache) touch(lsid bson.Raw, now time.Time) error {
	idv, err := lsid.LookupErr("id")
	if err != nil {
		return nil
	}
	_, id, ok := idv.BinaryOK()
	if !ok {
		return nil
	}
	uid := unauthenticatedUID[:]
	if u, err := lsid.LookupErr("uid"); err == nil {
		if _, b, ok := u.BinaryOK(); ok {
			uid = b
		}
	}
	k := string(idv.Value)
	s.mu.Lock()
	defer s.mu.Unlock()
	if rec, ok := s.m[k]; ok {
		rec.lastUse = now
		return nil
	}
	// A full cache refuses the new session, as mongod's does: it evicts
	// nothing here (an evicted session's open transaction would keep its
	// documents held). Sessions past their timeout leave the cache only
	// through ReapSessions, which aborts their transactions first.
	if len(s.m) >= s.max {
		return mongoerr.New(mongoerr.TooManyLogicalSessions, "Unable to add session into the cache because the number of active sessions is too high")
	}
	s.m[k] = &sessionRecord{id: append([]byte(nil), id...), uid: append([]byte(nil), uid...), lastUse: now}
	return nil
}

// end removes the session lsid.
func (s *sessionCache) end(lsid bson.Raw) {
	idv, err := lsid.LookupErr("id")
	if err != nil {
		return
	}
	s.mu.Lock()
	delete(s.m, string(idv.Value))
	s.mu.Unlock()
}

// expire drops sessions unused for the timeout and returns them by key
// (lsidKey); s.mu is held.
func (s *sessionCache) expire(now time.Time) map[string]*sessionRecord {
	var gone map[string]*sessionRecord
	for k, rec := range s.m {
		if now.Sub(rec.lastUse) > s.timeout {
			delete(s.m, k)
			if gone == nil {
				gone = map[string]*sessionRecord{}
			}
			gone[k] = rec
		}
	}
	return gone
}

// list returns the live sessions in $listLocalSessions' shape, oldest use
// first.
func (s *sessionCache) list(now time.Time) []bson.Raw {
	s.mu.Lock()
	recs := make([]sessionRecord, 0, len(s.m))
	for _, rec := range s.m {
		// Expired ones are left to ReapSessions, which ends them.
		if now.Sub(rec.lastUse) <= s.timeout {
			recs = append(recs, *rec)
		}
	}
	s.mu.Unlock()
	sort.Slice(recs, func(i, j int) bool { return recs[i].lastUse.Before(recs[j].lastUse) })
	out := make([]bson.Raw, 0, len(recs))
	for _, rec := range recs {
		d, err := bson.Marshal(bson.D{
			{Key: "_id", Value: bson.D{
				{Key: "id", Value: bson.Binary{Subtype: bson.TypeBinaryUUID, Data: rec.id}},
				{Key: "uid", Value: bson.Binary{Data: rec.uid}},
			}},
			{Key: "lastUse", Value: bson.NewDateTimeFromTime(rec.lastUse)},
		})
		if err == nil {
			out = append(out, d)
		}
	}
	return out
}
