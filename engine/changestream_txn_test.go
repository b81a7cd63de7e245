package engine_test

import (
	"context"
	"slices"
	"testing"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo"
	"go.mongodb.org/mongo-driver/v2/mongo/options"
)

// TestChangeStreamTransaction commits a transaction through the driver
// and expects its writes as separate events sharing the session's lsid,
// txnNumber and clusterTime, and nothing from an aborted transaction.
// Storage-level marking is covered by command's
// TestChangeStreamTransactionEvents; this test needs the transactions of
// issue 14 item 1 and skips while the engine answers NotImplemented.
func TestChangeStreamTransaction(t *testing.T) {
	t.Parallel()
	_, db := newDB(t)
	ctx := ctxT(t)
	c := db.Collection("txn")
	if err := db.CreateCollection(ctx, "txn"); err != nil {
		t.Fatal(err)
	}
	if _, err := c.InsertOne(ctx, bson.D{{Key: "_id", Value: 0}}); err != nil {
		t.Fatal(err)
	}
	cs := mustWatch(t, c, nil)
	sess, err := db.Client().StartSession()
	if err != nil {
		t.Fatal(err)
	}
	defer sess.EndSession(ctx)
	_, err = sess.WithTransaction(ctx, func(ctx context.Context) (any, error) {
		if _, err := c.InsertOne(ctx, bson.D{{Key: "_id", Value: 1}}); err != nil {
			return nil, err
		}
		if _, err := c.InsertOne(ctx, bson.D{{Key: "_id", Value: 2}}); err != nil {
			return nil, err
		}
		return c.UpdateOne(ctx, bson.D{{Key: "_id", Value: 0}}, bson.D{{Key: "$set", Value: bson.D{{Key: "x", Value: 1}}}})
	})
	var ce mongo.CommandError
	if err != nil && errorsAs(err, &ce) && ce.Code == 238 {
		t.Skip("transactions are not implemented in this build")
	}
	if err != nil {
		t.Fatal(err)
	}
	var first bson.M
	types := []string{}
	for range 3 {
		ev := nextEvent(t, cs)
		if ev["txnNumber"] == nil || ev["lsid"] == nil {
			t.Fatalf("event without transaction fields: %v", ev)
		}
		if first == nil {
			first = ev
		} else if ev["clusterTime"] != first["clusterTime"] || ev["txnNumber"] != first["txnNumber"] {
			t.Fatalf("events of one transaction differ: %v vs %v", ev, first)
		}
		types = append(types, ev["operationType"].(string))
	}
	slices.Sort(types)
	if !slices.Equal(types, []string{"insert", "insert", "update"}) {
		t.Fatalf("events %v", types)
	}
	// An aborted transaction leaves nothing in the oplog.
	sess2, _ := db.Client().StartSession()
	defer sess2.EndSession(ctx)
	_ = sess2.StartTransaction(options.Transaction())
	_ = mongo.WithSession(ctx, sess2, func(ctx context.Context) error {
		_, err := c.InsertOne(ctx, bson.D{{Key: "_id", Value: 99}})
		return err
	})
	if err := sess2.AbortTransaction(ctx); err != nil {
		t.Fatal(err)
	}
	if _, err := c.InsertOne(ctx, bson.D{{Key: "_id", Value: 3}}); err != nil {
		t.Fatal(err)
	}
	ev := nextEvent(t, cs)
	if docID(t, ev) != int32(3) || ev["txnNumber"] != nil {
		t.Fatalf("after an aborted transaction: %v", ev)
	}
}

// errorsAs is errors.As for a mongo.CommandError target.
func errorsAs(err error, target *mongo.CommandError) bool {
	for err != nil {
		if ce, ok := err.(mongo.CommandError); ok {
			*target = ce
			return true
		}
		u, ok := err.(interface{ Unwrap() error })
		if !ok {
			return false
		}
		err = u.Unwrap()
	}
	return false
}

// TestChangeStreamTransactionStatements writes one document three times
// in a transaction (insert, update, delete) and expects three events in
// statement order, as mongod's applyOps entry holds one operation per
// statement, not the document's net effect.
func TestChangeStreamTransactionStatements(t *testing.T) {
	t.Parallel()
	_, db := newDB(t)
	ctx := ctxT(t)
	c := db.Collection("txnsteps")
	if err := db.CreateCollection(ctx, "txnsteps"); err != nil {
		t.Fatal(err)
	}
	cs := mustWatch(t, c, nil)
	sess, err := db.Client().StartSession()
	if err != nil {
		t.Fatal(err)
	}
	defer sess.EndSession(ctx)
	_, err = sess.WithTransaction(ctx, func(ctx context.Context) (any, error) {
		if _, err := c.InsertOne(ctx, bson.D{{Key: "_id", Value: 1}, {Key: "n", Value: 1}}); err != nil {
			return nil, err
		}
		if _, err := c.UpdateOne(ctx, bson.D{{Key: "_id", Value: 1}}, bson.D{{Key: "$set", Value: bson.D{{Key: "n", Value: 2}}}}); err != nil {
			return nil, err
		}
		if _, err := c.InsertOne(ctx, bson.D{{Key: "_id", Value: 2}}); err != nil {
			return nil, err
		}
		return c.DeleteOne(ctx, bson.D{{Key: "_id", Value: 1}})
	})
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for range 4 {
		ev := nextEvent(t, cs)
		got = append(got, ev["operationType"].(string))
		if ev["operationType"] == "update" {
			ud, _ := ev["updateDescription"].(bson.M)
			if uf, _ := ud["updatedFields"].(bson.M); uf["n"] != int32(2) {
				t.Errorf("update event %v, want updatedFields {n: 2}", ev)
			}
		}
	}
	if want := []string{"insert", "update", "insert", "delete"}; !slices.Equal(got, want) {
		t.Fatalf("events %v, want %v", got, want)
	}
	if n, err := c.CountDocuments(ctx, bson.D{}); err != nil || n != 1 {
		t.Fatalf("count %d, %v; want 1", n, err)
	}
}

// TestChangeStreamTransactionReplace replaces a document inside a
// transaction and expects a "replace" event carrying the new document, as
// mongod logs a replacement in applyOps, not an update diff.
func TestChangeStreamTransactionReplace(t *testing.T) {
	t.Parallel()
	_, db := newDB(t)
	ctx := ctxT(t)
	c := db.Collection("txnreplace")
	if _, err := c.InsertOne(ctx, bson.D{{Key: "_id", Value: 1}, {Key: "a", Value: 1}}); err != nil {
		t.Fatal(err)
	}
	cs := mustWatch(t, c, nil)
	sess, err := db.Client().StartSession()
	if err != nil {
		t.Fatal(err)
	}
	defer sess.EndSession(ctx)
	_, err = sess.WithTransaction(ctx, func(ctx context.Context) (any, error) {
		return c.ReplaceOne(ctx, bson.D{{Key: "_id", Value: 1}}, bson.D{{Key: "b", Value: 2}})
	})
	if err != nil {
		t.Fatal(err)
	}
	ev := nextEvent(t, cs)
	if ev["operationType"] != "replace" {
		t.Fatalf("event %v, want a replace", ev)
	}
	full, _ := ev["fullDocument"].(bson.M)
	if full["b"] != int32(2) || full["a"] != nil {
		t.Fatalf("fullDocument %v, want {_id: 1, b: 2}", full)
	}
}
