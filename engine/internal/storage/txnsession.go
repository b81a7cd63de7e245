package storage

import (
	"github.com/cockroachdb/pebble/v2"
	"go.mongodb.org/mongo-driver/v2/bson"
)

// prefixSession keys the session records: 'S' sessionID → BSON, the
// newest retryable write or transaction of a logical session and its
// outcome, as mongod's config.transactions keeps them, so that a retry
// after a restart is answered rather than executed again.
const prefixSession = 'S'

func sessionKey(id string) []byte { return append([]byte{prefixSession}, id...) }

// PutSession stages the record of session id in the Writer's batch, so
// that it commits atomically with the write it describes.
func (w *Writer) PutSession(id string, rec bson.Raw) error {
	return w.b.Set(sessionKey(id), rec, nil)
}

// PutSessionNoSync writes the record of session id on its own without
// waiting for the WAL sync: the next synced commit makes it durable.
func (s *Store) PutSessionNoSync(id string, rec bson.Raw) error {
	s.wmu.Lock()
	defer s.wmu.Unlock()
	if s.closed.Load() {
		return ErrClosed
	}
	return s.db.Set(sessionKey(id), rec, pebble.NoSync)
}

// Session returns the record of session id, or nil.
func (s *Store) Session(id string) (bson.Raw, error) {
	if s.closed.Load() {
		return nil, ErrClosed
	}
	return pointGet(s.db, sessionKey(id))
}
