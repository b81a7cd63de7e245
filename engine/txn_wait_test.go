package engine_test

import (
	"context"
	"testing"
	"time"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo"

	"github.com/formworkdb/formwork/engine"
	"github.com/formworkdb/formwork/internal/testenv"
)

// TestTxnPlainWriteWaits: a write outside any transaction that touches a
// document an open transaction wrote waits until that transaction
// commits, then applies on top of it, so two $incs lose nothing; a
// maxTimeMS ends the wait with MaxTimeMSExpired; an insert of a unique
// key the transaction inserted waits and then fails with DuplicateKey.
func TestTxnPlainWriteWaits(t *testing.T) {
	t.Parallel()
	_, db := newDB(t)
	ctx := ctxT(t)
	c := db.Collection("wait")
	if _, err := c.InsertOne(ctx, bson.D{{Key: "_id", Value: 1}, {Key: "v", Value: 0}}); err != nil {
		t.Fatal(err)
	}
	sess, err := db.Client().StartSession()
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
	if _, err := c.InsertOne(sc, bson.D{{Key: "_id", Value: 5}}); err != nil {
		t.Fatal(err)
	}
	// maxTimeMS bounds the wait (a context without a deadline, so that
	// the driver sends the command's own maxTimeMS).
	err = db.RunCommand(context.Background(), bson.D{
		{Key: "update", Value: "wait"},
		{Key: "updates", Value: bson.A{bson.D{{Key: "q", Value: bson.D{{Key: "_id", Value: 1}}}, {Key: "u", Value: inc}}}},
		{Key: "maxTimeMS", Value: 100},
	}).Err()
	wantCode(t, err, 50, "MaxTimeMSExpired")

	updated := make(chan error, 1)
	go func() {
		_, err := c.UpdateOne(ctx, bson.D{{Key: "_id", Value: 1}}, bson.D{{Key: "$inc", Value: bson.D{{Key: "v", Value: 10}}}})
		updated <- err
	}()
	inserted := make(chan error, 1)
	go func() {
		_, err := c.InsertOne(ctx, bson.D{{Key: "_id", Value: 5}})
		inserted <- err
	}()
	select {
	case err := <-updated:
		t.Fatalf("the plain update did not wait for the transaction: %v", err)
	case err := <-inserted:
		t.Fatalf("the plain insert did not wait for the transaction: %v", err)
	case <-time.After(200 * time.Millisecond):
	}
	if err := sess.CommitTransaction(ctx); err != nil {
		t.Fatalf("commit: %v", err)
	}
	if err := <-updated; err != nil {
		t.Fatalf("plain update: %v", err)
	}
	wantCode(t, <-inserted, 11000, "DuplicateKey")
	var got struct{ V int }
	if err := c.FindOne(ctx, bson.D{{Key: "_id", Value: 1}}).Decode(&got); err != nil {
		t.Fatal(err)
	}
	if got.V != 11 {
		t.Fatalf("v = %d, want 11: both $incs apply", got.V)
	}
}

// TestTxnPlainWriteWaitsForAbort: a waiting write proceeds once the
// transaction aborts, and sees none of its writes.
func TestTxnPlainWriteWaitsForAbort(t *testing.T) {
	t.Parallel()
	_, db := newDB(t)
	ctx := ctxT(t)
	c := db.Collection("waitabort")
	if _, err := c.InsertOne(ctx, bson.D{{Key: "_id", Value: 1}, {Key: "v", Value: 0}}); err != nil {
		t.Fatal(err)
	}
	sess, _ := db.Client().StartSession()
	defer sess.EndSession(ctx)
	_ = sess.StartTransaction()
	sc := mongo.NewSessionContext(ctx, sess)
	if _, err := c.DeleteOne(sc, bson.D{{Key: "_id", Value: 1}}); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() {
		_, err := c.UpdateOne(context.Background(), bson.D{{Key: "_id", Value: 1}}, bson.D{{Key: "$inc", Value: bson.D{{Key: "v", Value: 7}}}})
		done <- err
	}()
	time.Sleep(100 * time.Millisecond)
	if err := sess.AbortTransaction(ctx); err != nil {
		t.Fatal(err)
	}
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	var got struct{ V int }
	if err := c.FindOne(ctx, bson.D{{Key: "_id", Value: 1}}).Decode(&got); err != nil || got.V != 7 {
		t.Fatalf("v = %d, %v; want 7", got.V, err)
	}
}

// TestTxnCursorsKilledAtEnd: a cursor opened in a transaction is killed
// when the transaction commits or aborts; a later getMore answers
// CursorNotFound.
func TestTxnCursorsKilledAtEnd(t *testing.T) {
	t.Parallel()
	_, db := newDB(t)
	ctx := ctxT(t)
	c := db.Collection("cur")
	docs := []any{}
	for i := range 5 {
		docs = append(docs, bson.D{{Key: "_id", Value: i}})
	}
	if _, err := c.InsertMany(ctx, docs); err != nil {
		t.Fatal(err)
	}
	for _, end := range []string{"commit", "abort"} {
		sess, _ := db.Client().StartSession()
		_ = sess.StartTransaction()
		sc := mongo.NewSessionContext(ctx, sess)
		var res struct {
			Cursor struct {
				ID int64 `bson:"id"`
			} `bson:"cursor"`
		}
		if err := db.RunCommand(sc, bson.D{{Key: "find", Value: "cur"}, {Key: "batchSize", Value: 2}}).Decode(&res); err != nil {
			t.Fatal(err)
		}
		if res.Cursor.ID == 0 {
			t.Fatal("find in the transaction left no cursor open")
		}
		var err error
		if end == "commit" {
			err = sess.CommitTransaction(ctx)
		} else {
			err = sess.AbortTransaction(ctx)
		}
		if err != nil {
			t.Fatalf("%s: %v", end, err)
		}
		err = db.RunCommand(ctx, bson.D{{Key: "getMore", Value: res.Cursor.ID}, {Key: "collection", Value: "cur"}}).Err()
		wantCode(t, err, 43, "CursorNotFound")
		sess.EndSession(ctx)
	}
}

// TestTxnSessionExpiryAborts: a session unused for the logical session
// timeout is reaped; its open transaction is aborted, its documents are
// free, and a later commitTransaction answers NoSuchTransaction.
// killAllSessions does the same at once.
func TestTxnSessionExpiryAborts(t *testing.T) {
	t.Parallel()
	_, client := testenv.Engine(t, engine.Options{SessionTimeout: 200 * time.Millisecond})
	db := client.Database("test")
	ctx := ctxT(t)
	c := db.Collection("exp")
	if _, err := c.InsertOne(ctx, bson.D{{Key: "_id", Value: 1}, {Key: "v", Value: 0}}); err != nil {
		t.Fatal(err)
	}
	for _, how := range []string{"expiry", "killAllSessions"} {
		sess, _ := client.StartSession()
		_ = sess.StartTransaction()
		sc := mongo.NewSessionContext(ctx, sess)
		if _, err := c.UpdateOne(sc, bson.D{{Key: "_id", Value: 1}}, bson.D{{Key: "$inc", Value: bson.D{{Key: "v", Value: 1}}}}); err != nil {
			t.Fatal(err)
		}
		if how == "expiry" {
			time.Sleep(600 * time.Millisecond)
		} else if err := client.Database("admin").RunCommand(ctx, bson.D{{Key: "killAllSessions", Value: bson.A{}}}).Err(); err != nil {
			t.Fatal(err)
		}
		// The document is free: a plain write does not wait.
		wctx, cancel := context.WithTimeout(ctx, 3*time.Second)
		_, err := c.UpdateOne(wctx, bson.D{{Key: "_id", Value: 1}}, bson.D{{Key: "$inc", Value: bson.D{{Key: "v", Value: 10}}}})
		cancel()
		if err != nil {
			t.Fatalf("%s: plain write: %v", how, err)
		}
		wantCode(t, sess.CommitTransaction(ctx), 251, "NoSuchTransaction")
		sess.EndSession(ctx)
	}
	var got struct{ V int }
	if err := c.FindOne(ctx, bson.D{}).Decode(&got); err != nil || got.V != 20 {
		t.Fatalf("v = %d, %v; want 20 (no transactional increment)", got.V, err)
	}
}

// TestTxnMergeWaits: $merge into a document an open transaction wrote
// waits for the transaction, as a plain update does.
func TestTxnMergeWaits(t *testing.T) {
	t.Parallel()
	_, db := newDB(t)
	ctx := ctxT(t)
	target, src := db.Collection("mtarget"), db.Collection("msrc")
	if _, err := target.InsertOne(ctx, bson.D{{Key: "_id", Value: 1}, {Key: "a", Value: 0}}); err != nil {
		t.Fatal(err)
	}
	if _, err := src.InsertOne(ctx, bson.D{{Key: "_id", Value: 1}, {Key: "b", Value: 2}}); err != nil {
		t.Fatal(err)
	}
	sess, _ := db.Client().StartSession()
	defer sess.EndSession(ctx)
	_ = sess.StartTransaction()
	sc := mongo.NewSessionContext(ctx, sess)
	if _, err := target.UpdateOne(sc, bson.D{{Key: "_id", Value: 1}}, bson.D{{Key: "$set", Value: bson.D{{Key: "a", Value: 1}}}}); err != nil {
		t.Fatal(err)
	}
	merged := make(chan error, 1)
	go func() {
		cur, err := src.Aggregate(ctx, mongo.Pipeline{{{Key: "$merge", Value: bson.D{{Key: "into", Value: "mtarget"}}}}})
		if err == nil {
			cur.Close(ctx)
		}
		merged <- err
	}()
	select {
	case err := <-merged:
		t.Fatalf("$merge did not wait for the transaction: %v", err)
	case <-time.After(200 * time.Millisecond):
	}
	if err := sess.CommitTransaction(ctx); err != nil {
		t.Fatalf("commit: %v", err)
	}
	if err := <-merged; err != nil {
		t.Fatal(err)
	}
	var got struct{ A, B int }
	if err := target.FindOne(ctx, bson.D{{Key: "_id", Value: 1}}).Decode(&got); err != nil || got.A != 1 || got.B != 2 {
		t.Fatalf("target = %+v, %v; want a: 1 from the transaction, b: 2 from $merge", got, err)
	}
}
