package engine_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo"
	"go.mongodb.org/mongo-driver/v2/mongo/options"
)

// TestTxnLargeOplogChain: a transaction of ~20 MB is logged as a chain of
// applyOps entries (partialTxn entries linked by prevOpTime, then the
// last with count), none over 16 MB, and a change stream sees each of
// its inserts once, in order, with the transaction's lsid, txnNumber and
// one clusterTime.
func TestTxnLargeOplogChain(t *testing.T) {
	t.Parallel()
	_, db := newDB(t)
	// 20 MB through the race detector takes a while.
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	next := func(cs *mongo.ChangeStream) bson.M {
		t.Helper()
		if !cs.Next(ctx) {
			t.Fatalf("no event: %v", cs.Err())
		}
		return asM(t, cs.Current)
	}
	c := db.Collection("large")
	if err := db.CreateCollection(ctx, "large"); err != nil {
		t.Fatal(err)
	}
	cs := mustWatch(t, c, nil)
	const n, size = 40, 512 << 10
	pad := strings.Repeat("x", size)
	sess, err := db.Client().StartSession()
	if err != nil {
		t.Fatal(err)
	}
	defer sess.EndSession(ctx)
	_, err = sess.WithTransaction(ctx, func(ctx context.Context) (any, error) {
		for i := range n {
			if _, err := c.InsertOne(ctx, bson.D{{Key: "_id", Value: i}, {Key: "pad", Value: pad}}); err != nil {
				return nil, err
			}
		}
		return nil, nil
	})
	if err != nil {
		t.Fatal(err)
	}

	oplog := db.Client().Database("local").Collection("oplog.rs")
	cur, err := oplog.Find(ctx, bson.D{{Key: "op", Value: "c"}, {Key: "o.applyOps", Value: bson.D{{Key: "$exists", Value: true}}}},
		options.Find().SetSort(bson.D{{Key: "$natural", Value: 1}}))
	if err != nil {
		t.Fatal(err)
	}
	var entries []bson.Raw
	for cur.Next(ctx) {
		entries = append(entries, append(bson.Raw(nil), cur.Current...))
	}
	if err := cur.Err(); err != nil {
		t.Fatal(err)
	}
	if len(entries) < 2 {
		t.Fatalf("%d applyOps entries, want a chain of several", len(entries))
	}
	total := 0
	var prevTS bson.Timestamp
	for i, e := range entries {
		if len(e) > 16<<20+16<<10 {
			t.Fatalf("entry %d is %d bytes", i, len(e))
		}
		pt, pi := e.Lookup("prevOpTime", "ts").Timestamp()
		if (bson.Timestamp{T: pt, I: pi}) != prevTS {
			t.Fatalf("entry %d prevOpTime %v, want %v", i, e.Lookup("prevOpTime"), prevTS)
		}
		term := e.Lookup("prevOpTime", "t").Int64()
		if (i == 0) != (term == -1) {
			t.Fatalf("entry %d prevOpTime.t = %d", i, term)
		}
		partial, _ := e.Lookup("o", "partialTxn").BooleanOK()
		last := i == len(entries)-1
		if partial == last {
			t.Fatalf("entry %d partialTxn = %v", i, partial)
		}
		if last {
			if got := e.Lookup("o", "count").Int64(); got != n {
				t.Fatalf("last entry count = %d, want %d", got, n)
			}
		}
		if e.Lookup("txnNumber").Int64() == 0 || e.Lookup("lsid").Type != bson.TypeEmbeddedDocument {
			t.Fatalf("entry %d lacks the transaction's lsid or txnNumber", i)
		}
		ops, _ := e.Lookup("o", "applyOps").Array().Values()
		total += len(ops)
		st, si := e.Lookup("ts").Timestamp()
		prevTS = bson.Timestamp{T: st, I: si}
	}
	if total != n {
		t.Fatalf("the chain holds %d operations, want %d", total, n)
	}

	var ct any
	var tok10 bson.Raw
	for i := range n {
		ev := next(cs)
		wantType(t, ev, "insert")
		if id := ev["documentKey"].(bson.M)["_id"]; id != int32(i) {
			t.Fatalf("event %d is for _id %v", i, id)
		}
		if ev["txnNumber"] == nil || ev["lsid"] == nil {
			t.Fatalf("event %d without the transaction's fields", i)
		}
		if i == 10 {
			tok10 = cs.ResumeToken()
		}
		if i == 0 {
			ct = ev["clusterTime"]
		} else if ev["clusterTime"] != ct {
			t.Fatalf("event %d clusterTime %v, want %v", i, ev["clusterTime"], ct)
		}
	}
	if ct != prevTS {
		t.Fatalf("events at %v, want the last entry's ts %v", ct, prevTS)
	}
	// Nothing more: each insert came once.
	if _, err := c.InsertOne(ctx, bson.D{{Key: "_id", Value: "after"}}); err != nil {
		t.Fatal(err)
	}
	ev := next(cs)
	if ev["documentKey"].(bson.M)["_id"] != "after" {
		t.Fatalf("event after the transaction: %v", ev["documentKey"])
	}
	// A stream resumed after one of the transaction's events starts at
	// the next one, though its partialTxn entries lie before the resume
	// point.
	rs := mustWatch(t, c, nil, options.ChangeStream().SetResumeAfter(tok10))
	if ev := next(rs); ev["documentKey"].(bson.M)["_id"] != int32(11) {
		t.Fatalf("resumed at %v, want _id 11", ev["documentKey"])
	}
}
