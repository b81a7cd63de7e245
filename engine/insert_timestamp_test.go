package engine_test

import (
	"testing"
	"time"

	"go.mongodb.org/mongo-driver/v2/bson"
)

// TestInsertFillsEmptyTimestamps checks mongod's rule: a top-level
// Timestamp(0, 0) is replaced with the current cluster time on insert,
// each with its own increment; one in _id or nested is stored as is.
func TestInsertFillsEmptyTimestamps(t *testing.T) {
	t.Parallel()
	_, db := newDB(t)
	ctx := ctxT(t)
	c := db.Collection("ts")
	zero := bson.Timestamp{}
	before := uint32(time.Now().Unix())
	if _, err := c.InsertOne(ctx, bson.D{{Key: "_id", Value: zero}, {Key: "a", Value: zero}, {Key: "b", Value: bson.D{{Key: "c", Value: zero}}}, {Key: "d", Value: zero}, {Key: "e", Value: bson.Timestamp{T: 5, I: 0}}}); err != nil {
		t.Fatal(err)
	}
	var got struct {
		ID bson.Timestamp `bson:"_id"`
		A  bson.Timestamp `bson:"a"`
		B  struct {
			C bson.Timestamp `bson:"c"`
		} `bson:"b"`
		D bson.Timestamp `bson:"d"`
		E bson.Timestamp `bson:"e"`
	}
	if err := c.FindOne(ctx, bson.D{}).Decode(&got); err != nil {
		t.Fatal(err)
	}
	if got.ID != zero || got.B.C != zero {
		t.Errorf("_id or nested timestamp changed: %+v", got)
	}
	if got.A.T < before || got.D.T < before || got.A == got.D {
		t.Errorf("top-level empty timestamps not filled with distinct cluster times: a=%v d=%v", got.A, got.D)
	}
	if got.E != (bson.Timestamp{T: 5}) {
		t.Errorf("a non-empty timestamp changed: %v", got.E)
	}
}
