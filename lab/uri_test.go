package lab

import (
	"context"
	"errors"
	"net"
	"slices"
	"strings"
	"testing"
	"time"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo"
	"go.mongodb.org/mongo-driver/v2/mongo/options"

	"github.com/formworkdb/formwork/engine"
)

// served starts an in-memory engine served over TCP on the loopback and
// returns its URI and a client of its own.
func served(t *testing.T) (string, *mongo.Client) {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	db, err := engine.Open(context.Background(), engine.Options{Host: l.Addr().String()})
	if err != nil {
		t.Fatal(err)
	}
	go db.Serve(l)
	uri := "mongodb://" + l.Addr().String()
	client, err := mongo.Connect(options.Client().ApplyURI(uri).SetServerSelectionTimeout(10 * time.Second))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		client.Disconnect(context.Background())
		db.Close()
		l.Close()
	})
	return uri, client
}

// TestURIRefusesNonEmptyDatabase: a database that holds data is left
// alone, not used and not dropped.
func TestURIRefusesNonEmptyDatabase(t *testing.T) {
	uri, client := served(t)
	ctx := context.Background()
	taken := client.Database("occupied").Collection("precious")
	if _, err := taken.InsertOne(ctx, bson.D{{Key: "_id", Value: 1}}); err != nil {
		t.Fatal(err)
	}
	_, err := Run(ctx, Options{URI: uri, Database: "occupied", Scale: smallScale, Patterns: []string{"subset"}})
	if !errors.Is(err, ErrNotEmpty) {
		t.Fatalf("err = %v, want ErrNotEmpty", err)
	}
	if n, err := taken.CountDocuments(ctx, bson.D{}); err != nil || n != 1 {
		t.Fatalf("the refused database changed: %d documents, %v", n, err)
	}
	colls, err := client.Database("occupied").ListCollectionNames(ctx, bson.D{})
	if err != nil || !slices.Equal(colls, []string{"precious"}) {
		t.Fatalf("collections %v, %v", colls, err)
	}
}

// TestURIRunsInScratchDatabase runs over TCP, the path of a real
// deployment: server version and topology reported, scratch database
// dropped afterwards.
func TestURIRunsInScratchDatabase(t *testing.T) {
	uri, client := served(t)
	ctx := context.Background()
	rep, err := Run(ctx, Options{URI: uri, Scale: smallScale, Patterns: []string{"subset", "approx"}})
	if err != nil {
		t.Fatal(err)
	}
	if len(rep.Patterns) != 2 || rep.Patterns[0].Pattern != "subset" || rep.Patterns[1].Pattern != "approx" {
		t.Fatalf("patterns %+v", rep.Patterns)
	}
	if rep.Server.Version == "" || !strings.HasPrefix(rep.Server.Topology, "replica set") || rep.Server.Target != uri {
		t.Errorf("server %+v", rep.Server)
	}
	if !strings.HasPrefix(rep.Server.Database, "formwork_lab_") {
		t.Errorf("database %q", rep.Server.Database)
	}
	names, err := client.ListDatabaseNames(ctx, bson.D{})
	if err != nil {
		t.Fatal(err)
	}
	if slices.Contains(names, rep.Server.Database) {
		t.Errorf("scratch database %s left behind: %v", rep.Server.Database, names)
	}
	// The same figures as on the in-process path.
	if m := metric(t, rep, "subset", "product page: documents examined"); m.Naive != 6 || m.Pattern != 1 {
		t.Errorf("over TCP the product page examines %v and %v documents", m.Naive, m.Pattern)
	}
}

func TestRedact(t *testing.T) {
	if got := redact("mongodb://ada:secret@db.example:27017/x?tls=true"); strings.Contains(got, "secret") || !strings.Contains(got, "db.example:27017") {
		t.Errorf("redact: %q", got)
	}
}
