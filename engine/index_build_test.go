package engine_test

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo"
	"go.mongodb.org/mongo-driver/v2/mongo/options"

	"github.com/formworkdb/formwork/engine"
	"github.com/formworkdb/formwork/internal/testenv"
)

// buildDocs is the collection size of the index build tests, as in the
// campaign that found every write blocked for a build's whole duration
// (a fifth of it under the race detector, which is ten times slower).
var buildDocs = map[bool]int{false: 100_000, true: 20_000}[raceEnabled]

// fillForBuild inserts n documents {_id: i, a, b, c, u: i, tags}.
func fillForBuild(t testing.TB, coll *mongo.Collection, n int) {
	t.Helper()
	ctx := context.Background()
	const batch = 5000
	for lo := 0; lo < n; lo += batch {
		docs := make([]any, 0, batch)
		for i := lo; i < min(n, lo+batch); i++ {
			docs = append(docs, bson.D{{Key: "_id", Value: i}, {Key: "a", Value: i % 1000}, {Key: "b", Value: fmt.Sprintf("s%07d", i)}, {Key: "c", Value: i % 7}, {Key: "u", Value: i}, {Key: "tags", Value: bson.A{i % 3, i % 5}}})
		}
		if _, err := coll.InsertMany(ctx, docs); err != nil {
			t.Fatal(err)
		}
	}
}

// fourIndexes are the indexes the build tests create in one command.
var fourIndexes = []mongo.IndexModel{
	{Keys: bson.D{{Key: "a", Value: 1}}},
	{Keys: bson.D{{Key: "b", Value: -1}}},
	{Keys: bson.D{{Key: "c", Value: 1}, {Key: "a", Value: 1}}},
	{Keys: bson.D{{Key: "tags", Value: 1}}},
}

// writeDuringBuild runs inserts, updates and deletes from 4 clients
// until stop closes, and returns the latency of each acknowledged write.
func writeDuringBuild(t testing.TB, coll *mongo.Collection, stop <-chan struct{}, base int) []time.Duration {
	var mu sync.Mutex
	var lat []time.Duration
	var wg sync.WaitGroup
	for w := 0; w < 4; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			ctx := context.Background()
			for i := 0; ; i++ {
				select {
				case <-stop:
					return
				default:
				}
				start := time.Now()
				var err error
				id := base + w*1_000_000 + i
				switch i % 3 {
				case 0:
					_, err = coll.InsertOne(ctx, bson.D{{Key: "_id", Value: id}, {Key: "a", Value: -w}, {Key: "b", Value: "new"}, {Key: "c", Value: 99}, {Key: "u", Value: id}, {Key: "tags", Value: bson.A{"x", w}}})
				case 1:
					_, err = coll.UpdateOne(ctx, bson.D{{Key: "_id", Value: (i*7919 + w) % buildDocs}}, bson.D{{Key: "$set", Value: bson.D{{Key: "a", Value: 5000 + i}, {Key: "tags", Value: bson.A{"u", i}}}}})
				case 2:
					_, err = coll.DeleteOne(ctx, bson.D{{Key: "_id", Value: (i*104729 + w*13) % buildDocs}})
				}
				if err != nil {
					t.Errorf("write during build: %v", err)
					return
				}
				d := time.Since(start)
				mu.Lock()
				lat = append(lat, d)
				mu.Unlock()
			}
		}()
	}
	wg.Wait()
	return lat
}

// validateClean asserts that validate finds coll's indexes exact.
func validateClean(t testing.TB, db *mongo.Database, coll string) {
	t.Helper()
	var v struct {
		Valid    bool     `bson:"valid"`
		Errors   []string `bson:"errors"`
		NIndexes int      `bson:"nIndexes"`
	}
	if err := db.RunCommand(context.Background(), bson.D{{Key: "validate", Value: coll}, {Key: "full", Value: true}}).Decode(&v); err != nil {
		t.Fatal(err)
	}
	if !v.Valid || len(v.Errors) > 0 {
		t.Fatalf("validate %s: %+v", coll, v)
	}
}

// TestIndexBuildLetsWritesProceed builds 4 indexes on 100k documents
// while 4 clients insert, update and delete: writes are acknowledged
// during the build, and the built indexes hold exactly the documents'
// keys afterwards.
func TestIndexBuildLetsWritesProceed(t *testing.T) {
	if testing.Short() {
		t.Skip("100k documents")
	}
	_, client := testenv.Engine(t, engine.Options{})
	db := client.Database("d")
	coll := db.Collection("c")
	fillForBuild(t, coll, buildDocs)
	stop := make(chan struct{})
	var lat []time.Duration
	done := make(chan struct{})
	go func() { lat = writeDuringBuild(t, coll, stop, 10_000_000); close(done) }()
	time.Sleep(20 * time.Millisecond)
	start := time.Now()
	if _, err := coll.Indexes().CreateMany(context.Background(), fourIndexes); err != nil {
		t.Fatal(err)
	}
	took := time.Since(start)
	close(stop)
	<-done
	if len(lat) == 0 {
		t.Fatalf("no write acknowledged during a %v build", took)
	}
	validateClean(t, db, "c")
	sort.Slice(lat, func(i, j int) bool { return lat[i] < lat[j] })
	t.Logf("4-index build on %d documents: %v; %d writes acknowledged meanwhile, p50 %v, p99 %v, max %v",
		buildDocs, took, len(lat), lat[len(lat)/2], lat[len(lat)*99/100], lat[len(lat)-1])
}

// TestIndexBuildDuplicateDuringBuild: a document inserted during a
// unique build with a key another document holds fails the build with
// DuplicateKey (11000), and no index is left behind.
func TestIndexBuildDuplicateDuringBuild(t *testing.T) {
	if testing.Short() {
		t.Skip("100k documents")
	}
	ctx := ctxT(t)
	_, client := testenv.Engine(t, engine.Options{})
	db := client.Database("d")
	coll := db.Collection("c")
	fillForBuild(t, coll, buildDocs/2)
	for try := 0; try < 5; try++ {
		errc := make(chan error, 1)
		go func() {
			_, err := coll.Indexes().CreateOne(context.Background(), mongo.IndexModel{Keys: bson.D{{Key: "u", Value: 1}}, Options: options.Index().SetUnique(true).SetName("u_1")})
			errc <- err
		}()
		waitForBuild(t, client)
		_, insErr := coll.InsertOne(ctx, bson.D{{Key: "_id", Value: -1 - try}, {Key: "u", Value: 42}})
		buildErr := <-errc
		if insErr != nil {
			// The build published first: the insert met the index.
			wantCode(t, insErr, 11000, "DuplicateKey")
			if err := coll.Indexes().DropOne(ctx, "u_1"); err != nil {
				t.Fatal(err)
			}
			continue
		}
		wantCode(t, buildErr, 11000, "DuplicateKey")
		specs, err := coll.Indexes().ListSpecifications(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if len(specs) != 1 {
			t.Fatalf("indexes after a failed build: %v", specs)
		}
		validateClean(t, db, "c")
		// Removing the duplicate lets the same build succeed.
		if _, err := coll.DeleteOne(ctx, bson.D{{Key: "_id", Value: -1 - try}}); err != nil {
			t.Fatal(err)
		}
		if _, err := coll.Indexes().CreateOne(ctx, mongo.IndexModel{Keys: bson.D{{Key: "u", Value: 1}}, Options: options.Index().SetUnique(true).SetName("u_1")}); err != nil {
			t.Fatal(err)
		}
		validateClean(t, db, "c")
		return
	}
	t.Fatal("the duplicate never landed during the build")
}

// waitForBuild waits until currentOp shows an index build scanning, and
// checks its msg and progress fields.
func waitForBuild(t testing.TB, client *mongo.Client) int32 {
	t.Helper()
	admin := client.Database("admin")
	deadline := time.Now().Add(10 * time.Second)
	for time.Now().Before(deadline) {
		var reply struct {
			Inprog []bson.Raw `bson:"inprog"`
		}
		if err := admin.RunCommand(context.Background(), bson.D{{Key: "currentOp", Value: 1}}).Decode(&reply); err != nil {
			t.Fatal(err)
		}
		for _, op := range reply.Inprog {
			msg, ok := op.Lookup("msg").StringValueOK()
			if !ok {
				continue
			}
			if msg != "Index Build: scanning collection" {
				t.Fatalf("currentOp msg %q", msg)
			}
			total := op.Lookup("progress", "total").AsInt64()
			done := op.Lookup("progress", "done").AsInt64()
			if total == 0 || done > total {
				continue // counting or finished: look again
			}
			return op.Lookup("opid").Int32()
		}
		time.Sleep(time.Millisecond)
	}
	t.Fatal("no index build in currentOp")
	return 0
}

// TestIndexBuildKillOp: killOp aborts a running build with Interrupted
// (11601) and leaves no index; the collection stays valid and a later
// build succeeds.
func TestIndexBuildKillOp(t *testing.T) {
	if testing.Short() {
		t.Skip("100k documents")
	}
	ctx := ctxT(t)
	_, client := testenv.Engine(t, engine.Options{})
	db := client.Database("d")
	coll := db.Collection("c")
	fillForBuild(t, coll, buildDocs/2)
	var killed atomic.Bool
	for try := 0; try < 5 && !killed.Load(); try++ {
		errc := make(chan error, 1)
		go func() {
			_, err := coll.Indexes().CreateMany(context.Background(), fourIndexes)
			errc <- err
		}()
		opid := waitForBuild(t, client)
		if err := client.Database("admin").RunCommand(ctx, bson.D{{Key: "killOp", Value: 1}, {Key: "op", Value: opid}}).Err(); err != nil {
			t.Fatal(err)
		}
		err := <-errc
		if err == nil {
			if err := coll.Indexes().DropAll(ctx); err != nil {
				t.Fatal(err)
			}
			continue
		}
		var ce mongo.CommandError
		if !errors.As(err, &ce) || ce.Code != 11601 {
			t.Fatalf("killed build: %v", err)
		}
		killed.Store(true)
	}
	if !killed.Load() {
		t.Fatal("killOp never landed during the build")
	}
	specs, err := coll.Indexes().ListSpecifications(ctx)
	if err != nil || len(specs) != 1 {
		t.Fatalf("indexes after a killed build: %v %v", specs, err)
	}
	validateClean(t, db, "c")
	if _, err := coll.Indexes().CreateMany(ctx, fourIndexes); err != nil {
		t.Fatal(err)
	}
	validateClean(t, db, "c")
}
