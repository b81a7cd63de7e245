package engine_test

import (
	"testing"

	"go.mongodb.org/mongo-driver/v2/bson"
)

func TestWriteAndReadConcerns(t *testing.T) {
	edb, db := newDB(t)
	ctx := ctxT(t)
	rc := dialRaw(t, edb)
	ins := func(wc bson.D) bson.Raw {
		return rc.run(bson.D{{Key: "insert", Value: "c"}, {Key: "documents", Value: bson.A{bson.D{}}}, {Key: "writeConcern", Value: wc}, {Key: "$db", Value: "test"}})
	}
	if r := ins(bson.D{{Key: "w", Value: "majority"}, {Key: "j", Value: true}, {Key: "wtimeout", Value: 100}}); r.Lookup("ok").Double() != 1 || r.Lookup("writeConcernError").Type != 0 {
		t.Fatalf("majority: %v", r)
	}
	r := ins(bson.D{{Key: "w", Value: 3}})
	if r.Lookup("n").Int32() != 1 || r.Lookup("writeConcernError", "code").Int32() != 100 {
		t.Fatalf("w:3 on one node: %v", r)
	}
	r = ins(bson.D{{Key: "w", Value: "dc1"}})
	if r.Lookup("writeConcernError", "codeName").StringValue() != "UnknownReplWriteConcern" {
		t.Fatalf("unknown tag: %v", r)
	}
	r = ins(bson.D{{Key: "bogus", Value: 1}})
	if r.Lookup("code").Int32() != 40415 {
		t.Fatalf("unknown writeConcern field: %v", r)
	}
	r = rc.run(bson.D{{Key: "find", Value: "c"}, {Key: "readConcern", Value: bson.D{{Key: "level", Value: "majority"}}}, {Key: "$db", Value: "test"}})
	if r.Lookup("ok").Double() != 1 {
		t.Fatalf("readConcern majority: %v", r)
	}
	r = rc.run(bson.D{{Key: "find", Value: "c"}, {Key: "readConcern", Value: bson.D{{Key: "level", Value: "bogus"}}}, {Key: "$db", Value: "test"}})
	if r.Lookup("code").Int32() != 9 {
		t.Fatalf("bad readConcern level: %v", r)
	}
	if n, _ := db.Collection("c").CountDocuments(ctx, bson.D{}); n != 3 {
		t.Fatalf("count = %d, want 3", n)
	}
}
