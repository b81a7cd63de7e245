package engine_test

import (
	"testing"
	"time"

	"go.mongodb.org/mongo-driver/v2/bson"
)

func TestFsyncLockBlocksWritesNotReads(t *testing.T) {
	_, db := newDB(t)
	ctx := ctxT(t)
	admin := db.Client().Database("admin")
	coll := db.Collection("fs")
	if _, err := coll.InsertOne(ctx, bson.D{{Key: "_id", Value: 1}}); err != nil {
		t.Fatal(err)
	}
	var plain bson.M
	if err := admin.RunCommand(ctx, bson.D{{Key: "fsync", Value: 1}}).Decode(&plain); err != nil || plain["numFiles"] == nil {
		t.Fatalf("fsync: %v %v", plain, err)
	}
	var res struct {
		LockCount int64 `bson:"lockCount"`
		Info      string
	}
	if err := admin.RunCommand(ctx, bson.D{{Key: "fsync", Value: 1}, {Key: "lock", Value: true}}).Decode(&res); err != nil || res.LockCount != 1 {
		t.Fatalf("fsyncLock: %+v %v", res, err)
	}
	if err := admin.RunCommand(ctx, bson.D{{Key: "fsync", Value: 1}, {Key: "lock", Value: true}}).Decode(&res); err != nil || res.LockCount != 2 {
		t.Fatalf("second fsyncLock: %+v %v", res, err)
	}
	done := make(chan error, 1)
	go func() {
		_, err := coll.InsertOne(ctx, bson.D{{Key: "_id", Value: 2}})
		done <- err
	}()
	// Reads continue while the write waits.
	if n, err := coll.CountDocuments(ctx, bson.D{}); err != nil || n != 1 {
		t.Fatalf("read under fsyncLock: %d %v", n, err)
	}
	unlock := func(want int64) {
		t.Helper()
		if err := admin.RunCommand(ctx, bson.D{{Key: "fsyncUnlock", Value: 1}}).Decode(&res); err != nil || res.LockCount != want {
			t.Fatalf("fsyncUnlock: %+v %v", res, err)
		}
	}
	unlock(1)
	select {
	case err := <-done:
		t.Fatalf("insert finished under fsyncLock: %v", err)
	case <-time.After(200 * time.Millisecond):
	}
	unlock(0)
	select {
	case err := <-done:
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("insert still blocked after fsyncUnlock")
	}
	wantCode(t, admin.RunCommand(ctx, bson.D{{Key: "fsyncUnlock", Value: 1}}).Err(), 20, "IllegalOperation")
	wantCode(t, db.RunCommand(ctx, bson.D{{Key: "fsync", Value: 1}}).Err(), 13, "Unauthorized")
}

func TestFsyncLockReleasedOnClose(t *testing.T) {
	edb, db := newDB(t)
	ctx := ctxT(t)
	if err := db.Client().Database("admin").RunCommand(ctx, bson.D{{Key: "fsync", Value: 1}, {Key: "lock", Value: true}}).Err(); err != nil {
		t.Fatal(err)
	}
	go db.Collection("x").InsertOne(ctx, bson.D{})
	time.Sleep(50 * time.Millisecond)
	closed := make(chan error, 1)
	go func() { closed <- edb.Close() }()
	select {
	case <-closed:
	case <-time.After(10 * time.Second):
		t.Fatal("Close hangs under fsyncLock")
	}
}

func TestReplSetGetConfig(t *testing.T) {
	_, db := newDB(t)
	ctx := ctxT(t)
	var res struct {
		Config struct {
			ID      string `bson:"_id"`
			Version int32
			Members []struct {
				ID   int32 `bson:"_id"`
				Host string
			}
			Settings bson.M
		}
	}
	if err := db.Client().Database("admin").RunCommand(ctx, bson.D{{Key: "replSetGetConfig", Value: 1}}).Decode(&res); err != nil {
		t.Fatal(err)
	}
	if res.Config.ID != "formwork" || len(res.Config.Members) != 1 || res.Config.Members[0].Host == "" || res.Config.Settings["replicaSetId"] == nil {
		t.Fatalf("config %+v", res.Config)
	}
	wantCode(t, db.RunCommand(ctx, bson.D{{Key: "replSetGetConfig", Value: 1}}).Err(), 13, "Unauthorized")
}
