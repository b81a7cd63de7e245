package command

import (
	"context"
	"testing"
	"time"

	"go.mongodb.org/mongo-driver/v2/bson"
)

// TestDDLWaitsForTransaction: DDL on a collection an open transaction has
// written waits for it (maxTimeMS bounds the wait: MaxTimeMSExpired), and
// the TTL monitor skips the documents it holds until it ends; the
// transaction then commits instead of failing with WriteConflict.
func TestDDLWaitsForTransaction(t *testing.T) {
	e := newEnv(t)
	ctx := context.Background()
	old := time.Now().Add(-time.Hour)
	ok := func(what string, reply bson.Raw) {
		t.Helper()
		if reply.Lookup("ok").Double() != 1 {
			t.Fatalf("%s: %v", what, reply)
		}
	}
	ok("insert", run(t, e, ctx, bson.D{{Key: "insert", Value: "c"}, {Key: "documents", Value: bson.A{
		bson.D{{Key: "_id", Value: 1}, {Key: "at", Value: old}},
		bson.D{{Key: "_id", Value: 2}, {Key: "at", Value: old}},
	}}, {Key: "$db", Value: "d"}}))
	lsid := bson.D{{Key: "id", Value: bson.Binary{Subtype: 4, Data: []byte("ddlwait-01234567")}}}
	ok("update in txn", run(t, e, ctx, bson.D{{Key: "update", Value: "c"}, {Key: "updates", Value: bson.A{
		bson.D{{Key: "q", Value: bson.D{{Key: "_id", Value: 1}}}, {Key: "u", Value: bson.D{{Key: "$set", Value: bson.D{{Key: "x", Value: 1}}}}}},
	}}, {Key: "lsid", Value: lsid}, {Key: "txnNumber", Value: int64(1)}, {Key: "startTransaction", Value: true}, {Key: "autocommit", Value: false}, {Key: "$db", Value: "d"}}))

	code := func(reply bson.Raw) int32 {
		v, err := reply.LookupErr("code")
		if err != nil {
			return 0
		}
		return v.Int32()
	}
	for _, cmd := range []bson.D{
		{{Key: "drop", Value: "c"}},
		{{Key: "renameCollection", Value: "d.c"}, {Key: "to", Value: "d.c2"}},
		{{Key: "createIndexes", Value: "c"}, {Key: "indexes", Value: bson.A{bson.D{{Key: "key", Value: bson.D{{Key: "at", Value: 1}}}, {Key: "name", Value: "at_1"}, {Key: "expireAfterSeconds", Value: 60}}}}},
		{{Key: "collMod", Value: "c"}},
		{{Key: "dropIndexes", Value: "c"}, {Key: "index", Value: "*"}},
	} {
		db := "d"
		if cmd[0].Key == "renameCollection" {
			db = "admin"
		}
		cmd = append(cmd, bson.E{Key: "maxTimeMS", Value: 50}, bson.E{Key: "$db", Value: db})
		if r := run(t, e, ctx, cmd); code(r) != 50 {
			t.Errorf("%s while a transaction holds d.c: %v, want MaxTimeMSExpired", cmd[0].Key, r)
		}
	}
	// Another database's DDL does not wait.
	ok("other db", run(t, e, ctx, bson.D{{Key: "dropDatabase", Value: 1}, {Key: "maxTimeMS", Value: 50}, {Key: "$db", Value: "other"}}))

	// createIndexes waits until the transaction commits; a second
	// transaction then holds document 1, which the TTL monitor skips.
	commit := func(n int64) bson.Raw {
		return run(t, e, ctx, bson.D{{Key: "commitTransaction", Value: 1}, {Key: "lsid", Value: lsid}, {Key: "txnNumber", Value: n}, {Key: "autocommit", Value: false}, {Key: "$db", Value: "admin"}})
	}
	done := make(chan bson.Raw, 1)
	go func() {
		done <- run(t, e, ctx, bson.D{{Key: "createIndexes", Value: "c"}, {Key: "indexes", Value: bson.A{bson.D{{Key: "key", Value: bson.D{{Key: "at", Value: 1}}}, {Key: "name", Value: "at_1"}, {Key: "expireAfterSeconds", Value: 60}}}}, {Key: "$db", Value: "d"}})
	}()
	select {
	case r := <-done:
		t.Fatalf("createIndexes did not wait for the transaction: %v", r)
	case <-time.After(50 * time.Millisecond):
	}
	ok("commit 1", commit(1))
	ok("createIndexes after the commit", <-done)

	ok("update in txn 2", run(t, e, ctx, bson.D{{Key: "update", Value: "c"}, {Key: "updates", Value: bson.A{
		bson.D{{Key: "q", Value: bson.D{{Key: "_id", Value: 1}}}, {Key: "u", Value: bson.D{{Key: "$set", Value: bson.D{{Key: "x", Value: 2}}}}}},
	}}, {Key: "lsid", Value: lsid}, {Key: "txnNumber", Value: int64(2)}, {Key: "startTransaction", Value: true}, {Key: "autocommit", Value: false}, {Key: "$db", Value: "d"}}))
	n, err := e.ExpireTTL(ctx, time.Now())
	if err != nil || n != 1 {
		t.Fatalf("TTL pass while document 1 is held: %d deleted (%v), want 1", n, err)
	}
	ok("commit 2", commit(2))
	if n, err = e.ExpireTTL(ctx, time.Now()); err != nil || n != 1 {
		t.Fatalf("TTL pass after the commit: %d deleted (%v), want 1", n, err)
	}
}

// TestOutWaitsForTransaction: $out replacing a collection an open
// transaction has written waits for it, bounded by maxTimeMS, and leaves
// no temporary collection behind.
func TestOutWaitsForTransaction(t *testing.T) {
	e := newEnv(t)
	ctx := context.Background()
	run(t, e, ctx, bson.D{{Key: "insert", Value: "src"}, {Key: "documents", Value: bson.A{bson.D{{Key: "_id", Value: 1}}}}, {Key: "$db", Value: "d"}})
	run(t, e, ctx, bson.D{{Key: "insert", Value: "dst"}, {Key: "documents", Value: bson.A{bson.D{{Key: "_id", Value: 1}}}}, {Key: "$db", Value: "d"}})
	lsid := bson.D{{Key: "id", Value: bson.Binary{Subtype: 4, Data: []byte("outwait-01234567")}}}
	r := run(t, e, ctx, bson.D{{Key: "insert", Value: "dst"}, {Key: "documents", Value: bson.A{bson.D{{Key: "_id", Value: 2}}}},
		{Key: "lsid", Value: lsid}, {Key: "txnNumber", Value: int64(1)}, {Key: "startTransaction", Value: true}, {Key: "autocommit", Value: false}, {Key: "$db", Value: "d"}})
	if r.Lookup("ok").Double() != 1 {
		t.Fatal(r)
	}
	r = run(t, e, ctx, bson.D{{Key: "aggregate", Value: "src"}, {Key: "pipeline", Value: bson.A{bson.D{{Key: "$out", Value: "dst"}}}},
		{Key: "cursor", Value: bson.D{}}, {Key: "maxTimeMS", Value: 50}, {Key: "$db", Value: "d"}})
	if v, err := r.LookupErr("code"); err != nil || v.Int32() != 50 {
		t.Fatalf("$out over a held collection: %v, want MaxTimeMSExpired", r)
	}
	for _, c := range e.Store.Collections("d") {
		if c.NS != "d.src" && c.NS != "d.dst" {
			t.Errorf("left behind: %s", c.NS)
		}
	}
	r = run(t, e, ctx, bson.D{{Key: "commitTransaction", Value: 1}, {Key: "lsid", Value: lsid}, {Key: "txnNumber", Value: int64(1)}, {Key: "autocommit", Value: false}, {Key: "$db", Value: "admin"}})
	if r.Lookup("ok").Double() != 1 {
		t.Fatalf("commit: %v", r)
	}
}

// TestProfilerNeverMeetsTransaction: no transaction can write to
// system.profile (OperationNotSupportedInTransaction), so the profiler's
// plain Store.Write never meets a document a transaction holds and needs
// no wait (profile.go's writeProfile).
func TestProfilerNeverMeetsTransaction(t *testing.T) {
	e := newEnv(t)
	ctx := context.Background()
	lsid := bson.D{{Key: "id", Value: bson.Binary{Subtype: 4, Data: []byte("profile-01234567")}}}
	for i, cmd := range []bson.D{
		{{Key: "insert", Value: "system.profile"}, {Key: "documents", Value: bson.A{bson.D{{Key: "_id", Value: 2}}}}},
		{{Key: "delete", Value: "system.profile"}, {Key: "deletes", Value: bson.A{bson.D{{Key: "q", Value: bson.D{}}, {Key: "limit", Value: 0}}}}},
		{{Key: "update", Value: "system.profile"}, {Key: "updates", Value: bson.A{bson.D{{Key: "q", Value: bson.D{}}, {Key: "u", Value: bson.D{{Key: "$set", Value: bson.D{{Key: "x", Value: 1}}}}}}}}},
	} {
		cmd = append(cmd, bson.E{Key: "lsid", Value: lsid}, bson.E{Key: "txnNumber", Value: int64(i + 1)}, bson.E{Key: "startTransaction", Value: true}, bson.E{Key: "autocommit", Value: false}, bson.E{Key: "$db", Value: "d"})
		r := run(t, e, ctx, cmd)
		if v, err := r.LookupErr("code"); err != nil || v.Int32() != 263 {
			t.Errorf("%s on system.profile in a transaction: %v, want OperationNotSupportedInTransaction", cmd[0].Key, r)
		}
	}
}

// TestWaitedWriteProfiledOnce: an update that waited for a transaction
// and ran again has one profile entry per statement, not one per attempt.
func TestWaitedWriteProfiledOnce(t *testing.T) {
	e := newEnv(t)
	ctx := context.Background()
	c := e.NewConn("127.0.0.1:1", "x")
	dispatchOn(t, e, c, bson.D{{Key: "insert", Value: "c"}, {Key: "documents", Value: bson.A{bson.D{{Key: "_id", Value: 1}}}}, {Key: "$db", Value: "d"}})
	dispatchOn(t, e, c, bson.D{{Key: "profile", Value: 2}, {Key: "$db", Value: "d"}})
	lsid := bson.D{{Key: "id", Value: bson.Binary{Subtype: 4, Data: []byte("profwait-0123456")}}}
	upd := func(v int32) bson.D {
		return bson.D{{Key: "update", Value: "c"}, {Key: "updates", Value: bson.A{
			bson.D{{Key: "q", Value: bson.D{{Key: "_id", Value: 1}}}, {Key: "u", Value: bson.D{{Key: "$set", Value: bson.D{{Key: "v", Value: v}}}}}},
		}}}
	}
	r := run(t, e, ctx, append(upd(1), bson.E{Key: "lsid", Value: lsid}, bson.E{Key: "txnNumber", Value: int64(1)}, bson.E{Key: "startTransaction", Value: true}, bson.E{Key: "autocommit", Value: false}, bson.E{Key: "$db", Value: "d"}))
	if r.Lookup("ok").Double() != 1 {
		t.Fatal(r)
	}
	done := make(chan bson.Raw, 1)
	go func() {
		done <- dispatchOn(t, e, e.NewConn("127.0.0.1:2", "y"), append(upd(99), bson.E{Key: "$db", Value: "d"}))
	}()
	time.Sleep(50 * time.Millisecond)
	r = run(t, e, ctx, bson.D{{Key: "commitTransaction", Value: 1}, {Key: "lsid", Value: lsid}, {Key: "txnNumber", Value: int64(1)}, {Key: "autocommit", Value: false}, {Key: "$db", Value: "admin"}})
	if r.Lookup("ok").Double() != 1 {
		t.Fatalf("commit: %v", r)
	}
	if r := <-done; r.Lookup("nModified").Int32() != 1 {
		t.Fatalf("waited update: %v", r)
	}
	r = dispatchOn(t, e, c, bson.D{{Key: "find", Value: "system.profile"}, {Key: "filter", Value: bson.D{{Key: "op", Value: "update"}, {Key: "command.u.$set.v", Value: 99}}}, {Key: "$db", Value: "d"}})
	got, _ := r.Lookup("cursor", "firstBatch").Array().Values()
	if len(got) != 1 {
		t.Fatalf("profile entries of the waited update: %d, want 1: %v", len(got), r)
	}
}

// TestDDLDoesNotWaitForReadOnlyTransaction pins the Divergence in
// storage/txnddl.go: a transaction that has only read a collection does
// not hold it, so a drop runs at once (mongod would wait behind its
// intent lock).
func TestDDLDoesNotWaitForReadOnlyTransaction(t *testing.T) {
	e := newEnv(t)
	ctx := context.Background()
	run(t, e, ctx, bson.D{{Key: "insert", Value: "c"}, {Key: "documents", Value: bson.A{bson.D{{Key: "_id", Value: 1}}}}, {Key: "$db", Value: "d"}})
	lsid := bson.D{{Key: "id", Value: bson.Binary{Subtype: 4, Data: []byte("readonly-0123456")}}}
	r := run(t, e, ctx, bson.D{{Key: "find", Value: "c"}, {Key: "lsid", Value: lsid}, {Key: "txnNumber", Value: int64(1)}, {Key: "startTransaction", Value: true}, {Key: "autocommit", Value: false}, {Key: "$db", Value: "d"}})
	if r.Lookup("ok").Double() != 1 {
		t.Fatal(r)
	}
	if r := run(t, e, ctx, bson.D{{Key: "drop", Value: "c"}, {Key: "maxTimeMS", Value: 50}, {Key: "$db", Value: "d"}}); r.Lookup("ok").Double() != 1 {
		t.Fatalf("drop beside a read-only transaction: %v", r)
	}
}
