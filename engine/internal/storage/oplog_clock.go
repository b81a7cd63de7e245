package storage

import (
	"sync"
	"time"

	"go.mongodb.org/mongo-driver/v2/bson"
)

// Clock hands out cluster times: the ts of oplog entries and the
// operationTime and $clusterTime that replies report. It never goes back,
// also across restarts (Open starts it after the newest oplog entry), so
// an operationTime a client saw orders every oplog entry it could have
// caused. A zero Clock is ready to use; it is safe for concurrent use.
type Clock struct {
	mu   sync.Mutex
	last bson.Timestamp
}

// Tick returns a new cluster time, later than every one handed out before.
func (c *Clock) Tick() bson.Timestamp {
	c.mu.Lock()
	defer c.mu.Unlock()
	t := uint32(time.Now().Unix())
	if t > c.last.T {
		c.last = bson.Timestamp{T: t, I: 1}
	} else {
		c.last.I++
		if c.last.I == 0 { // the increment wrapped: borrow the next second
			c.last = bson.Timestamp{T: c.last.T + 1, I: 1}
		}
	}
	return c.last
}

// Current returns the latest cluster time handed out (a fresh one when
// none was).
func (c *Clock) Current() bson.Timestamp {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.last.T == 0 {
		c.last = bson.Timestamp{T: uint32(time.Now().Unix()), I: 1}
	}
	return c.last
}

// advance moves the clock to at least ts.
func (c *Clock) advance(ts bson.Timestamp) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if tsAfter(ts, c.last) {
		c.last = ts
	}
}

// tsAfter reports whether a is later than b.
func tsAfter(a, b bson.Timestamp) bool { return a.T > b.T || (a.T == b.T && a.I > b.I) }

// PackTS returns ts as the oplog's record id: seconds in the high 32 bits,
// the increment in the low ones, so that record order is time order.
func PackTS(ts bson.Timestamp) int64 { return int64(uint64(ts.T)<<32 | uint64(ts.I)) }

// UnpackTS is the inverse of PackTS.
func UnpackTS(rid int64) bson.Timestamp {
	return bson.Timestamp{T: uint32(uint64(rid) >> 32), I: uint32(rid)}
}
