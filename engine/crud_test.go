package engine_test

import (
	"context"
	"errors"
	"fmt"
	"testing"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo"
	"go.mongodb.org/mongo-driver/v2/mongo/options"

	"github.com/formworkdb/formwork/engine"
	"github.com/formworkdb/formwork/internal/testenv"
)

func openStandalone(t *testing.T) *mongo.Database {
	_, client := testenv.Engine(t, engine.Options{Standalone: true})
	return client.Database("test")
}

func TestInsertFindRoundTrip(t *testing.T) {
	_, db := newDB(t)
	ctx := ctxT(t)
	c := db.Collection("people")
	res, err := c.InsertOne(ctx, bson.D{{Key: "name", Value: "ada"}, {Key: "age", Value: 36}})
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := res.InsertedID.(bson.ObjectID); !ok {
		t.Fatalf("generated _id is %T", res.InsertedID)
	}
	var got bson.D
	if err := c.FindOne(ctx, bson.D{{Key: "name", Value: "ada"}}).Decode(&got); err != nil {
		t.Fatal(err)
	}
	if got[0].Key != "_id" || got[1].Key != "name" || got[2].Value != int32(36) {
		t.Fatalf("stored document = %v", got)
	}
}

func TestInsertMovesIDFirst(t *testing.T) {
	_, db := newDB(t)
	ctx := ctxT(t)
	c := db.Collection("c")
	if _, err := c.InsertOne(ctx, bson.D{{Key: "a", Value: 1}, {Key: "_id", Value: 5}}); err != nil {
		t.Fatal(err)
	}
	raw, err := c.FindOne(ctx, bson.D{}).Raw()
	if err != nil {
		t.Fatal(err)
	}
	if raw.Index(0).Key() != "_id" || raw.Index(1).Key() != "a" {
		t.Fatalf("stored %v", raw)
	}
}

func TestInsertDuplicateKey(t *testing.T) {
	_, db := newDB(t)
	ctx := ctxT(t)
	c := db.Collection("c")
	_, err := c.InsertMany(ctx, []any{bson.D{{Key: "_id", Value: 1}}, bson.D{{Key: "_id", Value: 1.0}}, bson.D{{Key: "_id", Value: 2}}})
	var bwe mongo.BulkWriteException
	if !errors.As(err, &bwe) {
		t.Fatalf("err = %T %v", err, err)
	}
	if len(bwe.WriteErrors) != 1 || bwe.WriteErrors[0].Index != 1 || bwe.WriteErrors[0].Code != 11000 {
		t.Fatalf("write errors = %+v", bwe.WriteErrors)
	}
	want := "E11000 duplicate key error collection: test.c index: _id_ dup key: { _id: 1.0 }"
	if bwe.WriteErrors[0].Message != want {
		t.Fatalf("message = %q, want %q", bwe.WriteErrors[0].Message, want)
	}
	if !mongo.IsDuplicateKeyError(err) {
		t.Fatal("IsDuplicateKeyError = false")
	}
	// Ordered: the third document was not inserted.
	if n, _ := c.CountDocuments(ctx, bson.D{}); n != 1 {
		t.Fatalf("count after ordered failure = %d, want 1", n)
	}
	// Unordered: the third document goes in.
	_, err = c.InsertMany(ctx, []any{bson.D{{Key: "_id", Value: 1}}, bson.D{{Key: "_id", Value: 3}}}, options.InsertMany().SetOrdered(false))
	if !mongo.IsDuplicateKeyError(err) {
		t.Fatalf("err = %v", err)
	}
	if n, _ := c.CountDocuments(ctx, bson.D{}); n != 2 {
		t.Fatalf("count after unordered = %d, want 2", n)
	}
}

func TestDuplicateKeyReplyCarriesKeyPatternAndValue(t *testing.T) {
	engineDB, db := newDB(t)
	ctx := ctxT(t)
	if _, err := db.Collection("c").InsertOne(ctx, bson.D{{Key: "_id", Value: "x"}}); err != nil {
		t.Fatal(err)
	}
	rc := dialRaw(t, engineDB)
	reply := rc.run(bson.D{{Key: "insert", Value: "c"}, {Key: "documents", Value: bson.A{bson.D{{Key: "_id", Value: "x"}}}}, {Key: "$db", Value: "test"}})
	we := bson.Raw(reply.Lookup("writeErrors").Array()).Index(0).Value().Document()
	if we.Lookup("code").Int32() != 11000 {
		t.Fatalf("writeErrors[0] = %v", we)
	}
	if we.Lookup("keyPattern", "_id").Int32() != 1 || we.Lookup("keyValue", "_id").StringValue() != "x" {
		t.Fatalf("keyPattern/keyValue missing: %v", we)
	}
}

func TestInsertRejectsInvalidDocuments(t *testing.T) {
	_, db := newDB(t)
	ctx := ctxT(t)
	c := db.Collection("c")
	cases := []struct {
		doc  bson.D
		code int
	}{
		{bson.D{{Key: "_id", Value: bson.A{1}}}, 2},
		{bson.D{{Key: "_id", Value: bson.Regex{Pattern: "a"}}}, 2},
		{bson.D{{Key: "_id", Value: bson.D{{Key: "$b", Value: 1}}}}, 52},
	}
	for _, tc := range cases {
		_, err := c.InsertOne(ctx, tc.doc)
		wantCode(t, err, tc.code, "")
	}
	// MongoDB 5.0+ stores $-prefixed field names outside _id.
	if _, err := c.InsertOne(ctx, bson.D{{Key: "_id", Value: 1}, {Key: "$v", Value: 1}}); err != nil {
		t.Fatalf("insert with $-prefixed field: %v", err)
	}
	big := make([]byte, 16*1024*1024)
	_, err := c.InsertOne(ctx, bson.D{{Key: "b", Value: bson.Binary{Data: big}}})
	if err == nil {
		t.Fatal("16 MiB document was accepted")
	}
}

func seed(t *testing.T, c *mongo.Collection, n int) {
	t.Helper()
	docs := make([]any, n)
	for i := range docs {
		docs[i] = bson.D{{Key: "_id", Value: i}, {Key: "n", Value: i}, {Key: "g", Value: i % 3}, {Key: "s", Value: fmt.Sprintf("s%03d", i)}}
	}
	if _, err := c.InsertMany(ctxT(t), docs); err != nil {
		t.Fatal(err)
	}
}

func ids(t *testing.T, cur *mongo.Cursor) []int32 {
	t.Helper()
	var out []int32
	for cur.Next(ctxT(t)) {
		out = append(out, cur.Current.Lookup("_id").Int32())
	}
	if err := cur.Err(); err != nil {
		t.Fatal(err)
	}
	cur.Close(ctxT(t))
	return out
}

func TestFindOptions(t *testing.T) {
	_, db := newDB(t)
	ctx := ctxT(t)
	c := db.Collection("c")
	seed(t, c, 20)
	cur, err := c.Find(ctx, bson.D{{Key: "g", Value: 1}, {Key: "n", Value: bson.D{{Key: "$gte", Value: 4}}}},
		options.Find().SetSort(bson.D{{Key: "n", Value: -1}}).SetSkip(1).SetLimit(3).SetProjection(bson.D{{Key: "s", Value: 0}}))
	if err != nil {
		t.Fatal(err)
	}
	got := ids(t, cur)
	if fmt.Sprint(got) != "[16 13 10]" {
		t.Fatalf("ids = %v", got)
	}
	var doc bson.D
	if err := c.FindOne(ctx, bson.D{{Key: "_id", Value: 3}}, options.FindOne().SetProjection(bson.D{{Key: "s", Value: 1}, {Key: "_id", Value: 0}})).Decode(&doc); err != nil {
		t.Fatal(err)
	}
	if len(doc) != 1 || doc[0].Key != "s" || doc[0].Value != "s003" {
		t.Fatalf("projected = %v", doc)
	}
	cur, err = c.Find(ctx, bson.D{{Key: "$or", Value: bson.A{bson.D{{Key: "n", Value: 2}}, bson.D{{Key: "n", Value: bson.D{{Key: "$in", Value: bson.A{5, 7}}}}}}}}, options.Find().SetHint("_id_"))
	if err != nil {
		t.Fatal(err)
	}
	if got := ids(t, cur); fmt.Sprint(got) != "[2 5 7]" {
		t.Fatalf("$or ids = %v", got)
	}
}

func TestCursorBatchesAndGetMore(t *testing.T) {
	_, db := newDB(t)
	ctx := ctxT(t)
	c := db.Collection("c")
	seed(t, c, 250)
	cur, err := c.Find(ctx, bson.D{}, options.Find().SetBatchSize(7))
	if err != nil {
		t.Fatal(err)
	}
	if cur.RemainingBatchLength() != 7 {
		t.Fatalf("first batch = %d", cur.RemainingBatchLength())
	}
	if got := ids(t, cur); len(got) != 250 || got[249] != 249 {
		t.Fatalf("read %d docs", len(got))
	}
	var res bson.Raw
	res, err = db.RunCommand(ctx, bson.D{{Key: "find", Value: "c"}, {Key: "batchSize", Value: 2}, {Key: "singleBatch", Value: true}}).Raw()
	if err != nil {
		t.Fatal(err)
	}
	if id := res.Lookup("cursor", "id").Int64(); id != 0 {
		t.Fatalf("singleBatch left cursor %d open", id)
	}
	res, err = db.RunCommand(ctx, bson.D{{Key: "find", Value: "c"}, {Key: "batchSize", Value: 2}}).Raw()
	if err != nil {
		t.Fatal(err)
	}
	id := res.Lookup("cursor", "id").Int64()
	if id == 0 {
		t.Fatal("cursor closed early")
	}
	var kc struct {
		Killed []int64 `bson:"cursorsKilled"`
	}
	if err := db.RunCommand(ctx, bson.D{{Key: "killCursors", Value: "c"}, {Key: "cursors", Value: bson.A{id}}}).Decode(&kc); err != nil {
		t.Fatal(err)
	}
	if len(kc.Killed) != 1 || kc.Killed[0] != id {
		t.Fatalf("killed = %v", kc.Killed)
	}
	err = db.RunCommand(ctx, bson.D{{Key: "getMore", Value: id}, {Key: "collection", Value: "c"}}).Err()
	wantCode(t, err, 43, "CursorNotFound")
}

func TestCursorReadsSnapshot(t *testing.T) {
	_, db := newDB(t)
	ctx := ctxT(t)
	c := db.Collection("c")
	seed(t, c, 10)
	cur, err := c.Find(ctx, bson.D{}, options.Find().SetBatchSize(2))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.DeleteMany(ctx, bson.D{}); err != nil {
		t.Fatal(err)
	}
	if _, err := c.InsertOne(ctx, bson.D{{Key: "_id", Value: 100}}); err != nil {
		t.Fatal(err)
	}
	if got := ids(t, cur); len(got) != 10 || got[9] != 9 {
		t.Fatalf("cursor saw %v", got)
	}
}

func TestIdleCursorsExpire(t *testing.T) {
	_, client := testenv.Engine(t, engine.Options{CursorTimeout: 50e6})
	db := client.Database("test")
	ctx := ctxT(t)
	seed(t, db.Collection("c"), 10)
	res, err := db.RunCommand(ctx, bson.D{{Key: "find", Value: "c"}, {Key: "batchSize", Value: 2}}).Raw()
	if err != nil {
		t.Fatal(err)
	}
	id := res.Lookup("cursor", "id").Int64()
	deadline := 500 // 20 ms apart: up to 10 s on a loaded machine
	for i := 0; i < deadline; i++ {
		// No deadline, which the driver would send as maxTimeMS.
		err = db.RunCommand(context.Background(), bson.D{{Key: "getMore", Value: id}, {Key: "collection", Value: "c"}, {Key: "batchSize", Value: 1}}).Err()
		if err != nil {
			break
		}
		sleepMS(20)
	}
	wantCode(t, err, 43, "CursorNotFound")
}

func TestUpdateCommand(t *testing.T) {
	_, db := newDB(t)
	ctx := ctxT(t)
	c := db.Collection("c")
	seed(t, c, 6)
	res, err := c.UpdateMany(ctx, bson.D{{Key: "g", Value: 0}}, bson.D{{Key: "$set", Value: bson.D{{Key: "tag", Value: "zero"}}}, {Key: "$inc", Value: bson.D{{Key: "n", Value: 10}}}})
	if err != nil {
		t.Fatal(err)
	}
	if res.MatchedCount != 2 || res.ModifiedCount != 2 {
		t.Fatalf("update result %+v", res)
	}
	// A no-op update matches but does not modify.
	res, err = c.UpdateOne(ctx, bson.D{{Key: "_id", Value: 0}}, bson.D{{Key: "$set", Value: bson.D{{Key: "tag", Value: "zero"}}}})
	if err != nil {
		t.Fatal(err)
	}
	if res.MatchedCount != 1 || res.ModifiedCount != 0 {
		t.Fatalf("no-op update result %+v", res)
	}
	res, err = c.UpdateOne(ctx, bson.D{{Key: "_id", Value: 1}}, bson.D{{Key: "$push", Value: bson.D{{Key: "tags", Value: "a"}}}, {Key: "$unset", Value: bson.D{{Key: "s", Value: ""}}}})
	if err != nil || res.ModifiedCount != 1 {
		t.Fatalf("push: %+v %v", res, err)
	}
	var doc bson.M
	if err := c.FindOne(ctx, bson.D{{Key: "_id", Value: 1}}).Decode(&doc); err != nil {
		t.Fatal(err)
	}
	if _, ok := doc["s"]; ok || fmt.Sprint(doc["tags"]) != "[a]" {
		t.Fatalf("after push/unset: %v", doc)
	}
	res, err = c.UpdateOne(ctx, bson.D{{Key: "_id", Value: 99}}, bson.D{{Key: "$set", Value: bson.D{{Key: "x", Value: 1}}}}, options.UpdateOne().SetUpsert(true))
	if err != nil {
		t.Fatal(err)
	}
	if res.UpsertedCount != 1 || res.UpsertedID != int32(99) || res.MatchedCount != 0 {
		t.Fatalf("upsert result %+v", res)
	}
	rr, err := c.ReplaceOne(ctx, bson.D{{Key: "_id", Value: 2}}, bson.D{{Key: "only", Value: true}})
	if err != nil || rr.ModifiedCount != 1 {
		t.Fatalf("replace %+v %v", rr, err)
	}
	raw, _ := c.FindOne(ctx, bson.D{{Key: "_id", Value: 2}}).Raw()
	if elems, _ := raw.Elements(); len(elems) != 2 || raw.Lookup("only").Boolean() != true {
		t.Fatalf("replaced = %v", raw)
	}
	_, err = c.UpdateOne(ctx, bson.D{{Key: "_id", Value: 3}}, bson.D{{Key: "$set", Value: bson.D{{Key: "_id", Value: 4}}}})
	wantCode(t, err, 66, "")
	_, err = c.UpdateOne(ctx, bson.D{{Key: "_id", Value: 3}}, bson.D{{Key: "$inc", Value: bson.D{{Key: "s", Value: 1}}}})
	wantCode(t, err, 14, "")
}

func TestDeleteAndCount(t *testing.T) {
	_, db := newDB(t)
	ctx := ctxT(t)
	c := db.Collection("c")
	seed(t, c, 9)
	dr, err := c.DeleteOne(ctx, bson.D{{Key: "g", Value: 2}})
	if err != nil || dr.DeletedCount != 1 {
		t.Fatalf("deleteOne %+v %v", dr, err)
	}
	dr, err = c.DeleteMany(ctx, bson.D{{Key: "g", Value: 2}})
	if err != nil || dr.DeletedCount != 2 {
		t.Fatalf("deleteMany %+v %v", dr, err)
	}
	n, err := c.CountDocuments(ctx, bson.D{{Key: "n", Value: bson.D{{Key: "$lt", Value: 5}}}})
	if err != nil || n != 4 {
		t.Fatalf("countDocuments = %d %v", n, err)
	}
	est, err := c.EstimatedDocumentCount(ctx)
	if err != nil || est != 6 {
		t.Fatalf("estimated = %d %v", est, err)
	}
	var cr struct {
		N int32 `bson:"n"`
	}
	if err := db.RunCommand(ctx, bson.D{{Key: "count", Value: "c"}, {Key: "query", Value: bson.D{{Key: "g", Value: 0}}}, {Key: "limit", Value: 2}}).Decode(&cr); err != nil || cr.N != 2 {
		t.Fatalf("count = %d %v", cr.N, err)
	}
	err = db.RunCommand(ctx, bson.D{{Key: "delete", Value: "c"}, {Key: "deletes", Value: bson.A{bson.D{{Key: "q", Value: bson.D{}}, {Key: "limit", Value: 2}}}}}).Err()
	wantCode(t, err, 9, "FailedToParse")
}

func TestDistinct(t *testing.T) {
	_, db := newDB(t)
	ctx := ctxT(t)
	c := db.Collection("c")
	_, err := c.InsertMany(ctx, []any{
		bson.D{{Key: "a", Value: bson.A{1, 2}}},
		bson.D{{Key: "a", Value: 2.0}},
		bson.D{{Key: "a", Value: "x"}},
		bson.D{{Key: "b", Value: 1}},
		bson.D{{Key: "a", Value: bson.D{{Key: "b", Value: 1}}}},
	})
	if err != nil {
		t.Fatal(err)
	}
	res := c.Distinct(ctx, "a", bson.D{})
	raw, err := res.Raw()
	if err != nil {
		t.Fatal(err)
	}
	vals, _ := raw.Values()
	// Array elements count one by one, 2 and 2.0 are one value, and the
	// result is in BSON order: numbers, strings, documents.
	if len(vals) != 4 || vals[0].Int32() != 1 || vals[1].Type != bson.TypeInt32 || vals[2].StringValue() != "x" || vals[3].Type != bson.TypeEmbeddedDocument {
		t.Fatalf("distinct = %v", vals)
	}
}

func TestFindOneAndModify(t *testing.T) {
	_, db := newDB(t)
	ctx := ctxT(t)
	c := db.Collection("c")
	seed(t, c, 5)
	var doc bson.M
	err := c.FindOneAndUpdate(ctx, bson.D{{Key: "g", Value: 1}}, bson.D{{Key: "$inc", Value: bson.D{{Key: "n", Value: 100}}}},
		options.FindOneAndUpdate().SetSort(bson.D{{Key: "n", Value: -1}}).SetReturnDocument(options.After)).Decode(&doc)
	if err != nil {
		t.Fatal(err)
	}
	if doc["_id"] != int32(4) || doc["n"] != int32(104) {
		t.Fatalf("findOneAndUpdate = %v", doc)
	}
	err = c.FindOneAndDelete(ctx, bson.D{{Key: "_id", Value: 0}}).Decode(&doc)
	if err != nil || doc["_id"] != int32(0) {
		t.Fatalf("findOneAndDelete = %v %v", doc, err)
	}
	err = c.FindOneAndReplace(ctx, bson.D{{Key: "_id", Value: 50}}, bson.D{{Key: "r", Value: 1}},
		options.FindOneAndReplace().SetUpsert(true).SetReturnDocument(options.After)).Decode(&doc)
	if err != nil || doc["_id"] != int32(50) || doc["r"] != int32(1) {
		t.Fatalf("upsert replace = %v %v", doc, err)
	}
	err = c.FindOneAndDelete(ctx, bson.D{{Key: "_id", Value: 0}}).Err()
	if !errors.Is(err, mongo.ErrNoDocuments) {
		t.Fatalf("missing doc: %v", err)
	}
	var leo struct {
		LEO struct {
			N        int32 `bson:"n"`
			Existing bool  `bson:"updatedExisting"`
			Upserted any   `bson:"upserted"`
		} `bson:"lastErrorObject"`
	}
	err = db.RunCommand(ctx, bson.D{{Key: "findAndModify", Value: "c"}, {Key: "query", Value: bson.D{{Key: "_id", Value: 77}}},
		{Key: "update", Value: bson.D{{Key: "$set", Value: bson.D{{Key: "x", Value: 1}}}}}, {Key: "upsert", Value: true}}).Decode(&leo)
	if err != nil || leo.LEO.N != 1 || leo.LEO.Existing || leo.LEO.Upserted != int32(77) {
		t.Fatalf("lastErrorObject = %+v %v", leo, err)
	}
	err = db.RunCommand(ctx, bson.D{{Key: "findAndModify", Value: "c"}, {Key: "remove", Value: true}, {Key: "update", Value: bson.D{}}}).Err()
	wantCode(t, err, 9, "FailedToParse")
}

func TestBatchesStopAt16MiB(t *testing.T) {
	_, db := newDB(t)
	ctx := ctxT(t)
	c := db.Collection("big")
	blob := make([]byte, 7<<20)
	for i := 0; i < 3; i++ {
		if _, err := c.InsertOne(ctx, bson.D{{Key: "_id", Value: i}, {Key: "b", Value: bson.Binary{Data: blob}}}); err != nil {
			t.Fatal(err)
		}
	}
	res, err := db.RunCommand(ctx, bson.D{{Key: "find", Value: "big"}}).Raw()
	if err != nil {
		t.Fatal(err)
	}
	first, _ := res.Lookup("cursor", "firstBatch").Array().Values()
	if len(first) != 2 || res.Lookup("cursor", "id").Int64() == 0 {
		t.Fatalf("first batch has %d documents", len(first))
	}
	// No deadline: the driver would send it as maxTimeMS, which getMore
	// refuses on a cursor that is not awaitData.
	more, err := db.RunCommand(context.Background(), bson.D{{Key: "getMore", Value: res.Lookup("cursor", "id").Int64()}, {Key: "collection", Value: "big"}}).Raw()
	if err != nil {
		t.Fatal(err)
	}
	next, _ := more.Lookup("cursor", "nextBatch").Array().Values()
	if len(next) != 1 || next[0].Document().Lookup("_id").Int32() != 2 || more.Lookup("cursor", "id").Int64() != 0 {
		t.Fatalf("next batch = %d docs, id %d", len(next), more.Lookup("cursor", "id").Int64())
	}
}

func TestMalformedWriteStatementsFailTheCommand(t *testing.T) {
	_, db := newDB(t)
	ctx := ctxT(t)
	seed(t, db.Collection("c"), 2)
	cases := []struct {
		cmd  bson.D
		code int
	}{
		{bson.D{{Key: "update", Value: "c"}, {Key: "updates", Value: bson.A{
			bson.D{{Key: "q", Value: bson.D{}}, {Key: "u", Value: bson.D{{Key: "$set", Value: bson.D{{Key: "a", Value: 1}}}}}},
			bson.D{{Key: "q", Value: bson.D{}}, {Key: "u", Value: bson.D{}}, {Key: "bogus", Value: 1}},
		}}}, 40415},
		{bson.D{{Key: "update", Value: "c"}, {Key: "updates", Value: bson.A{bson.D{{Key: "u", Value: bson.D{}}}}}}, 40414},
		{bson.D{{Key: "delete", Value: "c"}, {Key: "deletes", Value: bson.A{bson.D{{Key: "q", Value: bson.D{}}}}}}, 40414},
	}
	for _, c := range cases {
		err := db.RunCommand(ctx, c.cmd).Err()
		wantCode(t, err, c.code, "")
	}
	// The valid first statement of the rejected command did not run.
	if n, _ := db.Collection("c").CountDocuments(ctx, bson.D{{Key: "a", Value: 1}}); n != 0 {
		t.Fatalf("%d documents updated by a rejected command", n)
	}
}
