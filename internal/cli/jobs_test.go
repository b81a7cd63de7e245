package cli

import (
	"context"
	"fmt"
	"net"
	"strings"
	"testing"
	"time"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo"

	"github.com/formworkdb/formwork/engine"
	"github.com/formworkdb/formwork/internal/testenv"
	"github.com/formworkdb/formwork/pattern/archive"
)

// jobServer serves an in-memory engine on a loopback port and returns
// its URI and a client connected to it.
func jobServer(t *testing.T) (string, *mongo.Client) {
	t.Helper()
	db, client := testenv.Engine(t, engine.Options{})
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	go db.Serve(l)
	t.Cleanup(func() { l.Close() })
	return "mongodb://" + l.Addr().String() + "/?directConnection=true", client
}

// seedOrders inserts n orders, one a day from 2020-01-01.
func seedOrders(t *testing.T, c *mongo.Collection, n int) {
	t.Helper()
	docs := make([]any, n)
	for i := range n {
		docs[i] = bson.D{{Key: "_id", Value: i}, {Key: "createdAt", Value: time.Date(2020, 1, 1+i, 0, 0, 0, 0, time.UTC)}}
	}
	if _, err := c.InsertMany(context.Background(), docs); err != nil {
		t.Fatal(err)
	}
}

func TestJobsUsageErrors(t *testing.T) {
	for _, args := range [][]string{
		{"jobs", "archive", "--db", "d", "--coll", "c", "--field", "at", "--older-than", "1h"},
		{"jobs", "archive", "--uri", "mongodb://h", "--coll", "c", "--field", "at", "--older-than", "1h"},
		{"jobs", "archive", "--uri", "mongodb://h", "--db", "d", "--coll", "c", "--field", "$at", "--older-than", "1h"},
		{"jobs", "archive", "--uri", "mongodb://h", "--db", "d", "--coll", "c", "--field", "at", "--older-than", "1h", "--filter", "{bad"},
		{"jobs", "recompute", "--uri", "mongodb://h", "--db", "d", "--parents", "p"},
		{"jobs", "recompute", "--uri", "mongodb://h", "--db", "d", "--parents", "p", "--children", "c", "--parent", "pid", "--value", "v", "--target", "t", "--stats", "avg"},
		{"jobs", "recompute", "--uri", "mongodb://h", "--db", "d", "--parents", "p", "--children", "c", "--parent", "pid", "--value", "v", "--target", "t", "--when-not-matched", "merge"},
		{"jobs", "archive", "--bogus"},
	} {
		env, _, errb, _ := testEnv()
		if code := Main(args, env); code != ExitUsage {
			t.Errorf("%v: exit %d, want %d; stderr %s", args, code, ExitUsage, errb)
		}
	}
}

// TestJobsArchive: a dry run moves nothing; a run moves what the dry run
// announced; a run that was stopped after one slice resumes with its
// recorded cutoff.
func TestJobsArchive(t *testing.T) {
	uri, client := jobServer(t)
	ctx := context.Background()
	live := client.Database("shop").Collection("orders")
	seedOrders(t, live, 100)
	// Orders from 2020 are years older than 1000h: all of them move.
	args := []string{"jobs", "archive", "--uri", uri, "--db", "shop", "--coll", "orders", "--field", "createdAt",
		"--older-than", "1000h", "--slice", "240h", "--into-db", "cold"}
	env, out, errb, _ := testEnv()
	if code := Main(append(args, "--dry-run"), env); code != ExitOK {
		t.Fatalf("dry run: exit %d; %s", code, errb)
	}
	if !strings.Contains(out.String(), "would move 100 documents in 11 slices") {
		t.Fatalf("dry run said %q", out)
	}
	if n, _ := live.CountDocuments(ctx, bson.D{}); n != 100 {
		t.Fatalf("dry run moved documents: %d left", n)
	}
	// Stop a run after its first slice, as a kill would.
	a, err := archive.New[bson.Raw](live, client.Database("cold").Collection("orders"), archive.Config{Field: "createdAt", Age: 1000 * time.Hour, Slice: 240 * time.Hour})
	if err != nil {
		t.Fatal(err)
	}
	kctx, cancel := context.WithCancel(ctx)
	if _, err := a.Run(kctx, archive.RunOptions{OnSlice: func(archive.Progress) { cancel() }}); err == nil {
		t.Fatal("the stopped run finished")
	}
	first, _, err := a.Status(ctx)
	if err != nil || first.Deleted == 0 || first.State != archive.StateRunning {
		t.Fatalf("stopped run's record %+v, %v", first, err)
	}
	rest := 100 - first.Deleted
	env, out, errb, _ = testEnv()
	if code := Main(args, env); code != ExitOK {
		t.Fatalf("run: exit %d; %s", code, errb)
	}
	if s := out.String(); !strings.Contains(s, "resuming a stopped run") || !strings.Contains(s, fmt.Sprintf("moved %d documents in 10 slices", rest)) {
		t.Fatalf("run said %q", s)
	}
	if !strings.Contains(errb.String(), fmt.Sprintf("archive shop.orders: %d/%d documents", rest, rest)) {
		t.Errorf("no progress lines on stderr: %q", errb)
	}
	if n, _ := live.CountDocuments(ctx, bson.D{}); n != 0 {
		t.Fatalf("%d orders left live", n)
	}
	if n, _ := client.Database("cold").Collection("orders").CountDocuments(ctx, bson.D{}); n != 100 {
		t.Fatalf("%d orders archived", n)
	}
	var rec archive.Progress
	if err := client.Database("shop").Collection(archive.JobsCollection).FindOne(ctx, bson.D{}).Decode(&rec); err != nil || rec.State != archive.StateDone || rec.Deleted != 100 {
		t.Fatalf("record %+v, %v", rec, err)
	}
}

// TestJobsRecompute: the dry run reports the drift and writes nothing;
// a run recorded as stopped after p0002 resumes after it; the totals are
// then right.
func TestJobsRecompute(t *testing.T) {
	uri, client := jobServer(t)
	ctx := context.Background()
	db := client.Database("shop")
	var products, reviews []any
	for i := range 5 {
		p := fmt.Sprintf("p%04d", i)
		products = append(products, bson.D{{Key: "_id", Value: p}, {Key: "rating", Value: bson.D{{Key: "sum", Value: int64(1)}, {Key: "count", Value: int64(1)}}}})
		for j := range i {
			reviews = append(reviews, bson.D{{Key: "productId", Value: p}, {Key: "stars", Value: j + 1}})
		}
	}
	if _, err := db.Collection("products").InsertMany(ctx, products); err != nil {
		t.Fatal(err)
	}
	if _, err := db.Collection("reviews").InsertMany(ctx, reviews); err != nil {
		t.Fatal(err)
	}
	args := []string{"jobs", "recompute", "--uri", uri, "--db", "shop", "--parents", "products", "--children", "reviews",
		"--parent", "productId", "--value", "stars", "--target", "rating", "--batch", "2"}
	env, out, errb, _ := testEnv()
	if code := Main(append(args, "--dry-run"), env); code != ExitOK {
		t.Fatalf("dry run: exit %d; %s", code, errb)
	}
	if !strings.Contains(out.String(), "5 parents, 4 with wrong totals") {
		t.Fatalf("dry run said %q", out)
	}
	// A run killed after p0002: its record says so.
	if _, err := db.Collection(archive.JobsCollection).InsertOne(ctx, bson.D{{Key: "_id", Value: "recompute shop.products.rating"},
		{Key: "job", Value: "recompute"}, {Key: "state", Value: "running"}, {Key: "last", Value: "p0002"}, {Key: "done", Value: int64(3)}}); err != nil {
		t.Fatal(err)
	}
	env, out, errb, _ = testEnv()
	if code := Main(args, env); code != ExitOK {
		t.Fatalf("run: exit %d; %s", code, errb)
	}
	if s := out.String(); !strings.Contains(s, "resuming a stopped run") || !strings.Contains(s, "recomputed 2 parents in 1 batches (5 in all)") {
		t.Fatalf("run said %q", s)
	}
	for p, want := range map[string]string{
		"p0002": `{"sum": {"$numberLong":"1"},"count": {"$numberLong":"1"}}`, // before the resume point: untouched
		"p0003": `{"sum": {"$numberLong":"6"},"count": {"$numberLong":"3"},"rev": {"$numberLong":"1"}}`,
		"p0004": `{"sum": {"$numberLong":"10"},"count": {"$numberLong":"4"},"rev": {"$numberLong":"1"}}`,
	} {
		raw, err := db.Collection("products").FindOne(ctx, bson.D{{Key: "_id", Value: p}}).Raw()
		if err != nil {
			t.Fatal(err)
		}
		if got := raw.Lookup("rating").String(); got != want {
			t.Errorf("%s rating %s, want %s", p, got, want)
		}
	}
	// A fresh run does everything.
	env, out, errb, _ = testEnv()
	if code := Main(args, env); code != ExitOK {
		t.Fatalf("second run: exit %d; %s", code, errb)
	}
	if !strings.Contains(out.String(), "recomputed 5 parents in 3 batches") {
		t.Fatalf("second run said %q", out)
	}
	env, out, _, _ = testEnv()
	Main(append(args, "--dry-run"), env)
	if !strings.Contains(out.String(), "5 parents, 0 with wrong totals") {
		t.Fatalf("dry run after the run said %q", out)
	}
}
