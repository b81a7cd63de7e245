package engine_test

import (
	"strings"
	"testing"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo"
	"go.mongodb.org/mongo-driver/v2/mongo/options"
	"go.mongodb.org/mongo-driver/v2/mongo/readconcern"
)

// TestReadConcernAfterClusterTime: a read after the operationTime of a
// write sees it, at levels local, majority and snapshot and in a
// causally consistent session and transaction; a time past the current
// cluster time answers InvalidOptions, as do levels that do not take
// afterClusterTime.
func TestReadConcernAfterClusterTime(t *testing.T) {
	t.Parallel()
	_, db := newDB(t)
	ctx := ctxT(t)
	sess, err := db.Client().StartSession(options.Session().SetCausalConsistency(true))
	if err != nil {
		t.Fatal(err)
	}
	defer sess.EndSession(ctx)
	sc := mongo.NewSessionContext(ctx, sess)
	c := db.Collection("after")
	if _, err := c.InsertOne(sc, bson.D{{Key: "_id", Value: 1}}); err != nil {
		t.Fatal(err)
	}
	op := sess.OperationTime()
	if op == nil || op.T == 0 {
		t.Fatalf("no operationTime after a write: %v", op)
	}
	find := func(rc bson.D) (int, error) {
		var res struct {
			Cursor struct {
				FirstBatch []bson.Raw `bson:"firstBatch"`
			} `bson:"cursor"`
		}
		err := db.RunCommand(ctx, bson.D{{Key: "find", Value: "after"}, {Key: "readConcern", Value: rc}}).Decode(&res)
		return len(res.Cursor.FirstBatch), err
	}
	for _, level := range []string{"", "local", "majority", "snapshot"} {
		rc := bson.D{{Key: "afterClusterTime", Value: *op}}
		if level != "" {
			rc = append(bson.D{{Key: "level", Value: level}}, rc...)
		}
		n, err := find(rc)
		if err != nil || n != 1 {
			t.Fatalf("level %q: %d documents, %v; want 1", level, n, err)
		}
	}
	future := bson.Timestamp{T: op.T + 1000, I: 1}
	_, err = find(bson.D{{Key: "afterClusterTime", Value: future}})
	wantCode(t, err, 72, "InvalidOptions")
	if !strings.HasPrefix(err.Error(), "(InvalidOptions) readConcern afterClusterTime value must not be greater than the current clusterTime. Requested clusterTime: { ts: Timestamp(") {
		t.Fatalf("message: %v", err)
	}
	for _, level := range []string{"linearizable", "available"} {
		_, err = find(bson.D{{Key: "level", Value: level}, {Key: "afterClusterTime", Value: *op}})
		wantCode(t, err, 72, "InvalidOptions")
	}
	_, err = find(bson.D{{Key: "afterClusterTime", Value: bson.Timestamp{}}})
	wantCode(t, err, 72, "InvalidOptions")
	_, err = find(bson.D{{Key: "level", Value: "snapshot"}, {Key: "afterClusterTime", Value: *op}, {Key: "atClusterTime", Value: *op}})
	wantCode(t, err, 72, "InvalidOptions")

	// The driver sends afterClusterTime on the session's next read and on
	// the first statement of its transaction.
	if n, err := c.CountDocuments(sc, bson.D{}); err != nil || n != 1 {
		t.Fatalf("causal read: %d, %v", n, err)
	}
	if err := sess.StartTransaction(options.Transaction().SetReadConcern(readconcern.Snapshot())); err != nil {
		t.Fatal(err)
	}
	if err := c.FindOne(sc, bson.D{{Key: "_id", Value: 1}}).Err(); err != nil {
		t.Fatalf("transaction read: %v", err)
	}
	if err := sess.CommitTransaction(ctx); err != nil {
		t.Fatal(err)
	}
}
