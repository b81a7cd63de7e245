package engine_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo"
	"go.mongodb.org/mongo-driver/v2/mongo/options"

	"github.com/formworkdb/formwork/engine"
	"github.com/formworkdb/formwork/internal/testenv"
)

func insertN(t *testing.T, c *mongo.Collection, from, to int) {
	t.Helper()
	for i := from; i < to; i++ {
		if _, err := c.InsertOne(ctxT(t), bson.D{{Key: "_id", Value: i}}); err != nil {
			t.Fatal(err)
		}
	}
}

func docID(t *testing.T, ev bson.M) any {
	t.Helper()
	return ev["documentKey"].(bson.M)["_id"]
}

// TestChangeStreamResume resumes with resumeAfter, startAfter and
// startAtOperationTime and checks which events come next.
func TestChangeStreamResume(t *testing.T) {
	t.Parallel()
	_, db := newDB(t)
	ctx := ctxT(t)
	c := db.Collection("res")
	start := operationTime(t, db)
	cs := mustWatch(t, c, nil, options.ChangeStream().SetMaxAwaitTime(100*time.Millisecond))
	insertN(t, c, 1, 4)
	nextEvent(t, cs)
	second := nextEvent(t, cs)
	tok, _ := bson.Marshal(second["_id"])

	after := mustWatch(t, c, nil, options.ChangeStream().SetResumeAfter(bson.Raw(tok)))
	if id := docID(t, nextEvent(t, after)); id != int32(3) {
		t.Fatalf("resumeAfter gave _id %v, want 3", id)
	}
	sa := mustWatch(t, c, nil, options.ChangeStream().SetStartAfter(bson.Raw(tok)))
	if id := docID(t, nextEvent(t, sa)); id != int32(3) {
		t.Fatalf("startAfter gave _id %v, want 3", id)
	}
	at := mustWatch(t, c, nil, options.ChangeStream().SetStartAtOperationTime(&start))
	for want := int32(1); want <= 3; want++ {
		if id := docID(t, nextEvent(t, at)); id != want {
			t.Fatalf("startAtOperationTime gave _id %v, want %d", id, want)
		}
	}
	// The resume token the driver holds follows the postBatchResumeToken.
	nextEvent(t, cs)
	noEvent(t, cs)
	rt := cs.ResumeToken()
	if rt == nil {
		t.Fatal("no resume token")
	}
	insertN(t, c, 4, 5)
	again := mustWatch(t, c, nil, options.ChangeStream().SetResumeAfter(rt))
	if id := docID(t, nextEvent(t, again)); id != int32(4) {
		t.Fatalf("resume from postBatchResumeToken gave _id %v, want 4", id)
	}

	// Resuming after an invalidate needs startAfter.
	if err := c.Drop(ctx); err != nil {
		t.Fatal(err)
	}
	var inv bson.M
	for inv == nil || inv["operationType"] != "invalidate" {
		inv = nextEvent(t, cs)
	}
	invTok, _ := bson.Marshal(inv["_id"])
	_, err := c.Watch(ctx, mongo.Pipeline{}, options.ChangeStream().SetResumeAfter(bson.Raw(invTok)))
	wantCode(t, err, 260, "InvalidResumeToken")
	sai := mustWatch(t, c, nil, options.ChangeStream().SetStartAfter(bson.Raw(invTok)))
	insertN(t, c, 10, 11)
	ev := nextEvent(t, sai)
	if ev["operationType"] != "insert" || docID(t, ev) != int32(10) {
		t.Fatalf("startAfter invalidate gave %v", ev)
	}

	// Options that cannot go together.
	_, err = c.Watch(ctx, mongo.Pipeline{}, options.ChangeStream().SetResumeAfter(bson.Raw(tok)).SetStartAtOperationTime(&start))
	wantCode(t, err, 40674, "")
}

// TestChangeStreamHistoryLost truncates the oplog under a stream's resume
// point and expects ChangeStreamHistoryLost.
func TestChangeStreamHistoryLost(t *testing.T) {
	t.Parallel()
	_, client := testenv.Engine(t, engine.Options{OplogSize: 256 << 10})
	db := client.Database("test")
	ctx := ctxT(t)
	c := db.Collection("hl")
	start := operationTime(t, db)
	pad := make([]byte, 4000)
	for i := range 200 {
		if _, err := c.InsertOne(ctx, bson.D{{Key: "_id", Value: i}, {Key: "p", Value: pad}}); err != nil {
			t.Fatal(err)
		}
	}
	deadline := time.Now().Add(10 * time.Second)
	for {
		cs, err := c.Watch(ctx, mongo.Pipeline{}, options.ChangeStream().SetStartAtOperationTime(&start))
		if err != nil {
			wantCode(t, err, 286, "ChangeStreamHistoryLost")
			var ce mongo.CommandError
			if !errors.As(err, &ce) || !ce.HasErrorLabel("NonResumableChangeStreamError") {
				t.Fatalf("history lost without NonResumableChangeStreamError: %v", err)
			}
			break
		}
		cs.Close(ctx)
		if time.Now().After(deadline) {
			t.Fatal("oplog never truncated")
		}
		time.Sleep(20 * time.Millisecond)
	}
	// A recent point still works.
	now := operationTime(t, db)
	mustWatch(t, c, nil, options.ChangeStream().SetStartAtOperationTime(&now))
}

// TestChangeStreamAwaitDataWakes checks that a getMore waiting for events
// returns soon after a commit, well before maxAwaitTimeMS.
func TestChangeStreamAwaitDataWakes(t *testing.T) {
	t.Parallel()
	_, db := newDB(t)
	c := db.Collection("aw")
	cs := mustWatch(t, c, nil, options.ChangeStream().SetMaxAwaitTime(10*time.Second))
	go func() {
		time.Sleep(200 * time.Millisecond)
		_, _ = c.InsertOne(context.Background(), bson.D{{Key: "_id", Value: 1}})
	}()
	begin := time.Now()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	if !cs.Next(ctx) {
		t.Fatal(cs.Err())
	}
	if d := time.Since(begin); d > 3*time.Second {
		t.Fatalf("event after %v: the getMore did not wake at the commit", d)
	}
	// With nothing to report, a getMore answers after maxAwaitTimeMS with
	// an empty batch, and the cursor stays open.
	short := mustWatch(t, c, nil, options.ChangeStream().SetMaxAwaitTime(100*time.Millisecond))
	short.TryNext(ctx) // the driver may answer the first from the aggregate's batch
	begin = time.Now()
	if short.TryNext(ctx) {
		t.Fatal("unexpected event")
	}
	if d := time.Since(begin); d < 80*time.Millisecond || d > 3*time.Second {
		t.Fatalf("empty getMore took %v", d)
	}
	if short.ID() == 0 {
		t.Fatal("cursor closed")
	}
}
