package engine_test

import (
	"testing"
	"time"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo"

	"github.com/formworkdb/formwork/engine"
	"github.com/formworkdb/formwork/internal/testenv"
)

// TestAdmissionWaitersGiveTicketsBack runs with a single execution
// ticket: writes waiting for a transaction's document, and a change
// stream's awaitData getMore, must give it back while they wait, or the
// find below (and the transaction's own statements) would queue forever.
// serverStatus reports the queues under queues.execution.
func TestAdmissionWaitersGiveTicketsBack(t *testing.T) {
	t.Parallel()
	_, client := testenv.Engine(t, engine.Options{ExecutionTickets: 1})
	db := client.Database("test")
	ctx := ctxT(t)
	c := db.Collection("tickets")
	if _, err := c.InsertOne(ctx, bson.D{{Key: "_id", Value: 1}, {Key: "v", Value: 0}}); err != nil {
		t.Fatal(err)
	}
	// A change stream's getMore waits up to maxAwaitTimeMS for events.
	cs, err := c.Watch(ctx, mongo.Pipeline{}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close(ctx)
	streamed := make(chan bool, 1)
	go func() { streamed <- cs.Next(ctx) }()

	sess, err := client.StartSession()
	if err != nil {
		t.Fatal(err)
	}
	defer sess.EndSession(ctx)
	if err := sess.StartTransaction(); err != nil {
		t.Fatal(err)
	}
	sc := mongo.NewSessionContext(ctx, sess)
	inc := bson.D{{Key: "$inc", Value: bson.D{{Key: "v", Value: 1}}}}
	if _, err := c.UpdateOne(sc, bson.D{{Key: "_id", Value: 1}}, inc); err != nil {
		t.Fatal(err)
	}
	waiting := make(chan error, 3)
	for range 3 {
		go func() {
			_, err := c.UpdateOne(ctx, bson.D{{Key: "_id", Value: 1}}, inc)
			waiting <- err
		}()
	}
	select {
	case err := <-waiting:
		t.Fatalf("a plain update did not wait for the transaction: %v", err)
	case <-time.After(100 * time.Millisecond):
	}
	// The only ticket is free for a read and for the transaction.
	var got struct{ V int }
	if err := c.FindOne(ctx, bson.D{{Key: "_id", Value: 1}}).Decode(&got); err != nil || got.V != 0 {
		t.Fatalf("find while writers wait: %v %+v", err, got)
	}
	if _, err := c.InsertOne(sc, bson.D{{Key: "_id", Value: 2}}); err != nil {
		t.Fatalf("a transaction statement while writers wait: %v", err)
	}
	if err := sess.CommitTransaction(ctx); err != nil {
		t.Fatal(err)
	}
	for range 3 {
		if err := <-waiting; err != nil {
			t.Fatal(err)
		}
	}
	if err := c.FindOne(ctx, bson.D{{Key: "_id", Value: 1}}).Decode(&got); err != nil || got.V != 4 {
		t.Fatalf("after commit: %v %+v, want v 4", err, got)
	}
	if !<-streamed {
		t.Fatalf("change stream: %v", cs.Err())
	}

	var status struct {
		Queues struct {
			Execution map[string]struct {
				Out, Available, TotalTickets, AddedToQueue, RemovedFromQueue, QueueLength int64
				FinishedProcessing, NewAdmissions                                         int64
			}
		}
	}
	if err := client.Database("admin").RunCommand(ctx, bson.D{{Key: "serverStatus", Value: 1}}).Decode(&status); err != nil {
		t.Fatal(err)
	}
	r, w := status.Queues.Execution["read"], status.Queues.Execution["write"]
	if r.TotalTickets != 1 || w.TotalTickets != 1 || r.Out != 0 || w.Out != 0 || r.Available != 1 || r.QueueLength != 0 || w.QueueLength != 0 {
		t.Fatalf("queues.execution = %+v", status.Queues.Execution)
	}
	// 1 insert + 3 waiting updates + 1 update and 1 insert in the
	// transaction; reads: 2 finds, the aggregate and at least one getMore.
	if w.NewAdmissions != 6 || w.FinishedProcessing < 6 || r.NewAdmissions < 4 {
		t.Fatalf("queues.execution = %+v", status.Queues.Execution)
	}
}

// TestFsyncLockedWritersLeaveTicketsToReads: under fsyncLock, writes wait
// for the write lock; however many wait, and however few tickets there
// are, reads go on (mongodump reads while backups hold the lock).
func TestFsyncLockedWritersLeaveTicketsToReads(t *testing.T) {
	t.Parallel()
	_, client := testenv.Engine(t, engine.Options{ExecutionTickets: 2})
	ctx := ctxT(t)
	c := client.Database("test").Collection("locked")
	if _, err := c.InsertOne(ctx, bson.D{{Key: "_id", Value: 0}}); err != nil {
		t.Fatal(err)
	}
	admin := client.Database("admin")
	if err := admin.RunCommand(ctx, bson.D{{Key: "fsync", Value: 1}, {Key: "lock", Value: true}}).Err(); err != nil {
		t.Fatal(err)
	}
	const writers = 6
	done := make(chan error, writers)
	for i := range writers {
		go func() {
			_, err := c.InsertOne(ctx, bson.D{{Key: "_id", Value: i + 1}})
			done <- err
		}()
	}
	time.Sleep(100 * time.Millisecond) // let the writers block on the lock
	for range 3 {
		if n, err := c.CountDocuments(ctx, bson.D{}); err != nil || n != 1 {
			t.Fatalf("read under fsyncLock with %d writers waiting: %d %v", writers, n, err)
		}
	}
	if err := admin.RunCommand(ctx, bson.D{{Key: "fsyncUnlock", Value: 1}}).Err(); err != nil {
		t.Fatal(err)
	}
	for range writers {
		if err := <-done; err != nil {
			t.Fatal(err)
		}
	}
	if n, err := c.CountDocuments(ctx, bson.D{}); err != nil || n != writers+1 {
		t.Fatalf("after fsyncUnlock: %d %v", n, err)
	}
}
