package command

import (
	"context"
	"testing"

	"go.mongodb.org/mongo-driver/v2/bson"

	"github.com/formworkdb/formwork/engine/internal/admission"
	"github.com/formworkdb/formwork/engine/internal/storage"
)

// TestQueuedCommandTimesOut: a read that spends its maxTimeMS waiting for
// a ticket fails with MaxTimeMSExpired, while commands that need no
// ticket (ping, serverStatus) still run.
func TestQueuedCommandTimesOut(t *testing.T) {
	st, err := storage.Open(storage.Options{})
	if err != nil {
		t.Fatal(err)
	}
	e := NewEnv(st, Config{Tickets: 1})
	t.Cleanup(func() { e.Close(); st.Close() })
	held, err := e.gate.Acquire(context.Background(), admission.Write)
	if err != nil {
		t.Fatal(err)
	}
	reply := run(t, e, context.Background(), bson.D{{Key: "find", Value: "c"}, {Key: "maxTimeMS", Value: 30}, {Key: "$db", Value: "d"}})
	if reply.Lookup("code").Int32() != 50 || reply.Lookup("codeName").StringValue() != "MaxTimeMSExpired" {
		t.Fatalf("queued find: %v", reply)
	}
	reply = run(t, e, context.Background(), bson.D{{Key: "serverStatus", Value: 1}, {Key: "$db", Value: "admin"}})
	if reply.Lookup("ok").Double() != 1 {
		t.Fatalf("serverStatus while the ticket is out: %v", reply)
	}
	q := reply.Lookup("queues", "execution")
	if q.Document().Lookup("read", "canceled").Int64() != 1 || q.Document().Lookup("write", "out").Int64() != 1 || q.Document().Lookup("read", "available").Int64() != 0 {
		t.Fatalf("queues.execution = %v", q)
	}
	held.Release()
	reply = run(t, e, context.Background(), bson.D{{Key: "find", Value: "c"}, {Key: "maxTimeMS", Value: 30}, {Key: "$db", Value: "d"}})
	if reply.Lookup("ok").Double() != 1 {
		t.Fatalf("find after the release: %v", reply)
	}
}
