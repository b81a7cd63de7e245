package engine_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/event"
	"go.mongodb.org/mongo-driver/v2/mongo"
	"go.mongodb.org/mongo-driver/v2/mongo/options"

	"github.com/formworkdb/formwork/engine"
	"github.com/formworkdb/formwork/internal/testenv"
)

// setFailPoint configures failCommand and turns it off when the test ends.
func setFailPoint(t *testing.T, c *mongo.Client, mode any, data bson.D) {
	t.Helper()
	ctx := ctxT(t)
	err := c.Database("admin").RunCommand(ctx, bson.D{
		{Key: "configureFailPoint", Value: "failCommand"}, {Key: "mode", Value: mode}, {Key: "data", Value: data},
	}).Err()
	if err != nil {
		t.Fatalf("configureFailPoint: %v", err)
	}
	t.Cleanup(func() {
		c.Database("admin").RunCommand(context.Background(), bson.D{
			{Key: "configureFailPoint", Value: "failCommand"}, {Key: "mode", Value: "off"}})
	})
}

// countingClient connects to db with a monitor that counts the insert
// commands started.
func countingClient(t *testing.T, db *engine.DB, appName string) (*mongo.Client, *int) {
	t.Helper()
	n := new(int)
	mon := &event.CommandMonitor{Started: func(_ context.Context, e *event.CommandStartedEvent) {
		if e.CommandName == "insert" {
			*n++
		}
	}}
	opts := options.Client().ApplyURI("mongodb://localhost:27017").SetDialer(db.Dialer()).
		SetServerSelectionTimeout(10 * time.Second).SetMonitor(mon)
	if appName != "" {
		opts.SetAppName(appName)
	}
	c, err := mongo.Connect(opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Disconnect(context.Background()) })
	return c, n
}

func TestFailPointDisabledWithoutTestCommands(t *testing.T) {
	ctx := ctxT(t)
	db, err := engine.Open(ctx, engine.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	c, err := testenv.Connect(db)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Disconnect(ctx)
	err = c.Database("admin").RunCommand(ctx, bson.D{{Key: "configureFailPoint", Value: "failCommand"}, {Key: "mode", Value: "off"}}).Err()
	wantCode(t, err, 59, "CommandNotFound")
}

func TestFailPointConfigureErrors(t *testing.T) {
	_, c := testenv.Engine(t, engine.Options{})
	ctx := ctxT(t)
	run := func(db string, cmd bson.D) error { return c.Database(db).RunCommand(ctx, cmd).Err() }
	wantCode(t, run("test", bson.D{{Key: "configureFailPoint", Value: "failCommand"}, {Key: "mode", Value: "off"}}), 13, "Unauthorized")
	wantCode(t, run("admin", bson.D{{Key: "configureFailPoint", Value: "nope"}, {Key: "mode", Value: "off"}}), 266, "FailPointSetFailed")
	wantCode(t, run("admin", bson.D{{Key: "configureFailPoint", Value: "failCommand"}}), 20, "IllegalOperation")
	wantCode(t, run("admin", bson.D{{Key: "configureFailPoint", Value: "failCommand"}, {Key: "mode", Value: "sometimes"}}), 2, "BadValue")
	wantCode(t, run("admin", bson.D{{Key: "configureFailPoint", Value: "failCommand"}, {Key: "mode", Value: bson.D{{Key: "times", Value: -1}}}}), 2, "BadValue")
	wantCode(t, run("admin", bson.D{{Key: "configureFailPoint", Value: "failCommand"}, {Key: "mode", Value: bson.D{{Key: "activationProbability", Value: 2.0}}}}), 2, "BadValue")
	wantCode(t, run("admin", bson.D{{Key: "configureFailPoint", Value: "failCommand"}, {Key: "mode", Value: bson.D{{Key: "other", Value: 1}}}}), 2, "BadValue")
	wantCode(t, run("admin", bson.D{{Key: "configureFailPoint", Value: "failCommand"}, {Key: "mode", Value: 1}}), 14, "TypeMismatch")
	wantCode(t, run("admin", bson.D{{Key: "configureFailPoint", Value: "failCommand"}, {Key: "mode", Value: "alwaysOn"}, {Key: "data", Value: 1}}), 14, "TypeMismatch")
}

func TestFailCommandErrorCodeTimesAndCount(t *testing.T) {
	_, c := testenv.Engine(t, engine.Options{})
	ctx := ctxT(t)
	setFailPoint(t, c, bson.D{{Key: "times", Value: 2}}, bson.D{{Key: "failCommands", Value: bson.A{"find"}}, {Key: "errorCode", Value: 2}})
	coll := c.Database("test").Collection("c")
	for i := 0; i < 2; i++ {
		err := coll.FindOne(ctx, bson.D{}).Err()
		wantCode(t, err, 2, "BadValue")
		var ce mongo.CommandError
		if errors.As(err, &ce) && ce.Message != "Failing command via 'failCommand' failpoint" {
			t.Fatalf("errmsg %q", ce.Message)
		}
	}
	if err := coll.FindOne(ctx, bson.D{}).Err(); !errors.Is(err, mongo.ErrNoDocuments) {
		t.Fatalf("third find: %v", err)
	}
	// Other commands are untouched, and count reports the times it fired.
	var res struct{ Count int64 }
	if err := c.Database("admin").RunCommand(ctx, bson.D{{Key: "configureFailPoint", Value: "failCommand"}, {Key: "mode", Value: "off"}}).Decode(&res); err != nil {
		t.Fatal(err)
	}
	if res.Count != 2 {
		t.Fatalf("count %d, want 2", res.Count)
	}
}

func TestFailCommandSkip(t *testing.T) {
	_, c := testenv.Engine(t, engine.Options{})
	ctx := ctxT(t)
	setFailPoint(t, c, bson.D{{Key: "skip", Value: 2}}, bson.D{{Key: "failCommands", Value: bson.A{"aggregate"}}, {Key: "errorCode", Value: 2}})
	coll := c.Database("test").Collection("c")
	// CountDocuments runs an aggregate; a find does not consume a skip:
	// only matching commands count.
	coll.FindOne(ctx, bson.D{})
	for i := 0; i < 2; i++ {
		if _, err := coll.CountDocuments(ctx, bson.D{}); err != nil {
			t.Fatalf("count %d skipped: %v", i, err)
		}
	}
	for i := 0; i < 3; i++ {
		_, err := coll.CountDocuments(ctx, bson.D{})
		wantCode(t, err, 2, "BadValue")
	}
}

func TestFailCommandRetryableInsertCloseConnection(t *testing.T) {
	db, _ := testenv.Engine(t, engine.Options{})
	c, inserts := countingClient(t, db, "")
	ctx := ctxT(t)
	coll := c.Database("test").Collection("retry")
	coll.Drop(ctx)
	setFailPoint(t, c, bson.D{{Key: "times", Value: 1}}, bson.D{{Key: "failCommands", Value: bson.A{"insert"}}, {Key: "closeConnection", Value: true}})
	if _, err := coll.InsertOne(ctx, bson.D{{Key: "_id", Value: 1}}); err != nil {
		t.Fatalf("retryable insert: %v", err)
	}
	if *inserts != 2 {
		t.Fatalf("%d insert attempts, want 2 (one closed, one retry)", *inserts)
	}
	if n, _ := coll.CountDocuments(ctx, bson.D{}); n != 1 {
		t.Fatalf("%d documents, want 1", n)
	}
}

func TestFailCommandRetryableInsertShutdownInProgress(t *testing.T) {
	db, _ := testenv.Engine(t, engine.Options{})
	c, inserts := countingClient(t, db, "")
	ctx := ctxT(t)
	coll := c.Database("test").Collection("retry")
	// No errorLabels given: the server labels the retryable code itself.
	setFailPoint(t, c, bson.D{{Key: "times", Value: 1}}, bson.D{{Key: "failCommands", Value: bson.A{"insert"}}, {Key: "errorCode", Value: 91}})
	if _, err := coll.InsertOne(ctx, bson.D{{Key: "_id", Value: 1}}); err != nil {
		t.Fatalf("retryable insert: %v", err)
	}
	if *inserts != 2 {
		t.Fatalf("%d insert attempts, want 2", *inserts)
	}
	if n, _ := coll.CountDocuments(ctx, bson.D{}); n != 1 {
		t.Fatalf("%d documents, want 1", n)
	}
}

func TestFailCommandErrorLabels(t *testing.T) {
	db, _ := testenv.Engine(t, engine.Options{})
	c, inserts := countingClient(t, db, "")
	ctx := ctxT(t)
	coll := c.Database("test").Collection("labels")
	// errorLabels: [] suppresses RetryableWriteError: no retry.
	setFailPoint(t, c, bson.D{{Key: "times", Value: 1}}, bson.D{{Key: "failCommands", Value: bson.A{"insert"}}, {Key: "errorCode", Value: 11600}, {Key: "errorLabels", Value: bson.A{}}})
	_, err := coll.InsertOne(ctx, bson.D{{Key: "_id", Value: 1}})
	var se mongo.ServerError
	if !errors.As(err, &se) || !se.HasErrorCode(11600) || se.HasErrorLabel("RetryableWriteError") {
		t.Fatalf("got %v, want 11600 without RetryableWriteError", err)
	}
	if *inserts != 1 {
		t.Fatalf("%d attempts, want 1", *inserts)
	}
	// A non-retryable code labelled retryable by the failpoint is retried.
	setFailPoint(t, c, bson.D{{Key: "times", Value: 1}}, bson.D{{Key: "failCommands", Value: bson.A{"insert"}}, {Key: "errorCode", Value: 112}, {Key: "errorLabels", Value: bson.A{"RetryableWriteError"}}})
	if _, err := coll.InsertOne(ctx, bson.D{{Key: "_id", Value: 2}}); err != nil {
		t.Fatal(err)
	}
	if *inserts != 3 {
		t.Fatalf("%d attempts, want 3", *inserts)
	}
	// Raw reply: labels exactly as mongod sends them.
	setFailPoint(t, c, "alwaysOn", bson.D{{Key: "failCommands", Value: bson.A{"insert"}}, {Key: "errorCode", Value: 189}})
	raw, err := c.Database("test").RunCommand(ctx, bson.D{{Key: "insert", Value: "labels"}, {Key: "documents", Value: bson.A{bson.D{}}}}).Raw()
	if err == nil {
		t.Fatal("no error")
	}
	// Without txnNumber the write is not retryable: no label.
	if _, lerr := raw.LookupErr("errorLabels"); lerr == nil {
		t.Fatalf("labels on a non-retryable command: %v", raw)
	}
}

func TestFailCommandWriteConcernError(t *testing.T) {
	db, _ := testenv.Engine(t, engine.Options{})
	c, inserts := countingClient(t, db, "")
	ctx := ctxT(t)
	coll := c.Database("test").Collection("wce")
	setFailPoint(t, c, bson.D{{Key: "times", Value: 1}}, bson.D{{Key: "failCommands", Value: bson.A{"insert"}},
		{Key: "writeConcernError", Value: bson.D{{Key: "code", Value: 91}, {Key: "errmsg", Value: "Replication is being shut down"}}}})
	// The first attempt writes and reports a retryable write concern
	// error; the retry is answered from the session's record, so the
	// document is inserted once.
	if _, err := coll.InsertOne(ctx, bson.D{{Key: "_id", Value: 1}}); err != nil {
		t.Fatalf("insert: %v", err)
	}
	if *inserts != 2 {
		t.Fatalf("%d attempts, want 2", *inserts)
	}
	if n, _ := coll.CountDocuments(ctx, bson.D{}); n != 1 {
		t.Fatalf("%d documents, want 1", n)
	}
	// A non-retryable write concern error surfaces.
	setFailPoint(t, c, bson.D{{Key: "times", Value: 1}}, bson.D{{Key: "failCommands", Value: bson.A{"insert"}},
		{Key: "writeConcernError", Value: bson.D{{Key: "code", Value: 64}, {Key: "errmsg", Value: "waiting for replication timed out"}}}})
	_, err := coll.InsertOne(ctx, bson.D{{Key: "_id", Value: 2}})
	var we mongo.WriteException
	if !errors.As(err, &we) || we.WriteConcernError == nil || we.WriteConcernError.Code != 64 {
		t.Fatalf("got %v, want write concern error 64", err)
	}
}

func TestFailCommandBlockConnection(t *testing.T) {
	_, c := testenv.Engine(t, engine.Options{})
	ctx := ctxT(t)
	setFailPoint(t, c, bson.D{{Key: "times", Value: 1}}, bson.D{{Key: "failCommands", Value: bson.A{"ping"}}, {Key: "blockConnection", Value: true}, {Key: "blockTimeMS", Value: 300}})
	start := time.Now()
	if err := c.Database("test").RunCommand(ctx, bson.D{{Key: "ping", Value: 1}}).Err(); err != nil {
		t.Fatal(err)
	}
	if d := time.Since(start); d < 300*time.Millisecond {
		t.Fatalf("ping took %v, want >= 300ms", d)
	}
	start = time.Now()
	c.Database("test").RunCommand(ctx, bson.D{{Key: "ping", Value: 1}})
	if d := time.Since(start); d > 250*time.Millisecond {
		t.Fatalf("second ping took %v: the failpoint fired twice", d)
	}
	setFailPoint(t, c, "alwaysOn", bson.D{{Key: "failCommands", Value: bson.A{"ping"}}, {Key: "blockConnection", Value: true}})
	wantCode(t, c.Database("test").RunCommand(ctx, bson.D{{Key: "ping", Value: 1}}).Err(), 72, "InvalidOptions")
}

func TestFailCommandAppName(t *testing.T) {
	db, _ := testenv.Engine(t, engine.Options{})
	a, _ := countingClient(t, db, "appA")
	b, _ := countingClient(t, db, "appB")
	ctx := ctxT(t)
	setFailPoint(t, a, "alwaysOn", bson.D{{Key: "failCommands", Value: bson.A{"ping"}}, {Key: "errorCode", Value: 2}, {Key: "appName", Value: "appA"}})
	wantCode(t, a.Database("test").RunCommand(ctx, bson.D{{Key: "ping", Value: 1}}).Err(), 2, "BadValue")
	if err := b.Database("test").RunCommand(ctx, bson.D{{Key: "ping", Value: 1}}).Err(); err != nil {
		t.Fatalf("appB failed: %v", err)
	}
	// configureFailPoint itself is never failed, even when listed.
	setFailPoint(t, a, "alwaysOn", bson.D{{Key: "failCommands", Value: bson.A{"configureFailPoint"}}, {Key: "errorCode", Value: 2}})
}

func TestFailCommandActivationProbability(t *testing.T) {
	_, c := testenv.Engine(t, engine.Options{})
	ctx := ctxT(t)
	ping := func() error { return c.Database("test").RunCommand(ctx, bson.D{{Key: "ping", Value: 1}}).Err() }
	setFailPoint(t, c, bson.D{{Key: "activationProbability", Value: 0.0}}, bson.D{{Key: "failCommands", Value: bson.A{"ping"}}, {Key: "errorCode", Value: 2}})
	for i := 0; i < 20; i++ {
		if err := ping(); err != nil {
			t.Fatalf("probability 0 fired: %v", err)
		}
	}
	setFailPoint(t, c, bson.D{{Key: "activationProbability", Value: 1}}, bson.D{{Key: "failCommands", Value: bson.A{"ping"}}, {Key: "errorCode", Value: 2}})
	for i := 0; i < 20; i++ {
		wantCode(t, ping(), 2, "BadValue")
	}
}

func TestWaitForFailPoint(t *testing.T) {
	_, c := testenv.Engine(t, engine.Options{})
	ctx := ctxT(t)
	admin := c.Database("admin")
	wait := func(n int, ms int) error {
		// A context deadline would make the driver send its own maxTimeMS.
		return admin.RunCommand(context.Background(), bson.D{{Key: "waitForFailPoint", Value: "failCommand"}, {Key: "timesEntered", Value: n}, {Key: "maxTimeMS", Value: ms}}).Err()
	}
	// Without a deadline on the context the driver sends no maxTimeMS.
	wantCode(t, admin.RunCommand(context.Background(), bson.D{{Key: "waitForFailPoint", Value: "failCommand"}, {Key: "timesEntered", Value: 1}}).Err(), 9, "FailedToParse")
	setFailPoint(t, c, bson.D{{Key: "times", Value: 1}}, bson.D{{Key: "failCommands", Value: bson.A{"ping"}}, {Key: "errorCode", Value: 2}})
	wantCode(t, wait(1, 100), 50, "MaxTimeMSExpired")
	c.Database("test").RunCommand(ctx, bson.D{{Key: "ping", Value: 1}})
	if err := wait(1, 5000); err != nil {
		t.Fatal(err)
	}
}

func TestOnPrimaryTransactionalWrite(t *testing.T) {
	db, _ := testenv.Engine(t, engine.Options{})
	c, inserts := countingClient(t, db, "")
	ctx := ctxT(t)
	coll := c.Database("test").Collection("optw")
	for i, data := range []bson.D{nil, {{Key: "failBeforeCommitExceptionCode", Value: 1}}} {
		cmd := bson.D{{Key: "configureFailPoint", Value: "onPrimaryTransactionalWrite"}, {Key: "mode", Value: bson.D{{Key: "times", Value: 1}}}}
		if data != nil {
			cmd = append(cmd, bson.E{Key: "data", Value: data})
		}
		if err := c.Database("admin").RunCommand(ctx, cmd).Err(); err != nil {
			t.Fatal(err)
		}
		before := *inserts
		// Committed on the first attempt (reply lost) or not committed:
		// either way the retry leaves exactly one document.
		if _, err := coll.InsertOne(ctx, bson.D{{Key: "_id", Value: i}}); err != nil {
			t.Fatalf("case %d: %v", i, err)
		}
		if *inserts-before != 2 {
			t.Fatalf("case %d: %d attempts, want 2", i, *inserts-before)
		}
		if n, _ := coll.CountDocuments(ctx, bson.D{{Key: "_id", Value: i}}); n != 1 {
			t.Fatalf("case %d: %d documents", i, n)
		}
	}
}
