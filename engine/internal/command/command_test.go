package command

import (
	"context"
	"testing"
	"time"

	"go.mongodb.org/mongo-driver/v2/bson"

	"github.com/formworkdb/formwork/engine/internal/storage"
)

func newEnv(t testing.TB) *Env {
	t.Helper()
	st, err := storage.Open(storage.Options{})
	if err != nil {
		t.Fatal(err)
	}
	e := NewEnv(st, Config{})
	t.Cleanup(func() { e.Close(); st.Close() })
	return e
}

func run(t testing.TB, e *Env, ctx context.Context, cmd bson.D) bson.Raw {
	t.Helper()
	b, err := bson.Marshal(cmd)
	if err != nil {
		t.Fatal(err)
	}
	return e.Dispatch(ctx, e.NewConn("test", "test"), b)
}

func TestMaxTimeMSExpired(t *testing.T) {
	e := newEnv(t)
	docs := bson.A{}
	for i := 0; i < 5000; i++ {
		docs = append(docs, bson.D{{Key: "_id", Value: i}})
	}
	reply := run(t, e, context.Background(), bson.D{{Key: "insert", Value: "c"}, {Key: "documents", Value: docs}, {Key: "$db", Value: "d"}})
	if reply.Lookup("n").Int32() != 5000 {
		t.Fatalf("insert: %v", reply)
	}
	ctx, cancel := context.WithDeadline(context.Background(), time.Now().Add(-time.Second))
	defer cancel()
	reply = run(t, e, ctx, bson.D{{Key: "find", Value: "c"}, {Key: "filter", Value: bson.D{{Key: "x", Value: 1}}}, {Key: "maxTimeMS", Value: 1}, {Key: "$db", Value: "d"}})
	if reply.Lookup("code").Int32() != 50 || reply.Lookup("codeName").StringValue() != "MaxTimeMSExpired" {
		t.Fatalf("reply = %v", reply)
	}
}

func TestReplyShape(t *testing.T) {
	e := newEnv(t)
	reply := run(t, e, context.Background(), bson.D{{Key: "ping", Value: 1}, {Key: "$db", Value: "admin"}})
	if reply.Lookup("ok").Double() != 1 {
		t.Fatalf("ping: %v", reply)
	}
	if reply.Lookup("$clusterTime", "clusterTime").Type != bson.TypeTimestamp || reply.Lookup("operationTime").Type != bson.TypeTimestamp {
		t.Fatalf("replica set reply lacks cluster time: %v", reply)
	}
	reply = run(t, e, context.Background(), bson.D{{Key: "ping", Value: 1}})
	if reply.Lookup("ok").Double() != 0 || reply.Lookup("codeName").StringValue() != "InvalidNamespace" {
		t.Fatalf("missing $db: %v", reply)
	}
	reply = run(t, e, context.Background(), bson.D{})
	if reply.Lookup("ok").Double() != 0 {
		t.Fatalf("empty command: %v", reply)
	}
}

// FuzzDispatch runs arbitrary command documents: every input gets a reply
// document with ok 0 or 1, and nothing panics.
func FuzzDispatch(f *testing.F) {
	seeds := []bson.D{
		{{Key: "find", Value: "c"}, {Key: "filter", Value: bson.D{{Key: "a", Value: bson.D{{Key: "$gt", Value: 1}}}}}, {Key: "$db", Value: "d"}},
		{{Key: "insert", Value: "c"}, {Key: "documents", Value: bson.A{bson.D{{Key: "a", Value: 1}}}}, {Key: "$db", Value: "d"}},
		{{Key: "update", Value: "c"}, {Key: "updates", Value: bson.A{bson.D{{Key: "q", Value: bson.D{}}, {Key: "u", Value: bson.D{{Key: "$inc", Value: bson.D{{Key: "a", Value: 1}}}}}, {Key: "upsert", Value: true}}}}, {Key: "$db", Value: "d"}},
		{{Key: "delete", Value: "c"}, {Key: "deletes", Value: bson.A{bson.D{{Key: "q", Value: bson.D{}}, {Key: "limit", Value: 0}}}}, {Key: "$db", Value: "d"}},
		{{Key: "findAndModify", Value: "c"}, {Key: "query", Value: bson.D{}}, {Key: "remove", Value: true}, {Key: "$db", Value: "d"}},
		{{Key: "createIndexes", Value: "c"}, {Key: "indexes", Value: bson.A{bson.D{{Key: "key", Value: bson.D{{Key: "a", Value: 1}}}, {Key: "name", Value: "a_1"}}}}, {Key: "$db", Value: "d"}},
		{{Key: "aggregate", Value: "c"}, {Key: "pipeline", Value: bson.A{bson.D{{Key: "$match", Value: bson.D{}}}, bson.D{{Key: "$group", Value: bson.D{{Key: "_id", Value: 1}, {Key: "n", Value: bson.D{{Key: "$sum", Value: 1}}}}}}}}, {Key: "cursor", Value: bson.D{}}, {Key: "$db", Value: "d"}},
		{{Key: "hello", Value: 1}, {Key: "$db", Value: "admin"}},
		{{Key: "distinct", Value: "c"}, {Key: "key", Value: "a"}, {Key: "$db", Value: "d"}},
		{{Key: "renameCollection", Value: "d.c"}, {Key: "to", Value: "d.e"}, {Key: "$db", Value: "admin"}},
		{{Key: "create", Value: "v"}, {Key: "viewOn", Value: "c"}, {Key: "pipeline", Value: bson.A{bson.D{{Key: "$match", Value: bson.D{{Key: "a", Value: 1}}}}}}, {Key: "$db", Value: "d"}},
		{{Key: "aggregate", Value: "c"}, {Key: "pipeline", Value: bson.A{
			bson.D{{Key: "$lookup", Value: bson.D{{Key: "from", Value: "c"}, {Key: "localField", Value: "a"}, {Key: "foreignField", Value: "a"}, {Key: "as", Value: "j"}}}},
			bson.D{{Key: "$unwind", Value: "$j"}},
			bson.D{{Key: "$merge", Value: bson.D{{Key: "into", Value: "m"}}}},
		}}, {Key: "cursor", Value: bson.D{}}, {Key: "$db", Value: "d"}},
		{{Key: "aggregate", Value: 1}, {Key: "pipeline", Value: bson.A{bson.D{{Key: "$documents", Value: bson.A{bson.D{{Key: "x", Value: 1}}}}},
			bson.D{{Key: "$setWindowFields", Value: bson.D{{Key: "sortBy", Value: bson.D{{Key: "x", Value: 1}}}, {Key: "output", Value: bson.D{{Key: "r", Value: bson.D{{Key: "$rank", Value: bson.D{}}}}}}}}},
			bson.D{{Key: "$out", Value: "o"}}}}, {Key: "cursor", Value: bson.D{}}, {Key: "$db", Value: "d"}},
		{{Key: "find", Value: "c"}, {Key: "filter", Value: bson.D{{Key: "$expr", Value: bson.D{{Key: "$eq", Value: bson.A{"$a", "$$v"}}}}}},
			{Key: "projection", Value: bson.D{{Key: "s", Value: bson.D{{Key: "$concat", Value: bson.A{"x", "$b"}}}}}}, {Key: "let", Value: bson.D{{Key: "v", Value: 1}}}, {Key: "$db", Value: "d"}},
		{{Key: "update", Value: "c"}, {Key: "updates", Value: bson.A{bson.D{{Key: "q", Value: bson.D{}}, {Key: "u", Value: bson.A{bson.D{{Key: "$set", Value: bson.D{{Key: "n", Value: bson.D{{Key: "$add", Value: bson.A{"$a", 1}}}}}}}}}, {Key: "multi", Value: true}}}}, {Key: "$db", Value: "d"}},
		{{Key: "currentOp", Value: 1}, {Key: "$all", Value: true}, {Key: "$db", Value: "admin"}},
		{{Key: "killOp", Value: 1}, {Key: "op", Value: 1}, {Key: "$db", Value: "admin"}},
		// Validation, collation, time series, failpoints (this session's commands).
		{{Key: "create", Value: "s"}, {Key: "validator", Value: bson.D{{Key: "$jsonSchema", Value: bson.D{{Key: "required", Value: bson.A{"a"}}, {Key: "properties", Value: bson.D{{Key: "a", Value: bson.D{{Key: "bsonType", Value: "int"}, {Key: "minimum", Value: 0}}}}}}}}}, {Key: "validationAction", Value: "error"}, {Key: "$db", Value: "d"}},
		{{Key: "collMod", Value: "s"}, {Key: "validator", Value: bson.D{{Key: "a", Value: bson.D{{Key: "$gt", Value: 1}}}}}, {Key: "validationLevel", Value: "moderate"}, {Key: "$db", Value: "d"}},
		{{Key: "create", Value: "k"}, {Key: "collation", Value: bson.D{{Key: "locale", Value: "en"}, {Key: "strength", Value: 2}}}, {Key: "$db", Value: "d"}},
		{{Key: "find", Value: "k"}, {Key: "filter", Value: bson.D{{Key: "a", Value: "X"}}}, {Key: "sort", Value: bson.D{{Key: "a", Value: 1}}}, {Key: "collation", Value: bson.D{{Key: "locale", Value: "fr"}, {Key: "caseFirst", Value: "upper"}, {Key: "numericOrdering", Value: true}}}, {Key: "$db", Value: "d"}},
		{{Key: "create", Value: "t"}, {Key: "timeseries", Value: bson.D{{Key: "timeField", Value: "t"}, {Key: "metaField", Value: "m"}, {Key: "granularity", Value: "minutes"}}}, {Key: "expireAfterSeconds", Value: 60}, {Key: "$db", Value: "d"}},
		{{Key: "insert", Value: "t"}, {Key: "documents", Value: bson.A{bson.D{{Key: "t", Value: bson.DateTime(0)}, {Key: "m", Value: 1}, {Key: "v", Value: 2.5}}}}, {Key: "$db", Value: "d"}},
		{{Key: "aggregate", Value: "t"}, {Key: "pipeline", Value: bson.A{bson.D{{Key: "$match", Value: bson.D{{Key: "m", Value: 1}, {Key: "t", Value: bson.D{{Key: "$gte", Value: bson.DateTime(0)}}}}}}}}, {Key: "cursor", Value: bson.D{}}, {Key: "$db", Value: "d"}},
		{{Key: "configureFailPoint", Value: "failCommand"}, {Key: "mode", Value: bson.D{{Key: "times", Value: 1}}}, {Key: "data", Value: bson.D{{Key: "failCommands", Value: bson.A{"find"}}, {Key: "errorCode", Value: 91}}}, {Key: "$db", Value: "admin"}},
	}
	for _, s := range seeds {
		b, _ := bson.Marshal(s)
		f.Add(b)
	}
	e := newEnv(f)
	conn := e.NewConn("fuzz", "fuzz")
	f.Fuzz(func(t *testing.T, b []byte) {
		if err := bson.Raw(b).Validate(); err != nil {
			return // the wire layer rejects invalid BSON before dispatch
		}
		reply := e.Dispatch(context.Background(), conn, b)
		ok, err := reply.LookupErr("ok")
		if err != nil {
			t.Fatalf("reply without ok: %v", reply)
		}
		if ok.Type != bson.TypeDouble {
			t.Fatalf("ok is %v", ok.Type)
		}
	})
}

func TestWritesAdvanceOperationTime(t *testing.T) {
	e := newEnv(t)
	ctx := context.Background()
	ping := bson.D{{Key: "ping", Value: 1}, {Key: "$db", Value: "admin"}}
	t0, i0 := run(t, e, ctx, ping).Lookup("operationTime").Timestamp()
	run(t, e, ctx, bson.D{{Key: "insert", Value: "c"}, {Key: "documents", Value: bson.A{bson.D{}}}, {Key: "$db", Value: "d"}})
	t1, i1 := run(t, e, ctx, ping).Lookup("operationTime").Timestamp()
	if t1 < t0 || (t1 == t0 && i1 <= i0) {
		t.Fatalf("operationTime did not advance: (%d,%d) then (%d,%d)", t0, i0, t1, i1)
	}
	t2, i2 := run(t, e, ctx, ping).Lookup("operationTime").Timestamp()
	if t2 != t1 || i2 != i1 {
		t.Fatalf("a read moved operationTime: (%d,%d) then (%d,%d)", t1, i1, t2, i2)
	}
}
