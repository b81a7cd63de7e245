package testenv

import (
	"context"
	"os"
	"sync"
	"testing"
	"time"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/event"
	"go.mongodb.org/mongo-driver/v2/mongo"
	"go.mongodb.org/mongo-driver/v2/mongo/options"

	"github.com/formworkdb/formwork/engine"
)

// Counter counts the commands a client sends, by name, and the documents
// its cursors receive. It is safe for concurrent use.
type Counter struct {
	mu       sync.Mutex
	commands map[string]int64
	total    int64
	docs     int64
}

// Commands returns the number of commands sent since the last Reset: all
// of them (round trips), or with names, those of the given names only.
func (c *Counter) Commands(names ...string) int64 {
	c.mu.Lock()
	defer c.mu.Unlock()
	if len(names) == 0 {
		return c.total
	}
	var n int64
	for _, name := range names {
		n += c.commands[name]
	}
	return n
}

// Docs returns the number of documents received in cursor batches
// (cursor.firstBatch of find and aggregate, cursor.nextBatch of getMore)
// since the last Reset.
func (c *Counter) Docs() int64 {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.docs
}

// Reset zeroes the counts, typically after a benchmark's setup.
func (c *Counter) Reset() {
	c.mu.Lock()
	defer c.mu.Unlock()
	clear(c.commands)
	c.total, c.docs = 0, 0
}

// started counts a command the client sends.
func (c *Counter) started(_ context.Context, e *event.CommandStartedEvent) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.commands == nil {
		c.commands = map[string]int64{}
	}
	c.commands[e.CommandName]++
	c.total++
}

// succeeded counts the documents of a reply's cursor batch.
func (c *Counter) succeeded(_ context.Context, e *event.CommandSucceededEvent) {
	n := 0
	for _, batch := range []string{"firstBatch", "nextBatch"} {
		if arr, ok := bson.Raw(e.Reply).Lookup("cursor", batch).ArrayOK(); ok {
			vals, _ := arr.Values()
			n += len(vals)
		}
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	c.docs += int64(n)
}

// Monitored returns an empty database for the test, as Database does, on
// a client of its own whose commands and received documents the returned
// Counter counts. On the embedded engine the database is the only one of
// a new in-memory engine; against FORMWORK_TEST_URI it is dropped when the
// test ends. The client disconnects when the test ends.
func Monitored(t testing.TB) (*mongo.Database, *Counter) {
	t.Helper()
	c := &Counter{}
	opts := options.Client()
	if uri := os.Getenv(URIVar); uri != "" {
		opts.ApplyURI(uri)
	} else {
		eng, _ := Engine(t, engine.Options{})
		opts.ApplyURI("mongodb://localhost:27017").SetDialer(eng.Dialer()).SetServerSelectionTimeout(10 * time.Second)
	}
	client, err := mongo.Connect(opts.SetMonitor(&event.CommandMonitor{Started: c.started, Succeeded: c.succeeded}))
	if err != nil {
		t.Fatalf("testenv: connect monitored client: %v", err)
	}
	db := client.Database(dbName(t))
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		if Real() {
			db.Drop(ctx)
		}
		client.Disconnect(ctx)
	})
	return db, c
}
