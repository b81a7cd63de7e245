package engine_test

import (
	"context"
	"errors"
	"net"
	"testing"
	"time"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo"
	"go.mongodb.org/mongo-driver/v2/mongo/options"

	"github.com/formworkdb/formwork/engine"
)

func TestShutdownCommandClosesEngine(t *testing.T) {
	ctx := ctxT(t)
	dir := t.TempDir()
	db, err := engine.Open(ctx, engine.Options{Dir: dir})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	served := make(chan error, 1)
	go func() { served <- db.Serve(l) }()
	c, err := mongo.Connect(options.Client().ApplyURI("mongodb://" + l.Addr().String() + "/?directConnection=true").SetServerSelectionTimeout(5 * time.Second))
	if err != nil {
		t.Fatal(err)
	}
	defer func() {
		dctx, cancel := context.WithTimeout(context.Background(), time.Second)
		defer cancel()
		c.Disconnect(dctx)
	}()
	coll := c.Database("test").Collection("s")
	if _, err := coll.InsertOne(ctx, bson.D{{Key: "_id", Value: 1}}); err != nil {
		t.Fatal(err)
	}
	// shutdown is admin only.
	wantCode(t, c.Database("test").RunCommand(ctx, bson.D{{Key: "shutdown", Value: 1}}).Err(), 13, "Unauthorized")
	// A block of 300ms in flight finishes before the engine closes.
	slow := make(chan error, 1)
	if err := c.Database("admin").RunCommand(ctx, bson.D{{Key: "configureFailPoint", Value: "failCommand"}, {Key: "mode", Value: "off"}}).Err(); err == nil {
		t.Fatal("configureFailPoint enabled without EnableTestCommands")
	}
	go func() {
		_, err := c.Database("test").Collection("s").InsertOne(ctx, bson.D{{Key: "_id", Value: 2}, {Key: "pad", Value: make([]byte, 1<<20)}})
		slow <- err
	}()
	t0 := time.Now()
	err = c.Database("admin").RunCommand(ctx, bson.D{{Key: "shutdown", Value: 1}}).Err()
	t.Logf("shutdown answered after %v", time.Since(t0))
	if err == nil || !mongo.IsNetworkError(err) {
		t.Fatalf("shutdown: got %v, want the connection closed without a reply", err)
	}
	select {
	case err := <-served:
		if !errors.Is(err, engine.ErrClosed) {
			t.Fatalf("Serve returned %v, want ErrClosed", err)
		}
	case <-time.After(20 * time.Second):
		t.Fatal("engine still serving after shutdown")
	}
	t.Logf("closed after %v", time.Since(t0))
	<-slow
	// Serve returns once the listener is closed, while the storage may
	// still be closing: Close waits for the close the shutdown started.
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	// The storage closed cleanly: it opens again with the first write.
	db2, err := engine.Open(ctx, engine.Options{Dir: dir})
	if err != nil {
		t.Fatal(err)
	}
	db2.Close()
}
