package engine_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo"
	"go.mongodb.org/mongo-driver/v2/mongo/options"
)

// TestTxnWithTransactionCommits runs the driver's convenient API: the
// writes appear together after the callback returns.
func TestTxnWithTransactionCommits(t *testing.T) {
	_, db := newDB(t)
	ctx := ctxT(t)
	c := db.Collection("acct")
	if _, err := c.InsertMany(ctx, []any{bson.D{{Key: "_id", Value: 1}, {Key: "bal", Value: 100}}, bson.D{{Key: "_id", Value: 2}, {Key: "bal", Value: 0}}}); err != nil {
		t.Fatal(err)
	}
	sess, err := db.Client().StartSession()
	if err != nil {
		t.Fatal(err)
	}
	defer sess.EndSession(ctx)
	_, err = sess.WithTransaction(ctx, func(sc context.Context) (any, error) {
		if _, err := c.UpdateOne(sc, bson.D{{Key: "_id", Value: 1}}, bson.D{{Key: "$inc", Value: bson.D{{Key: "bal", Value: -30}}}}); err != nil {
			return nil, err
		}
		// Outside the transaction nothing changed yet.
		var out bson.M
		if err := c.FindOne(ctx, bson.D{{Key: "_id", Value: 1}}).Decode(&out); err != nil {
			return nil, err
		}
		if out["bal"] != int32(100) {
			t.Errorf("outside read saw %v, want 100", out["bal"])
		}
		_, err := c.UpdateOne(sc, bson.D{{Key: "_id", Value: 2}}, bson.D{{Key: "$inc", Value: bson.D{{Key: "bal", Value: 30}}}})
		return nil, err
	})
	if err != nil {
		t.Fatal(err)
	}
	cur, err := c.Find(ctx, bson.D{}, options.Find().SetSort(bson.D{{Key: "_id", Value: 1}}))
	if err != nil {
		t.Fatal(err)
	}
	var got []bson.M
	if err := cur.All(ctx, &got); err != nil {
		t.Fatal(err)
	}
	if len(got) != 2 || got[0]["bal"] != int32(70) || got[1]["bal"] != int32(30) {
		t.Fatalf("after commit: %v", got)
	}
}

// TestTxnOwnWritesThroughIndexAndAggregate reads the transaction's own
// writes through an index scan and an aggregation.
func TestTxnOwnWritesThroughIndexAndAggregate(t *testing.T) {
	_, db := newDB(t)
	ctx := ctxT(t)
	c := db.Collection("items")
	if _, err := c.Indexes().CreateOne(ctx, mongo.IndexModel{Keys: bson.D{{Key: "k", Value: 1}}}); err != nil {
		t.Fatal(err)
	}
	if _, err := c.InsertOne(ctx, bson.D{{Key: "_id", Value: 1}, {Key: "k", Value: 5}}); err != nil {
		t.Fatal(err)
	}
	sess, _ := db.Client().StartSession()
	defer sess.EndSession(ctx)
	if err := sess.StartTransaction(); err != nil {
		t.Fatal(err)
	}
	sc := mongo.NewSessionContext(ctx, sess)
	if _, err := c.InsertOne(sc, bson.D{{Key: "_id", Value: 2}, {Key: "k", Value: 7}}); err != nil {
		t.Fatal(err)
	}
	if _, err := c.UpdateOne(sc, bson.D{{Key: "_id", Value: 1}}, bson.D{{Key: "$set", Value: bson.D{{Key: "k", Value: 50}}}}); err != nil {
		t.Fatal(err)
	}
	// The index on k shows the new key 7 and no longer the old key 5.
	cur, err := c.Find(sc, bson.D{{Key: "k", Value: bson.D{{Key: "$lt", Value: 10}}}}, options.Find().SetHint(bson.D{{Key: "k", Value: 1}}))
	if err != nil {
		t.Fatal(err)
	}
	var got []bson.M
	if err := cur.All(sc, &got); err != nil {
		t.Fatal(err)
	}
	if len(got) != 1 || got[0]["_id"] != int32(2) {
		t.Fatalf("index read in txn: %v", got)
	}
	agg, err := c.Aggregate(sc, mongo.Pipeline{{{Key: "$group", Value: bson.D{{Key: "_id", Value: nil}, {Key: "s", Value: bson.D{{Key: "$sum", Value: "$k"}}}}}}})
	if err != nil {
		t.Fatal(err)
	}
	var sums []bson.M
	if err := agg.All(sc, &sums); err != nil {
		t.Fatal(err)
	}
	if len(sums) != 1 || sums[0]["s"] != int32(57) {
		t.Fatalf("aggregate in txn: %v", sums)
	}
	// Outside: still the old data.
	n, err := c.CountDocuments(ctx, bson.D{})
	if err != nil || n != 1 {
		t.Fatalf("outside count = %d, %v", n, err)
	}
	if err := sess.AbortTransaction(ctx); err != nil {
		t.Fatal(err)
	}
	// Abort discarded everything.
	var one bson.M
	if err := c.FindOne(ctx, bson.D{{Key: "_id", Value: 1}}).Decode(&one); err != nil || one["k"] != int32(5) {
		t.Fatalf("after abort: %v %v", one, err)
	}
	if n, _ := c.CountDocuments(ctx, bson.D{}); n != 1 {
		t.Fatalf("after abort count = %d", n)
	}
}

// hasLabel reports whether err carries the error label l.
func hasLabel(err error, l string) bool {
	var le mongo.LabeledError
	return errors.As(err, &le) && le.HasErrorLabel(l)
}

// TestTxnWriteConflict: a second transaction writing a document the
// first holds gets WriteConflict with TransientTransactionError, and its
// transaction is aborted.
func TestTxnWriteConflict(t *testing.T) {
	_, db := newDB(t)
	ctx := ctxT(t)
	c := db.Collection("w")
	if _, err := c.InsertOne(ctx, bson.D{{Key: "_id", Value: 1}, {Key: "v", Value: 0}}); err != nil {
		t.Fatal(err)
	}
	s1, _ := db.Client().StartSession()
	s2, _ := db.Client().StartSession()
	defer s1.EndSession(ctx)
	defer s2.EndSession(ctx)
	s1.StartTransaction()
	s2.StartTransaction()
	sc1 := mongo.NewSessionContext(ctx, s1)
	sc2 := mongo.NewSessionContext(ctx, s2)
	if _, err := c.UpdateOne(sc1, bson.D{{Key: "_id", Value: 1}}, bson.D{{Key: "$set", Value: bson.D{{Key: "v", Value: 1}}}}); err != nil {
		t.Fatal(err)
	}
	_, err := c.UpdateOne(sc2, bson.D{{Key: "_id", Value: 1}}, bson.D{{Key: "$set", Value: bson.D{{Key: "v", Value: 2}}}})
	wantCode(t, err, 112, "WriteConflict")
	if !hasLabel(err, "TransientTransactionError") {
		t.Fatalf("no TransientTransactionError label: %v", err)
	}
	err = s2.CommitTransaction(ctx)
	wantCode(t, err, 251, "NoSuchTransaction")
	if err := s1.CommitTransaction(ctx); err != nil {
		t.Fatal(err)
	}
	// A retried commit answers ok.
	if err := s1.CommitTransaction(ctx); err != nil {
		t.Fatalf("retried commit: %v", err)
	}
}

// TestTxnDisallowedOperations checks the commands and stages a
// transaction refuses, and the 4.4 rules on creating collections and
// indexes.
func TestTxnDisallowedOperations(t *testing.T) {
	_, db := newDB(t)
	ctx := ctxT(t)
	c := db.Collection("d")
	if _, err := c.InsertOne(ctx, bson.D{{Key: "_id", Value: 1}}); err != nil {
		t.Fatal(err)
	}
	sess, _ := db.Client().StartSession()
	defer sess.EndSession(ctx)
	try := func(f func(sc context.Context) error) error {
		if err := sess.StartTransaction(); err != nil {
			t.Fatal(err)
		}
		sc := mongo.NewSessionContext(ctx, sess)
		err := f(sc)
		sess.AbortTransaction(ctx)
		return err
	}
	err := try(func(sc context.Context) error {
		_, err := c.Aggregate(sc, mongo.Pipeline{{{Key: "$out", Value: "o"}}})
		return err
	})
	wantCode(t, err, 263, "OperationNotSupportedInTransaction")
	err = try(func(sc context.Context) error {
		return db.RunCommand(sc, bson.D{{Key: "count", Value: "d"}}).Err()
	})
	wantCode(t, err, 263, "OperationNotSupportedInTransaction")
	err = try(func(sc context.Context) error {
		return db.RunCommand(sc, bson.D{{Key: "listCollections", Value: 1}}).Err()
	})
	wantCode(t, err, 263, "OperationNotSupportedInTransaction")
	err = try(func(sc context.Context) error {
		_, err := c.Indexes().CreateOne(sc, mongo.IndexModel{Keys: bson.D{{Key: "x", Value: 1}}})
		return err
	})
	wantCode(t, err, 263, "OperationNotSupportedInTransaction")
	err = try(func(sc context.Context) error {
		return db.CreateCollection(sc, "d")
	})
	wantCode(t, err, 48, "NamespaceExists")
	err = try(func(sc context.Context) error {
		return db.CreateView(sc, "v", "d", mongo.Pipeline{})
	})
	wantCode(t, err, 263, "OperationNotSupportedInTransaction")
	if err := db.CreateCollection(ctx, "ts", options.CreateCollection().SetTimeSeriesOptions(options.TimeSeries().SetTimeField("t"))); err != nil {
		t.Fatal(err)
	}
	err = try(func(sc context.Context) error {
		_, err := db.Collection("ts").InsertOne(sc, bson.D{{Key: "t", Value: time.Now()}})
		return err
	})
	wantCode(t, err, 263, "OperationNotSupportedInTransaction")
	// A new collection with an index, created and filled in the
	// transaction, appears at commit.
	if err := sess.StartTransaction(); err != nil {
		t.Fatal(err)
	}
	sc := mongo.NewSessionContext(ctx, sess)
	if err := db.CreateCollection(sc, "fresh"); err != nil {
		t.Fatal(err)
	}
	f := db.Collection("fresh")
	if _, err := f.Indexes().CreateOne(sc, mongo.IndexModel{Keys: bson.D{{Key: "a", Value: 1}}, Options: options.Index().SetUnique(true)}); err != nil {
		t.Fatal(err)
	}
	if _, err := f.InsertOne(sc, bson.D{{Key: "a", Value: 1}}); err != nil {
		t.Fatal(err)
	}
	if n, err := f.CountDocuments(ctx, bson.D{}); err != nil || n != 0 {
		t.Fatalf("fresh visible outside: %d %v", n, err)
	}
	var inTxn bson.M
	if err := f.FindOne(sc, bson.D{{Key: "a", Value: 1}}).Decode(&inTxn); err != nil {
		t.Fatalf("find in txn: %v", err)
	}
	if err := sess.CommitTransaction(ctx); err != nil {
		t.Fatal(err)
	}
	specs, err := f.Indexes().ListSpecifications(ctx)
	if err != nil || len(specs) != 2 {
		t.Fatalf("indexes after commit: %v %v", specs, err)
	}
	_, err = f.InsertOne(ctx, bson.D{{Key: "a", Value: 1}})
	wantCode(t, err, 11000, "")
}

// TestTxnLifetimeLimit: a transaction open longer than
// transactionLifetimeLimitSeconds is aborted.
func TestTxnLifetimeLimit(t *testing.T) {
	_, db := newDB(t)
	ctx := ctxT(t)
	admin := db.Client().Database("admin")
	if err := admin.RunCommand(ctx, bson.D{{Key: "setParameter", Value: 1}, {Key: "transactionLifetimeLimitSeconds", Value: 1}}).Err(); err != nil {
		t.Fatal(err)
	}
	c := db.Collection("l")
	sess, _ := db.Client().StartSession()
	defer sess.EndSession(ctx)
	sess.StartTransaction()
	sc := mongo.NewSessionContext(ctx, sess)
	if _, err := c.InsertOne(sc, bson.D{{Key: "_id", Value: 1}}); err != nil {
		t.Fatal(err)
	}
	time.Sleep(1500 * time.Millisecond)
	// The expired transaction released its document: another writer
	// takes it without a conflict.
	if _, err := c.InsertOne(ctx, bson.D{{Key: "_id", Value: 2}}); err != nil {
		t.Fatal(err)
	}
	_, err := c.InsertOne(sc, bson.D{{Key: "_id", Value: 3}})
	wantCode(t, err, 251, "NoSuchTransaction")
	if n, _ := c.CountDocuments(ctx, bson.D{}); n != 1 {
		t.Fatalf("count = %d, want 1", n)
	}
}

// TestTxnKillAndEndSessions: killSessions and endSessions abort the
// session's open transaction, releasing its documents.
func TestTxnKillAndEndSessions(t *testing.T) {
	_, db := newDB(t)
	ctx := ctxT(t)
	c := db.Collection("k")
	if _, err := c.InsertOne(ctx, bson.D{{Key: "_id", Value: 1}, {Key: "v", Value: 0}}); err != nil {
		t.Fatal(err)
	}
	for _, cmd := range []string{"killSessions", "endSessions"} {
		sess, _ := db.Client().StartSession()
		sess.StartTransaction()
		sc := mongo.NewSessionContext(ctx, sess)
		if _, err := c.UpdateOne(sc, bson.D{{Key: "_id", Value: 1}}, bson.D{{Key: "$inc", Value: bson.D{{Key: "v", Value: 1}}}}); err != nil {
			t.Fatal(err)
		}
		id := sess.ID()
		if err := db.Client().Database("admin").RunCommand(ctx, bson.D{{Key: cmd, Value: bson.A{id}}}).Err(); err != nil {
			t.Fatalf("%s: %v", cmd, err)
		}
		// The document is free: a plain write goes through.
		if _, err := c.UpdateOne(ctx, bson.D{{Key: "_id", Value: 1}}, bson.D{{Key: "$inc", Value: bson.D{{Key: "v", Value: 10}}}}); err != nil {
			t.Fatalf("after %s: %v", cmd, err)
		}
		err := sess.CommitTransaction(ctx)
		wantCode(t, err, 251, "NoSuchTransaction")
		sess.EndSession(ctx)
	}
	var got struct{ V int }
	if err := c.FindOne(ctx, bson.D{}).Decode(&got); err != nil || got.V != 20 {
		t.Fatalf("v = %d, %v; want 20 (no transactional increment)", got.V, err)
	}
}

// TestTxnTooLarge: a transaction staging more than
// transactionSizeLimitBytes fails with TransactionTooLarge.
func TestTxnTooLarge(t *testing.T) {
	_, db := newDB(t)
	ctx := ctxT(t)
	if err := db.Client().Database("admin").RunCommand(ctx, bson.D{{Key: "setParameter", Value: 1}, {Key: "transactionSizeLimitBytes", Value: 100000}}).Err(); err != nil {
		t.Fatal(err)
	}
	c := db.Collection("big")
	sess, _ := db.Client().StartSession()
	defer sess.EndSession(ctx)
	sess.StartTransaction()
	sc := mongo.NewSessionContext(ctx, sess)
	pad := string(make([]byte, 10000))
	var err error
	for i := 0; i < 20 && err == nil; i++ {
		_, err = c.InsertOne(sc, bson.D{{Key: "_id", Value: i}, {Key: "pad", Value: pad}})
	}
	wantCode(t, err, 257, "TransactionTooLarge")
	wantCode(t, sess.CommitTransaction(ctx), 251, "NoSuchTransaction")
	if n, _ := c.CountDocuments(ctx, bson.D{}); n != 0 {
		t.Fatalf("count = %d after the failed transaction", n)
	}
}
