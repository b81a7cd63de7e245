package command

import (
	"context"
	"testing"
	"time"

	"go.mongodb.org/mongo-driver/v2/bson"
)

// TestSessionCacheFull: a full session cache refuses a new session with
// TooManyLogicalSessions and evicts none, so an open transaction of a
// cached session keeps running; reaping the expired sessions aborts that
// transaction, releasing its documents, and makes room.
func TestSessionCacheFull(t *testing.T) {
	e := newEnv(t)
	e.sessions.max = 2
	ctx := context.Background()
	lsid := func(c byte) bson.D {
		id := make([]byte, 16)
		id[0] = c
		return bson.D{{Key: "id", Value: bson.Binary{Subtype: 4, Data: id}}}
	}
	run(t, e, ctx, bson.D{{Key: "insert", Value: "c"}, {Key: "documents", Value: bson.A{bson.D{{Key: "_id", Value: 1}}}}, {Key: "$db", Value: "d"}})
	update := func(extra ...bson.E) bson.Raw {
		cmd := bson.D{{Key: "update", Value: "c"}, {Key: "updates", Value: bson.A{
			bson.D{{Key: "q", Value: bson.D{{Key: "_id", Value: 1}}}, {Key: "u", Value: bson.D{{Key: "$inc", Value: bson.D{{Key: "n", Value: 1}}}}}},
		}}}
		return run(t, e, ctx, append(append(cmd, extra...), bson.E{Key: "$db", Value: "d"}))
	}
	r := update(bson.E{Key: "lsid", Value: lsid('a')}, bson.E{Key: "txnNumber", Value: int64(1)}, bson.E{Key: "startTransaction", Value: true}, bson.E{Key: "autocommit", Value: false})
	if r.Lookup("ok").Double() != 1 {
		t.Fatal(r)
	}
	if r := run(t, e, ctx, bson.D{{Key: "find", Value: "c"}, {Key: "lsid", Value: lsid('b')}, {Key: "$db", Value: "d"}}); r.Lookup("ok").Double() != 1 {
		t.Fatal(r)
	}
	r = run(t, e, ctx, bson.D{{Key: "find", Value: "c"}, {Key: "lsid", Value: lsid('c')}, {Key: "$db", Value: "d"}})
	if v, err := r.LookupErr("code"); err != nil || v.Int32() != 261 || r.Lookup("codeName").StringValue() != "TooManyLogicalSessions" {
		t.Fatalf("third session: %v, want TooManyLogicalSessions", r)
	}
	// Session a was not evicted: its transaction still holds document 1.
	if r := update(bson.E{Key: "maxTimeMS", Value: 30}); r.Lookup("code").Int32() != 50 {
		t.Fatalf("plain update of a held document: %v, want MaxTimeMSExpired", r)
	}
	if n := e.ReapSessions(time.Now().Add(e.sessions.timeout + time.Minute)); n != 2 {
		t.Fatalf("reaped %d sessions, want 2", n)
	}
	// The reaped transaction was aborted: its document is free.
	if r := update(bson.E{Key: "maxTimeMS", Value: 1000}); r.Lookup("ok").Double() != 1 || r.Lookup("nModified").Int32() != 1 {
		t.Fatalf("update after the reap: %v", r)
	}
	if r := run(t, e, ctx, bson.D{{Key: "find", Value: "c"}, {Key: "lsid", Value: lsid('c')}, {Key: "$db", Value: "d"}}); r.Lookup("ok").Double() != 1 {
		t.Fatalf("third session after the reap: %v", r)
	}
	r = run(t, e, ctx, bson.D{{Key: "commitTransaction", Value: 1}, {Key: "lsid", Value: lsid('a')}, {Key: "txnNumber", Value: int64(1)}, {Key: "autocommit", Value: false}, {Key: "$db", Value: "admin"}})
	if v, err := r.LookupErr("code"); err != nil || v.Int32() != 251 {
		t.Fatalf("commit of the reaped transaction: %v, want NoSuchTransaction", r)
	}
}
