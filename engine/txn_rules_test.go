package engine_test

import (
	"testing"

	"go.mongodb.org/mongo-driver/v2/bson"
)

// TestTxnConcernRules checks, on the wire, the read and write concern
// rules of transactions and the errors of statements that name no open
// transaction.
func TestTxnConcernRules(t *testing.T) {
	edb, _ := newDB(t)
	rc := dialRaw(t, edb)
	lsid := bson.D{{Key: "id", Value: bson.Binary{Subtype: 4, Data: []byte("rules-0123456789")[:16]}}}
	stmt := func(n int64, start bool, extra ...bson.E) bson.D {
		d := bson.D{{Key: "find", Value: "c"}, {Key: "lsid", Value: lsid}, {Key: "txnNumber", Value: n}, {Key: "autocommit", Value: false}}
		if start {
			d = append(d, bson.E{Key: "startTransaction", Value: true})
		}
		d = append(d, extra...)
		return append(d, bson.E{Key: "$db", Value: "test"})
	}
	code := func(reply bson.Raw) int32 {
		if v, err := reply.LookupErr("code"); err == nil {
			return v.Int32()
		}
		return 0
	}
	cases := []struct {
		name string
		cmd  bson.D
		want int32
	}{
		{"linearizable at start", stmt(1, true, bson.E{Key: "readConcern", Value: bson.D{{Key: "level", Value: "linearizable"}}}), 72},
		{"snapshot at start", stmt(2, true, bson.E{Key: "readConcern", Value: bson.D{{Key: "level", Value: "snapshot"}}}), 0},
		{"readConcern after start", stmt(2, false, bson.E{Key: "readConcern", Value: bson.D{{Key: "level", Value: "local"}}}), 72},
		{"writeConcern on a statement", stmt(3, true, bson.E{Key: "writeConcern", Value: bson.D{{Key: "w", Value: 1}}}), 72},
		{"continue unknown", stmt(9, false), 251},
		{"older number", stmt(1, true), 225},
		{"start twice", stmt(9, true), 0},
		{"start same again", stmt(9, true), 50911},
	}
	for _, c := range cases {
		reply := rc.run(c.cmd)
		if got := code(reply); got != c.want {
			t.Errorf("%s: code %d, want %d (%v)", c.name, got, c.want, reply)
		}
		if c.want == 251 {
			labels, _ := reply.Lookup("errorLabels").Array().Values()
			if len(labels) != 1 || labels[0].StringValue() != "TransientTransactionError" {
				t.Errorf("%s: labels %v, want TransientTransactionError", c.name, labels)
			}
		}
	}
	commit := bson.D{{Key: "commitTransaction", Value: 1}, {Key: "lsid", Value: lsid}, {Key: "txnNumber", Value: int64(9)}, {Key: "autocommit", Value: false}, {Key: "$db", Value: "admin"}}
	for i := 0; i < 2; i++ {
		if r := rc.run(commit); r.Lookup("ok").Double() != 1 {
			t.Fatalf("commit %d: %v", i, r)
		}
	}
	abort := bson.D{{Key: "abortTransaction", Value: 1}, {Key: "lsid", Value: lsid}, {Key: "txnNumber", Value: int64(9)}, {Key: "autocommit", Value: false}, {Key: "$db", Value: "admin"}}
	if r := rc.run(abort); code(r) != 256 {
		t.Fatalf("abort after commit: %v, want TransactionCommitted", r)
	}
	after := stmt(9, false)
	if r := rc.run(after); code(r) != 256 {
		t.Fatalf("statement after commit: %v, want TransactionCommitted", r)
	}
}

// TestSnapshotReadAtClusterTime: a snapshot read answers atClusterTime,
// a later read at that time sees the data of then, and a time older than
// any kept view answers SnapshotTooOld (the Divergence in
// snapshot_read.go).
func TestSnapshotReadAtClusterTime(t *testing.T) {
	edb, _ := newDB(t)
	rc := dialRaw(t, edb)
	rc.run(bson.D{{Key: "insert", Value: "s"}, {Key: "documents", Value: bson.A{bson.D{{Key: "_id", Value: 1}, {Key: "x", Value: 1}}}}, {Key: "$db", Value: "test"}})
	find := func(rcn bson.D) bson.Raw {
		return rc.run(bson.D{{Key: "find", Value: "s"}, {Key: "readConcern", Value: rcn}, {Key: "$db", Value: "test"}})
	}
	first := find(bson.D{{Key: "level", Value: "snapshot"}})
	at, ati, ok := first.Lookup("cursor", "atClusterTime").TimestampOK()
	if !ok {
		t.Fatalf("no atClusterTime: %v", first)
	}
	rc.run(bson.D{{Key: "update", Value: "s"}, {Key: "updates", Value: bson.A{bson.D{{Key: "q", Value: bson.D{}}, {Key: "u", Value: bson.D{{Key: "$set", Value: bson.D{{Key: "x", Value: 2}}}}}}}}, {Key: "$db", Value: "test"}})
	again := find(bson.D{{Key: "level", Value: "snapshot"}, {Key: "atClusterTime", Value: bson.Timestamp{T: at, I: ati}}})
	docs, _ := again.Lookup("cursor", "firstBatch").Array().Values()
	if len(docs) != 1 || docs[0].Document().Lookup("x").Int32() != 1 {
		t.Fatalf("read at the first time: %v", again)
	}
	old := find(bson.D{{Key: "level", Value: "snapshot"}, {Key: "atClusterTime", Value: bson.Timestamp{T: 1, I: 1}}})
	if c, _ := old.Lookup("code").Int32OK(); c != 239 {
		t.Fatalf("old time: %v, want SnapshotTooOld", old)
	}
	ins := rc.run(bson.D{{Key: "insert", Value: "s"}, {Key: "documents", Value: bson.A{bson.D{}}}, {Key: "readConcern", Value: bson.D{{Key: "level", Value: "snapshot"}}}, {Key: "$db", Value: "test"}})
	if c, _ := ins.Lookup("code").Int32OK(); c != 72 {
		t.Fatalf("insert at snapshot: %v, want InvalidOptions", ins)
	}
}
