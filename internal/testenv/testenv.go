// Package testenv gives tests a *mongo.Database: a fresh database on an
// in-process engine, or, when FORMWORK_TEST_URI is set, a fresh database on
// that deployment, so the same tests run against a real MongoDB.
package testenv

import (
	"context"
	"fmt"
	"os"
	"regexp"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"go.mongodb.org/mongo-driver/v2/mongo"
	"go.mongodb.org/mongo-driver/v2/mongo/options"

	"github.com/formworkdb/formwork/engine"
)

// URIVar names the environment variable that selects a real deployment.
const URIVar = "FORMWORK_TEST_URI"

// Real reports whether tests run against a deployment named by
// FORMWORK_TEST_URI rather than the embedded engine.
func Real() bool { return os.Getenv(URIVar) != "" }

var (
	remoteOnce   sync.Once
	remoteClient *mongo.Client
	remoteErr    error
	seq          atomic.Int64
)

var unsafeChars = regexp.MustCompile(`[^A-Za-z0-9_]`)

// dbName derives a database name from the test's name, unique in this run
// and at most 63 bytes.
func dbName(t testing.TB) string {
	n := unsafeChars.ReplaceAllString(t.Name(), "_")
	suffix := fmt.Sprintf("_%d", seq.Add(1))
	if len(n) > 40 {
		n = n[:40]
	}
	return strings.ToLower("t_" + n + suffix)
}

// Database returns an empty database for the test. On the embedded engine
// it is the only database of a new in-memory engine; against a real
// deployment it is dropped when the test ends.
func Database(t testing.TB) *mongo.Database {
	t.Helper()
	db := Client(t).Database(dbName(t))
	if Real() {
		t.Cleanup(func() {
			ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			defer cancel()
			db.Drop(ctx)
		})
	}
	return db
}

// Client returns a client for the test: connected to a new in-memory
// engine, or to FORMWORK_TEST_URI. The engine and client close when the
// test ends.
func Client(t testing.TB) *mongo.Client {
	t.Helper()
	if uri := os.Getenv(URIVar); uri != "" {
		remoteOnce.Do(func() {
			remoteClient, remoteErr = mongo.Connect(options.Client().ApplyURI(uri))
		})
		if remoteErr != nil {
			t.Fatalf("testenv: connect %s: %v", URIVar, remoteErr)
		}
		return remoteClient
	}
	_, client := Engine(t, engine.Options{})
	return client
}

// Engine opens an engine with opts and a client connected to it in
// process; both close when the test ends.
func Engine(t testing.TB, opts engine.Options) (*engine.DB, *mongo.Client) {
	t.Helper()
	ctx := context.Background()
	// Tests may inject faults: configureFailPoint is always on here.
	opts.EnableTestCommands = true
	db, err := engine.Open(ctx, opts)
	if err != nil {
		t.Fatalf("testenv: open engine: %v", err)
	}
	client, err := Connect(db)
	if err != nil {
		db.Close()
		t.Fatalf("testenv: connect: %v", err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		client.Disconnect(ctx)
		db.Close()
	})
	return db, client
}

// Connect returns a driver client connected to db in process.
func Connect(db *engine.DB) (*mongo.Client, error) {
	return mongo.Connect(options.Client().
		ApplyURI("mongodb://localhost:27017").
		SetDialer(db.Dialer()).
		SetServerSelectionTimeout(10 * time.Second))
}
