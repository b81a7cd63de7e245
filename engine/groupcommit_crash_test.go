package engine_test

import (
	"context"
	"fmt"
	"os"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo"
	"go.mongodb.org/mongo-driver/v2/mongo/options"

	"github.com/formworkdb/formwork/engine"
	"github.com/formworkdb/formwork/internal/testenv"
)

// Sizes of the group commit crash test: 32 durable writers, killed once
// the parent has seen this many acknowledgments.
const (
	crashWriters = 32
	crashAcks    = 3000
)

// TestGroupCommitSurvivesSIGKILL runs 32 concurrent durable writers in a
// child process, each inserting documents (with a unique secondary index)
// and incrementing its own counter, and prints every acknowledgment. The
// parent kills the child with SIGKILL in mid-stream, reopens the database
// and checks that every acknowledged insert is there, that no counter is
// below its acknowledged increments, and that validate finds the indexes
// consistent with the documents.
func TestGroupCommitSurvivesSIGKILL(t *testing.T) {
	if dir := os.Getenv("FORMWORK_GROUP_COMMIT_DIR"); dir != "" {
		groupCommitChild(dir)
		return
	}
	if testing.Short() {
		t.Skip("spawns a child process")
	}
	dir := t.TempDir()
	cmd, sc, stderr := startCrashChild(t, "TestGroupCommitSurvivesSIGKILL", "FORMWORK_GROUP_COMMIT_DIR", dir)
	inserted := map[string]bool{}
	incs := map[int]int{}
	acks := 0
	deadline := time.Now().Add(2 * time.Minute)
	for acks < crashAcks && sc.Scan() {
		if time.Now().After(deadline) {
			break
		}
		kind, arg, _ := strings.Cut(sc.Text(), " ")
		switch kind {
		case "insert":
			inserted[arg] = true
		case "inc":
			w, _ := strconv.Atoi(arg)
			incs[w]++
		default:
			t.Fatalf("child: %s", sc.Text())
		}
		acks++
	}
	if err := cmd.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	// Acknowledgments already in the pipe were acknowledged before the
	// kill, so they count too.
	for sc.Scan() {
		kind, arg, _ := strings.Cut(sc.Text(), " ")
		switch kind {
		case "insert":
			inserted[arg] = true
		case "inc":
			w, _ := strconv.Atoi(arg)
			incs[w]++
		}
	}
	cmd.Wait()
	if acks < crashAcks {
		t.Fatalf("child stopped after %d acknowledgments: %s", acks, stderr.String())
	}

	ctx := ctxT(t)
	db, client := testenv.Engine(t, engine.Options{Dir: dir})
	_ = db
	coll := client.Database("d").Collection("docs")
	cur, err := coll.Find(ctx, bson.D{}, options.Find().SetProjection(bson.D{{Key: "_id", Value: 1}}))
	if err != nil {
		t.Fatal(err)
	}
	present := map[string]bool{}
	for cur.Next(ctx) {
		present[cur.Current.Lookup("_id").StringValue()] = true
	}
	if err := cur.Err(); err != nil {
		t.Fatal(err)
	}
	for id := range inserted {
		if !present[id] {
			t.Errorf("acknowledged insert %s lost", id)
		}
	}
	for w, n := range incs {
		var got struct{ N int }
		if err := client.Database("d").Collection("counters").FindOne(ctx, bson.D{{Key: "_id", Value: w}}).Decode(&got); err != nil {
			t.Fatalf("counter %d: %v", w, err)
		}
		if got.N < n {
			t.Errorf("counter %d = %d after %d acknowledged increments", w, got.N, n)
		}
	}
	for _, name := range []string{"docs", "counters"} {
		var v struct {
			Valid  bool     `bson:"valid"`
			Errors []string `bson:"errors"`
		}
		if err := client.Database("d").RunCommand(ctx, bson.D{{Key: "validate", Value: name}, {Key: "full", Value: true}}).Decode(&v); err != nil {
			t.Fatal(err)
		}
		if !v.Valid || len(v.Errors) > 0 {
			t.Errorf("validate %s: %+v", name, v)
		}
	}
	t.Logf("%d acknowledged inserts and %d counters checked after SIGKILL", len(inserted), len(incs))
}

// groupCommitChild writes from 32 goroutines until it is killed, printing
// "insert <id>" or "inc <writer>" after each acknowledged write.
func groupCommitChild(dir string) {
	ctx := context.Background()
	fail := func(err error) {
		fmt.Fprintln(os.Stdout, "error", err)
		os.Exit(1)
	}
	db, err := engine.Open(ctx, engine.Options{Dir: dir})
	if err != nil {
		fail(err)
	}
	client, err := testenv.Connect(db)
	if err != nil {
		fail(err)
	}
	d := client.Database("d")
	docs, counters := d.Collection("docs"), d.Collection("counters")
	if _, err := docs.Indexes().CreateOne(ctx, mongo.IndexModel{Keys: bson.D{{Key: "k", Value: 1}}, Options: options.Index().SetUnique(true)}); err != nil {
		fail(err)
	}
	var out sync.Mutex
	ack := func(format string, args ...any) {
		out.Lock()
		defer out.Unlock()
		fmt.Fprintf(os.Stdout, format+"\n", args...)
	}
	for w := 0; w < crashWriters; w++ {
		go func() {
			for i := 0; ; i++ {
				if i%4 == 3 {
					_, err := counters.UpdateOne(ctx, bson.D{{Key: "_id", Value: w}}, bson.D{{Key: "$inc", Value: bson.D{{Key: "n", Value: 1}}}}, options.UpdateOne().SetUpsert(true))
					if err != nil {
						fail(err)
					}
					ack("inc %d", w)
					continue
				}
				id := fmt.Sprintf("w%02d-%06d", w, i)
				if _, err := docs.InsertOne(ctx, bson.D{{Key: "_id", Value: id}, {Key: "k", Value: id}, {Key: "w", Value: w}, {Key: "tags", Value: bson.A{w, i}}}); err != nil {
					fail(err)
				}
				ack("insert %s", id)
			}
		}()
	}
	select {} // until killed
}
