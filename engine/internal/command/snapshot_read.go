package command

import (
	"sync"
	"time"

	"go.mongodb.org/mongo-driver/v2/bson"

	"github.com/formworkdb/formwork/engine/internal/mongoerr"
	"github.com/formworkdb/formwork/engine/internal/storage"
)

// Snapshot reads outside transactions (readConcern {level: "snapshot"}
// on find, aggregate and distinct): the first read of a snapshot session
// gets the store as it is now and answers the cluster time it read at
// (atClusterTime); later reads name that time and see the same data.
// The store views are kept by cluster time, a bounded number of them for
// at most minSnapshotHistoryWindowInSeconds.
//
// Divergence: mongod can read at any cluster time within its history
// window; here only the times that earlier snapshot reads answered (or
// the present) can be read, and an older one answers SnapshotTooOld.

// maxSnapshotHistory bounds the store views kept for snapshot reads.
const maxSnapshotHistory = 32

// snapshotWindow is minSnapshotHistoryWindowInSeconds' default.
const snapshotWindow = 300 * time.Second

// snapshotCommands may read at readConcern snapshot outside a
// transaction.
var snapshotCommands = map[string]bool{"find": true, "aggregate": true, "distinct": true, "getMore": true, "explain": true}

// snapshotHistory holds the views by cluster time.
type snapshotHistory struct {
	mu sync.Mutex
	m  map[bson.Timestamp]*histEntry
}

type histEntry struct {
	view  *storage.Txn
	taken time.Time
}

// view returns the store view at cluster time at (the present when nil)
// and that time. It takes a reference the caller releases by closing
// the snapshots it takes from the view.
func (e *Env) snapshotView(at *bson.Timestamp) (*storage.Txn, bson.Timestamp, error) {
	h := &e.snapHist
	h.mu.Lock()
	defer h.mu.Unlock()
	now := time.Now()
	for ts, he := range h.m {
		if now.Sub(he.taken) > snapshotWindow {
			he.view.Abort()
			delete(h.m, ts)
		}
	}
	cur := e.clock.current()
	ts := cur
	if at != nil {
		ts = *at
	}
	if he := h.m[ts]; he != nil {
		return he.view, ts, nil
	}
	if at != nil && (at.T < cur.T || (at.T == cur.T && at.I < cur.I)) {
		return nil, ts, mongoerr.Newf(mongoerr.Code(239), "Read timestamp Timestamp(%d, %d) is older than the oldest available timestamp.", at.T, at.I)
	}
	v, err := e.Store.BeginTxn()
	if err != nil {
		return nil, ts, err
	}
	if h.m == nil {
		h.m = map[bson.Timestamp]*histEntry{}
	}
	if len(h.m) >= maxSnapshotHistory {
		var oldest bson.Timestamp
		var oe *histEntry
		for t, he := range h.m {
			if oe == nil || he.taken.Before(oe.taken) {
				oldest, oe = t, he
			}
		}
		oe.view.Abort()
		delete(h.m, oldest)
	}
	h.m[ts] = &histEntry{view: v, taken: now}
	return v, ts, nil
}

// closeSnapshotHistory releases the kept views (Env.Close).
func (e *Env) closeSnapshotHistory() {
	h := &e.snapHist
	h.mu.Lock()
	defer h.mu.Unlock()
	for ts, he := range h.m {
		he.view.Abort()
		delete(h.m, ts)
	}
}

// snapshotRead prepares r's snapshot read: r reads the view, and the
// reply will carry atClusterTime.
func (e *Env) snapshotRead(r *Request) error {
	if !snapshotCommands[r.Name] {
		return mongoerr.Newf(mongoerr.InvalidOptions, "Command %s does not support { readConcern: { level: \"snapshot\" } }", r.Name)
	}
	if r.Name == "getMore" || r.Name == "explain" {
		return nil
	}
	v, ts, err := e.snapshotView(r.Generic.AtClusterTime)
	if err != nil {
		return err
	}
	r.snapView, r.snapTime = v, ts
	return nil
}

// withAtClusterTime adds the snapshot read's atClusterTime to reply: in
// the cursor document of find and aggregate, at the top of distinct.
func (r *Request) withAtClusterTime(reply bson.D) bson.D {
	if r.snapView == nil {
		return reply
	}
	for i, el := range reply {
		if el.Key == "cursor" {
			if c, ok := el.Value.(bson.D); ok {
				reply[i].Value = append(c, bson.E{Key: "atClusterTime", Value: r.snapTime})
				return reply
			}
		}
	}
	return append(reply, bson.E{Key: "atClusterTime", Value: r.snapTime})
}
