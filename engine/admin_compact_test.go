package engine_test

import (
	"testing"

	"go.mongodb.org/mongo-driver/v2/bson"

	"github.com/formworkdb/formwork/engine"
	"github.com/formworkdb/formwork/internal/testenv"
)

func TestCompact(t *testing.T) {
	_, c := testenv.Engine(t, engine.Options{Dir: t.TempDir()})
	ctx := ctxT(t)
	db := c.Database("test")
	coll := db.Collection("big")
	docs := make([]any, 2000)
	for i := range docs {
		docs[i] = bson.D{{Key: "_id", Value: i}, {Key: "pad", Value: make([]byte, 2048)}}
	}
	if _, err := coll.InsertMany(ctx, docs); err != nil {
		t.Fatal(err)
	}
	if err := c.Database("admin").RunCommand(ctx, bson.D{{Key: "fsync", Value: 1}}).Err(); err != nil {
		t.Fatal(err)
	}
	if _, err := coll.DeleteMany(ctx, bson.D{}); err != nil {
		t.Fatal(err)
	}
	wantCode(t, db.RunCommand(ctx, bson.D{{Key: "compact", Value: "big"}}).Err(), 20, "IllegalOperation")
	var res struct {
		BytesFreed int64 `bson:"bytesFreed"`
	}
	if err := db.RunCommand(ctx, bson.D{{Key: "compact", Value: "big"}, {Key: "force", Value: true}}).Decode(&res); err != nil {
		t.Fatal(err)
	}
	if res.BytesFreed <= 0 {
		t.Errorf("bytesFreed %d after deleting 4 MB", res.BytesFreed)
	}
	if n, err := coll.CountDocuments(ctx, bson.D{}); err != nil || n != 0 {
		t.Fatalf("count after compact: %d %v", n, err)
	}
	wantCode(t, db.RunCommand(ctx, bson.D{{Key: "compact", Value: "missing"}, {Key: "force", Value: true}}).Err(), 26, "NamespaceNotFound")
	if err := db.CreateView(ctx, "v", "big", bson.A{}); err != nil {
		t.Fatal(err)
	}
	wantCode(t, db.RunCommand(ctx, bson.D{{Key: "compact", Value: "v"}, {Key: "force", Value: true}}).Err(), 166, "CommandNotSupportedOnView")
}
