package command

import (
	"context"
	"testing"

	"go.mongodb.org/mongo-driver/v2/bson"
)

// FuzzDispatchOps runs arbitrary applyOps, dbHash, dataSize and
// validateDBMetadata commands: every input gets a reply with ok, and
// nothing panics or loops.
func FuzzDispatchOps(f *testing.F) {
	seeds := []bson.D{
		{{Key: "applyOps", Value: bson.A{
			bson.D{{Key: "op", Value: "c"}, {Key: "ns", Value: "d.$cmd"}, {Key: "o", Value: bson.D{{Key: "create", Value: "c"}}}},
			bson.D{{Key: "op", Value: "i"}, {Key: "ns", Value: "d.c"}, {Key: "o", Value: bson.D{{Key: "_id", Value: 1}, {Key: "a", Value: bson.A{1, 2}}}}},
			bson.D{{Key: "op", Value: "u"}, {Key: "ns", Value: "d.c"}, {Key: "o2", Value: bson.D{{Key: "_id", Value: 1}}}, {Key: "o", Value: bson.D{{Key: "$v", Value: 2}, {Key: "diff", Value: bson.D{{Key: "sa", Value: bson.D{{Key: "a", Value: true}, {Key: "l", Value: 1}}}}}}}},
			bson.D{{Key: "op", Value: "d"}, {Key: "ns", Value: "d.c"}, {Key: "o", Value: bson.D{{Key: "_id", Value: 1}}}},
			bson.D{{Key: "op", Value: "c"}, {Key: "ns", Value: "d.$cmd"}, {Key: "o", Value: bson.D{{Key: "applyOps", Value: bson.A{}}}}},
		}}, {Key: "$db", Value: "admin"}},
		{{Key: "dbHash", Value: 1}, {Key: "collections", Value: bson.A{"c"}}, {Key: "$db", Value: "d"}},
		{{Key: "dataSize", Value: "d.c"}, {Key: "keyPattern", Value: bson.D{{Key: "_id", Value: 1}}}, {Key: "min", Value: bson.D{{Key: "_id", Value: 0}}}, {Key: "max", Value: bson.D{{Key: "_id", Value: 9}}}, {Key: "$db", Value: "d"}},
		{{Key: "validateDBMetadata", Value: 1}, {Key: "apiParameters", Value: bson.D{{Key: "version", Value: "1"}, {Key: "strict", Value: true}}}, {Key: "$db", Value: "d"}},
	}
	for _, s := range seeds {
		b, _ := bson.Marshal(s)
		f.Add(b)
	}
	e := newEnv(f)
	conn := e.NewConn("fuzz", "fuzz")
	f.Fuzz(func(t *testing.T, b []byte) {
		if err := bson.Raw(b).Validate(); err != nil {
			return
		}
		reply := e.Dispatch(context.Background(), conn, b)
		if _, err := reply.LookupErr("ok"); err != nil {
			t.Fatalf("reply without ok: %v", reply)
		}
	})
}
