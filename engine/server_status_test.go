package engine_test

import (
	"testing"

	"go.mongodb.org/mongo-driver/v2/bson"

	"github.com/formworkdb/formwork/engine"
	"github.com/formworkdb/formwork/internal/testenv"
)

// TestServerStatusSections checks the sections monitoring tools read:
// opcounters count inserted documents and update and delete statements,
// metrics.document counts what the writes changed and the reads
// returned, network and connections move, and the memory, cache, asserts
// and cursor figures are there with their types.
func TestServerStatusSections(t *testing.T) {
	ctx := ctxT(t)
	_, client := testenv.Engine(t, engine.Options{Dir: t.TempDir()})
	admin := client.Database("admin")
	status := func() bson.Raw {
		t.Helper()
		raw, err := admin.RunCommand(ctx, bson.D{{Key: "serverStatus", Value: 1}}).Raw()
		if err != nil {
			t.Fatal(err)
		}
		return raw
	}
	num := func(raw bson.Raw, path ...string) int64 {
		t.Helper()
		v, err := raw.LookupErr(path...)
		if err != nil {
			t.Fatalf("serverStatus has no %v: %v", path, err)
		}
		n, ok := v.AsInt64OK()
		if !ok {
			t.Fatalf("serverStatus %v is %v", path, v.Type)
		}
		return n
	}
	before := status()
	coll := client.Database("d").Collection("c")
	if _, err := coll.InsertMany(ctx, []any{bson.D{{Key: "x", Value: 1}}, bson.D{{Key: "x", Value: 2}}, bson.D{{Key: "x", Value: 3}}}); err != nil {
		t.Fatal(err)
	}
	if _, err := coll.UpdateMany(ctx, bson.D{{Key: "x", Value: bson.D{{Key: "$gte", Value: 2}}}}, bson.D{{Key: "$set", Value: bson.D{{Key: "y", Value: 1}}}}); err != nil {
		t.Fatal(err)
	}
	if _, err := coll.DeleteOne(ctx, bson.D{{Key: "x", Value: 1}}); err != nil {
		t.Fatal(err)
	}
	cur, err := coll.Find(ctx, bson.D{})
	if err != nil {
		t.Fatal(err)
	}
	var docs []bson.Raw
	if err := cur.All(ctx, &docs); err != nil || len(docs) != 2 {
		t.Fatalf("find: %d %v", len(docs), err)
	}
	if err := client.Database("d").RunCommand(ctx, bson.D{{Key: "find", Value: "c"}, {Key: "filter", Value: bson.D{{Key: "x", Value: bson.D{{Key: "$bogus", Value: 1}}}}}}).Err(); err == nil {
		t.Fatal("a bad filter succeeded")
	}
	after := status()

	for _, c := range []struct {
		path []string
		want int64
	}{
		{[]string{"opcounters", "insert"}, 3},
		{[]string{"opcounters", "update"}, 1},
		{[]string{"opcounters", "delete"}, 1},
		{[]string{"opcounters", "query"}, 2},
		{[]string{"metrics", "document", "inserted"}, 3},
		{[]string{"metrics", "document", "updated"}, 2},
		{[]string{"metrics", "document", "deleted"}, 1},
		{[]string{"metrics", "document", "returned"}, 2},
		{[]string{"asserts", "user"}, 1},
	} {
		if got := num(after, c.path...) - num(before, c.path...); got != c.want {
			t.Errorf("%v moved by %d, want %d", c.path, got, c.want)
		}
	}
	if d := num(after, "opcounters", "command") - num(before, "opcounters", "command"); d < 1 {
		t.Errorf("opcounters.command moved by %d", d)
	}
	if num(after, "opcountersRepl", "insert") != 0 {
		t.Error("opcountersRepl.insert is not 0 on one node")
	}
	if d := num(after, "network", "numRequests") - num(before, "network", "numRequests"); d < 6 {
		t.Errorf("network.numRequests moved by %d", d)
	}
	if num(after, "network", "bytesIn") <= num(before, "network", "bytesIn") || num(after, "network", "bytesOut") <= num(before, "network", "bytesOut") {
		t.Error("network bytes did not move")
	}
	if num(after, "connections", "current") < 1 || num(after, "connections", "available") <= 0 ||
		num(after, "connections", "totalCreated") < 1 || num(after, "connections", "active") < 1 {
		t.Errorf("connections: %v", after.Lookup("connections"))
	}
	if num(after, "mem", "resident") <= 0 || num(after, "mem", "virtual") <= 0 {
		t.Errorf("mem: %v", after.Lookup("mem"))
	}
	// The three writes (insertMany, updateMany, deleteOne) each waited
	// for a log sync of their own: nothing ran beside them.
	logDelta := func(name string) int64 {
		return num(after, "wiredTiger", "log", name) - num(before, "wiredTiger", "log", name)
	}
	if w, s, us, b := logDelta("log write operations"), logDelta("log sync operations"),
		logDelta("log sync time duration (usecs)"), logDelta("log bytes written"); w != 3 || s < 3 || us <= 0 || b <= 0 {
		t.Errorf("log: %d writes, %d syncs in %d µs, %d bytes; want 3 writes, at least 3 syncs", w, s, us, b)
	}
	if num(after, "wiredTiger", "cache", "maximum bytes configured") != 256<<20 {
		t.Errorf("cache: %v", after.Lookup("wiredTiger", "cache"))
	}
	num(after, "metrics", "cursor", "open", "total")
	num(after, "metrics", "cursor", "timedOut")
	if after.Lookup("uptime").Type != bson.TypeDouble || after.Lookup("localTime").Type != bson.TypeDateTime {
		t.Error("uptime or localTime missing")
	}
}
