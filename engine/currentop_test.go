package engine_test

import (
	"testing"
	"time"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo"
)

// TestCurrentOpAndKillOp finds a long aggregate from another connection
// with $currentOp and the currentOp command, interrupts it with killOp,
// and sees the aggregate fail with Interrupted.
func TestCurrentOpAndKillOp(t *testing.T) {
	t.Parallel()
	_, db := newDB(t)
	ctx := ctxT(t)
	docs := make([]any, 5000)
	for i := range docs {
		docs[i] = bson.D{{Key: "_id", Value: i}}
	}
	if _, err := db.Collection("big").InsertMany(ctx, docs); err != nil {
		t.Fatal(err)
	}
	// Each document sums a range of 20,000 numbers: ~10^8 additions in
	// all, far longer than the test takes to find and kill it.
	slow := mongo.Pipeline{{{Key: "$project", Value: bson.D{{Key: "x", Value: bson.D{{Key: "$reduce", Value: bson.D{
		{Key: "input", Value: bson.D{{Key: "$range", Value: bson.A{0, 20000}}}},
		{Key: "initialValue", Value: 0},
		{Key: "in", Value: bson.D{{Key: "$add", Value: bson.A{"$$value", "$$this"}}}},
	}}}}}}}}
	done := make(chan error, 1)
	go func() {
		cur, err := db.Collection("big").Aggregate(ctx, slow)
		if err == nil {
			err = cur.All(ctx, new([]bson.Raw))
		}
		done <- err
	}()
	admin := db.Client().Database("admin")
	var opid any
	deadline := time.Now().Add(20 * time.Second)
	for opid == nil && time.Now().Before(deadline) {
		cur, err := admin.Aggregate(ctx, mongo.Pipeline{
			{{Key: "$currentOp", Value: bson.D{}}},
			{{Key: "$match", Value: bson.D{{Key: "command.aggregate", Value: "big"}}}},
		})
		if err != nil {
			t.Fatal(err)
		}
		var ops []bson.Raw
		if err := cur.All(ctx, &ops); err != nil {
			t.Fatal(err)
		}
		if len(ops) == 1 {
			if got := ops[0].Lookup("ns").StringValue(); got != "test.big" {
				t.Fatalf("ns = %q, want test.big", got)
			}
			if got := ops[0].Lookup("active").Boolean(); !got {
				t.Fatal("running aggregate not active")
			}
			opid = ops[0].Lookup("opid").Int32()
		}
	}
	if opid == nil {
		t.Fatal("the running aggregate never showed in $currentOp")
	}
	var reply bson.M
	if err := admin.RunCommand(ctx, bson.D{{Key: "currentOp", Value: 1}, {Key: "opid", Value: opid}}).Decode(&reply); err != nil {
		t.Fatal(err)
	}
	if n := len(reply["inprog"].(bson.A)); n != 1 {
		t.Fatalf("currentOp {opid: %v} listed %d operations, want 1", opid, n)
	}
	if err := admin.RunCommand(ctx, bson.D{{Key: "killOp", Value: 1}, {Key: "op", Value: opid}}).Err(); err != nil {
		t.Fatal(err)
	}
	select {
	case err := <-done:
		wantCode(t, err, 11601, "Interrupted")
	case <-time.After(20 * time.Second):
		t.Fatal("killed aggregate did not stop")
	}
	err := admin.RunCommand(ctx, bson.D{{Key: "killOp", Value: 1}}).Err()
	wantCode(t, err, 40414, "")
	err = db.RunCommand(ctx, bson.D{{Key: "currentOp", Value: 1}}).Err()
	wantCode(t, err, 13, "Unauthorized")
	_, err = admin.Aggregate(ctx, mongo.Pipeline{{{Key: "$currentOp", Value: bson.D{{Key: "bogus", Value: true}}}}})
	wantCode(t, err, 9, "FailedToParse")
}

// TestCurrentOpIdleConnections lists connections that run nothing only
// when asked.
func TestCurrentOpIdleConnections(t *testing.T) {
	t.Parallel()
	_, db := newDB(t)
	ctx := ctxT(t)
	admin := db.Client().Database("admin")
	count := func(cmd bson.D) int {
		var reply bson.M
		if err := admin.RunCommand(ctx, cmd).Decode(&reply); err != nil {
			t.Fatal(err)
		}
		return len(reply["inprog"].(bson.A))
	}
	active := count(bson.D{{Key: "currentOp", Value: 1}, {Key: "active", Value: true}})
	all := count(bson.D{{Key: "currentOp", Value: 1}, {Key: "$all", Value: true}})
	if active != 1 {
		t.Fatalf("active operations = %d, want 1 (the currentOp itself)", active)
	}
	if all <= active {
		t.Fatalf("$all listed %d entries, want more than the %d active (the driver's monitoring connections)", all, active)
	}
}

// TestListLocalSessions shows a session once a command used it and drops
// it after endSessions. It speaks the wire protocol directly, because the
// driver reuses ended sessions from its pool for later commands.
func TestListLocalSessions(t *testing.T) {
	t.Parallel()
	db, _ := newDB(t)
	c := dialRaw(t, db)
	id := bson.Binary{Subtype: bson.TypeBinaryUUID, Data: []byte("0123456789abcdef")}
	lsid := bson.D{{Key: "id", Value: id}}
	if r := c.run(bson.D{{Key: "ping", Value: 1}, {Key: "lsid", Value: lsid}, {Key: "$db", Value: "test"}}); r.Lookup("ok").Double() != 1 {
		t.Fatalf("ping: %v", r)
	}
	list := func(spec bson.D) bson.Raw {
		return c.run(bson.D{{Key: "aggregate", Value: 1}, {Key: "pipeline", Value: bson.A{bson.D{{Key: "$listLocalSessions", Value: spec}}}},
			{Key: "cursor", Value: bson.D{}}, {Key: "$db", Value: "admin"}})
	}
	listed := func() bool {
		r := list(bson.D{})
		batch, err := r.LookupErr("cursor", "firstBatch")
		if err != nil {
			t.Fatalf("$listLocalSessions: %v", r)
		}
		vals, _ := batch.Array().Values()
		for _, v := range vals {
			rec := v.Document()
			if _, got := rec.Lookup("_id", "id").Binary(); string(got) == string(id.Data) {
				if rec.Lookup("lastUse").Type != bson.TypeDateTime || rec.Lookup("_id", "uid").Type != bson.TypeBinary {
					t.Fatalf("record %v", rec)
				}
				return true
			}
		}
		return false
	}
	if !listed() {
		t.Fatal("used session not listed")
	}
	if r := c.run(bson.D{{Key: "endSessions", Value: bson.A{lsid}}, {Key: "$db", Value: "admin"}}); r.Lookup("ok").Double() != 1 {
		t.Fatalf("endSessions: %v", r)
	}
	if listed() {
		t.Fatal("ended session still listed")
	}
	if got := list(bson.D{{Key: "allUsers", Value: 1}}).Lookup("code").Int32(); got != 14 {
		t.Fatalf("allUsers: 1 answered code %d, want 14", got)
	}
}
