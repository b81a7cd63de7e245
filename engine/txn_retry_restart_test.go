package engine_test

import (
	"context"
	"testing"

	"go.mongodb.org/mongo-driver/v2/bson"

	"github.com/formworkdb/formwork/engine"
)

// TestRetryableWriteSurvivesRestart: a retryable write retried after the
// engine restarted is answered with the first reply and not executed
// again, and a transaction committed before the restart answers a
// retried commitTransaction with ok.
func TestRetryableWriteSurvivesRestart(t *testing.T) {
	dir := t.TempDir()
	ctx := context.Background()
	lsid := bson.D{{Key: "id", Value: bson.Binary{Subtype: 4, Data: []byte("0123456789abcdef")}}}
	upsert := bson.D{
		{Key: "update", Value: "c"},
		{Key: "updates", Value: bson.A{bson.D{{Key: "q", Value: bson.D{{Key: "_id", Value: 1}}}, {Key: "u", Value: bson.D{{Key: "$inc", Value: bson.D{{Key: "n", Value: 1}}}}}, {Key: "upsert", Value: true}}}},
		{Key: "lsid", Value: lsid},
		{Key: "txnNumber", Value: int64(7)},
		{Key: "$db", Value: "test"},
	}
	lsid2 := bson.D{{Key: "id", Value: bson.Binary{Subtype: 4, Data: []byte("fedcba9876543210")}}}
	txnInsert := bson.D{
		{Key: "insert", Value: "c"},
		{Key: "documents", Value: bson.A{bson.D{{Key: "_id", Value: 2}}}},
		{Key: "lsid", Value: lsid2}, {Key: "txnNumber", Value: int64(3)},
		{Key: "startTransaction", Value: true}, {Key: "autocommit", Value: false},
		{Key: "$db", Value: "test"},
	}
	commit := bson.D{
		{Key: "commitTransaction", Value: 1},
		{Key: "lsid", Value: lsid2}, {Key: "txnNumber", Value: int64(3)}, {Key: "autocommit", Value: false},
		{Key: "$db", Value: "admin"},
	}

	edb, err := engine.Open(ctx, engine.Options{Dir: dir})
	if err != nil {
		t.Fatal(err)
	}
	rc := dialRaw(t, edb)
	first := rc.run(upsert)
	if first.Lookup("n").Int32() != 1 || first.Lookup("upserted").Type != bson.TypeArray {
		t.Fatalf("first reply %v", first)
	}
	if r := rc.run(txnInsert); r.Lookup("ok").Double() != 1 {
		t.Fatalf("insert in transaction: %v", r)
	}
	if r := rc.run(commit); r.Lookup("ok").Double() != 1 {
		t.Fatalf("commit: %v", r)
	}
	edb.Close()

	edb, err = engine.Open(ctx, engine.Options{Dir: dir})
	if err != nil {
		t.Fatal(err)
	}
	defer edb.Close()
	rc = dialRaw(t, edb)
	again := rc.run(upsert)
	if again.Lookup("n").Int32() != 1 || again.Lookup("upserted").Type != bson.TypeArray {
		t.Fatalf("retry after restart: %v", again)
	}
	find := rc.run(bson.D{{Key: "find", Value: "c"}, {Key: "filter", Value: bson.D{{Key: "_id", Value: 1}}}, {Key: "$db", Value: "test"}})
	docs, _ := find.Lookup("cursor", "firstBatch").Array().Values()
	if len(docs) != 1 || docs[0].Document().Lookup("n").Int32() != 1 {
		t.Fatalf("write executed again after restart: %v", find)
	}
	if r := rc.run(commit); r.Lookup("ok").Double() != 1 {
		t.Fatalf("retried commit after restart: %v", r)
	}
	// An older txnNumber is still refused.
	upsert[3].Value = int64(6)
	if r := rc.run(upsert); r.Lookup("code").Int32() != 225 {
		t.Fatalf("older txnNumber after restart: %v", r)
	}
}
