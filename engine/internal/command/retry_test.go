package command

import (
	"testing"
	"time"

	"go.mongodb.org/mongo-driver/v2/bson"
)

// TestRetryCacheSweepsIdleSessions: idle sessions without an open
// transaction leave the in-memory cache once enough new ones arrive.
func TestRetryCacheSweepsIdleSessions(t *testing.T) {
	c := newRetryCache(nil)
	lsid := func(i int) bson.Raw {
		b, _ := bson.Marshal(bson.D{{Key: "id", Value: bson.Binary{Subtype: 4, Data: []byte{byte(i), byte(i >> 8), 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0}}}})
		return b
	}
	old := c.session(lsid(0))
	old.lastUse = time.Now().Add(-2 * sessionTimeout)
	open := c.session(lsid(1))
	open.tx = &txnRun{state: txnInProgress}
	open.lastUse = time.Now().Add(-2 * sessionTimeout)
	for i := 2; i < retrySweepEvery+2; i++ {
		c.session(lsid(i))
	}
	c.mu.Lock()
	_, oldKept := c.sessions[lsidKey(lsid(0))]
	_, openKept := c.sessions[lsidKey(lsid(1))]
	c.mu.Unlock()
	if oldKept || !openKept {
		t.Fatalf("after the sweep: idle kept %v, open transaction kept %v", oldKept, openKept)
	}
}
