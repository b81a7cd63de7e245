package command

import (
	"context"
	"testing"
	"time"

	"go.mongodb.org/mongo-driver/v2/bson"

	"github.com/formworkdb/formwork/engine/internal/storage"
)

// TestChangeStreamTransactionEvents commits a Writer marked as a
// transaction and expects each of its writes as its own event, all with
// the transaction's lsid, txnNumber and clusterTime, in order.
func TestChangeStreamTransactionEvents(t *testing.T) {
	e := newEnv(t)
	ctx := context.Background()
	reply := run(t, e, ctx, bson.D{{Key: "create", Value: "c"}, {Key: "$db", Value: "d"}})
	if reply.Lookup("ok").Double() != 1 {
		t.Fatal(reply)
	}
	reply = run(t, e, ctx, bson.D{
		{Key: "aggregate", Value: "c"},
		{Key: "pipeline", Value: bson.A{bson.D{{Key: "$changeStream", Value: bson.D{}}}}},
		{Key: "cursor", Value: bson.D{}},
		{Key: "$db", Value: "d"},
	})
	id, ok := reply.Lookup("cursor", "id").Int64OK()
	if !ok || id == 0 {
		t.Fatalf("aggregate: %v", reply)
	}
	lsid, _ := bson.Marshal(bson.D{{Key: "id", Value: bson.Binary{Subtype: 4, Data: make([]byte, 16)}}})
	err := e.Store.Write(func(w *storage.Writer) error {
		w.MarkTransaction(storage.TxnInfo{LSID: lsid, TxnNumber: 3})
		c := w.Collection("d.c")
		for i := range 3 {
			doc, _ := bson.Marshal(bson.D{{Key: "_id", Value: i}})
			if _, err := w.Insert(c, doc); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	reply = run(t, e, ctx, bson.D{{Key: "getMore", Value: id}, {Key: "collection", Value: "c"}, {Key: "maxTimeMS", Value: 1000}, {Key: "$db", Value: "d"}})
	batch, err := reply.Lookup("cursor", "nextBatch").Array().Values()
	if err != nil || len(batch) != 3 {
		t.Fatalf("getMore: %v", reply)
	}
	var ct bson.RawValue
	seen := map[string]bool{}
	for i, v := range batch {
		ev := v.Document()
		if ev.Lookup("txnNumber").Int64() != 3 || !bytesEqual(ev.Lookup("lsid").Document(), lsid) {
			t.Fatalf("event %d lacks the transaction: %v", i, ev)
		}
		if got := ev.Lookup("documentKey", "_id").AsInt64(); got != int64(i) {
			t.Fatalf("event %d is for _id %d", i, got)
		}
		if i == 0 {
			ct = ev.Lookup("clusterTime")
		} else if !ev.Lookup("clusterTime").Equal(ct) {
			t.Fatalf("event %d clusterTime %v, want %v", i, ev.Lookup("clusterTime"), ct)
		}
		tok := ev.Lookup("_id", "_data").StringValue()
		if seen[tok] {
			t.Fatalf("event %d repeats a resume token", i)
		}
		seen[tok] = true
	}
	if fields, _ := batch[0].Document().Elements(); fields[0].Key() != "txnNumber" || fields[1].Key() != "lsid" {
		t.Fatalf("field order %v", batch[0])
	}
}

func bytesEqual(a, b []byte) bool { return string(a) == string(b) }

// TestChangeStreamKillWhileWaiting kills a change stream cursor whose
// getMore waits for events: both return at once.
func TestChangeStreamKillWhileWaiting(t *testing.T) {
	e := newEnv(t)
	ctx := context.Background()
	run(t, e, ctx, bson.D{{Key: "create", Value: "k"}, {Key: "$db", Value: "d"}})
	reply := run(t, e, ctx, bson.D{
		{Key: "aggregate", Value: "k"},
		{Key: "pipeline", Value: bson.A{bson.D{{Key: "$changeStream", Value: bson.D{}}}}},
		{Key: "cursor", Value: bson.D{}},
		{Key: "$db", Value: "d"},
	})
	id := reply.Lookup("cursor", "id").Int64()
	done := make(chan bson.Raw)
	go func() {
		done <- run(t, e, ctx, bson.D{{Key: "getMore", Value: id}, {Key: "collection", Value: "k"}, {Key: "maxTimeMS", Value: 30000}, {Key: "$db", Value: "d"}})
	}()
	time.Sleep(100 * time.Millisecond)
	begin := time.Now()
	kill := run(t, e, ctx, bson.D{{Key: "killCursors", Value: "k"}, {Key: "cursors", Value: bson.A{id}}, {Key: "$db", Value: "d"}})
	if n, _ := kill.Lookup("cursorsKilled").Array().Values(); len(n) != 1 {
		t.Fatalf("killCursors: %v", kill)
	}
	select {
	case <-done:
	case <-time.After(5 * time.Second):
		t.Fatal("getMore still waiting after killCursors")
	}
	if d := time.Since(begin); d > 2*time.Second {
		t.Fatalf("killCursors took %v", d)
	}
}
