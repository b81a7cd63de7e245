package command

import (
	"context"
	"testing"
	"time"

	"go.mongodb.org/mongo-driver/v2/bson"

	"github.com/formworkdb/formwork/engine/internal/storage"
)

// TestAfterClusterTimeWaits: a read whose afterClusterTime names a write
// still being committed waits for it (maxTimeMS ends the wait with
// MaxTimeMSExpired), then sees it.
func TestAfterClusterTimeWaits(t *testing.T) {
	e := newEnv(t)
	ctx := context.Background()
	run(t, e, ctx, bson.D{{Key: "create", Value: "c"}, {Key: "$db", Value: "d"}})
	holding, release := make(chan bson.Timestamp), make(chan struct{})
	committed := make(chan error, 1)
	go func() {
		committed <- e.Store.Write(func(w *storage.Writer) error {
			doc, _ := bson.Marshal(bson.D{{Key: "_id", Value: 1}})
			if _, err := w.Insert(w.Collection("d.c"), doc); err != nil {
				return err
			}
			// The entry's ts comes from the next tick; the clock is
			// ahead of the oplog until the batch applies.
			holding <- e.Store.Clock().Current()
			<-release
			return nil
		})
	}()
	at := <-holding
	find := func(maxTimeMS int) bson.Raw {
		return run(t, e, ctx, bson.D{
			{Key: "find", Value: "c"},
			{Key: "readConcern", Value: bson.D{{Key: "afterClusterTime", Value: bson.Timestamp{T: at.T, I: at.I + 1}}}},
			{Key: "maxTimeMS", Value: maxTimeMS},
			{Key: "$db", Value: "d"},
		})
	}
	// The clock has not reached at+1 yet: wait until the entry gets it.
	for tsLess(e.clock.current(), bson.Timestamp{T: at.T, I: at.I + 1}) {
		e.clock.now()
	}
	if reply := find(100); reply.Lookup("code").Int32() != 50 {
		t.Fatalf("read during the commit: %v, want MaxTimeMSExpired", reply)
	}
	done := make(chan bson.Raw, 1)
	go func() { done <- find(10000) }()
	select {
	case reply := <-done:
		t.Fatalf("read did not wait: %v", reply)
	case <-time.After(50 * time.Millisecond):
	}
	close(release)
	if err := <-committed; err != nil {
		t.Fatal(err)
	}
	reply := <-done
	batch, err := reply.Lookup("cursor", "firstBatch").Array().Values()
	if err != nil || len(batch) != 1 {
		t.Fatalf("read after the commit: %v", reply)
	}
}
