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

// TestCrashDuringDDLAndIndexBuild kills a child process with SIGKILL
// while 8 writers insert into a collection that an index build loop
// keeps building and dropping indexes on, and a DDL loop creates,
// renames and drops collections. After reopening, every acknowledged
// insert is present, every acknowledged collection change holds, no
// half-built index is visible, and validate finds every collection
// clean.
func TestCrashDuringDDLAndIndexBuild(t *testing.T) {
	if dir := os.Getenv("FORMWORK_CRASH_DDL_DIR"); dir != "" {
		crashDDLChild(dir)
		return
	}
	if testing.Short() {
		t.Skip("spawns a child process")
	}
	dir := t.TempDir()
	cmd, sc, stderr := startCrashChild(t, "TestCrashDuringDDLAndIndexBuild", "FORMWORK_CRASH_DDL_DIR", dir)
	inserted := map[string]bool{}
	live := map[string]bool{} // collections acknowledged as existing
	gone := map[string]bool{} // collections acknowledged as dropped or renamed away
	// newest is the last collection acknowledged as created: the drop or
	// rename the child runs next on it may have committed unacknowledged
	// when the kill came, so it may be gone (or renamed) afterwards.
	newest := ""
	builds, buildsStarted := 0, 0
	record := func(line string) {
		kind, arg, _ := strings.Cut(line, " ")
		switch kind {
		case "insert":
			inserted[arg] = true
		case "create":
			live[arg] = true
			newest = arg
		case "rename":
			from, to, _ := strings.Cut(arg, " ")
			delete(live, from)
			gone[from] = true
			live[to] = true
		case "drop":
			delete(live, arg)
			gone[arg] = true
		case "build":
			builds++
		case "building":
			buildsStarted++
		case "ready":
		default:
			t.Fatalf("child: %s", line)
		}
	}
	ready := false
	deadline := time.Now().Add(90 * time.Second)
	var killAt time.Time
	for sc.Scan() {
		record(sc.Text())
		if sc.Text() == "ready" {
			ready = true
			killAt = time.Now().Add(3 * time.Second)
		}
		if ready && buildsStarted > builds && time.Now().After(killAt) {
			break // an index build is in progress: kill now
		}
		if time.Now().After(deadline) {
			break
		}
	}
	if err := cmd.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	for sc.Scan() {
		record(sc.Text())
	}
	cmd.Wait()
	if !ready || len(inserted) == 0 {
		t.Fatalf("child wrote nothing: %s", stderr.String())
	}

	ctx := ctxT(t)
	_, client := testenv.Engine(t, engine.Options{Dir: dir})
	d := client.Database("d")
	cur, err := d.Collection("docs").Find(ctx, bson.D{}, options.Find().SetProjection(bson.D{{Key: "_id", Value: 1}}))
	if err != nil {
		t.Fatal(err)
	}
	present := map[string]bool{}
	for cur.Next(ctx) {
		present[cur.Current.Lookup("_id").StringValue()] = true
	}
	lost := 0
	for id := range inserted {
		if !present[id] {
			lost++
		}
	}
	if lost > 0 {
		t.Errorf("%d of %d acknowledged inserts lost", lost, len(inserted))
	}
	names, err := d.ListCollectionNames(ctx, bson.D{})
	if err != nil {
		t.Fatal(err)
	}
	exists := map[string]bool{}
	for _, n := range names {
		exists[n] = true
	}
	for n := range live {
		if !exists[n] && !(n == newest && inFlightDDL(n, exists)) {
			t.Errorf("acknowledged collection %s is missing", n)
		}
	}
	for n := range gone {
		if exists[n] && !live[n] {
			t.Errorf("collection %s was acknowledged dropped or renamed but exists", n)
		}
	}
	specs, err := d.Collection("docs").Indexes().ListSpecifications(ctx)
	if err != nil {
		t.Fatal(err)
	}
	for _, n := range names {
		var v struct {
			Valid  bool     `bson:"valid"`
			Errors []string `bson:"errors"`
		}
		if err := d.RunCommand(ctx, bson.D{{Key: "validate", Value: n}, {Key: "full", Value: true}}).Decode(&v); err != nil {
			t.Fatal(err)
		}
		if !v.Valid || len(v.Errors) > 0 {
			t.Errorf("validate %s: %+v", n, v)
		}
	}
	t.Logf("after SIGKILL: %d acknowledged inserts, %d collections, %d builds done and %d started, %d indexes on docs; all present, validate clean",
		len(inserted), len(names), builds, buildsStarted, len(specs))
}

// crashDDLChild runs the writers, the index build loop and the DDL loop
// until it is killed, printing each acknowledged change.
func crashDDLChild(dir string) {
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
	docs := d.Collection("docs")
	var out sync.Mutex
	ack := func(format string, args ...any) {
		out.Lock()
		defer out.Unlock()
		fmt.Fprintf(os.Stdout, format+"\n", args...)
	}
	// A collection large enough for builds to take a while.
	for lo := 0; lo < 20_000; lo += 2000 {
		batch := make([]any, 0, 2000)
		for i := lo; i < lo+2000; i++ {
			id := fmt.Sprintf("pre-%06d", i)
			batch = append(batch, bson.D{{Key: "_id", Value: id}, {Key: "k", Value: i % 97}, {Key: "s", Value: id}})
		}
		if _, err := docs.InsertMany(ctx, batch); err != nil {
			fail(err)
		}
		for i := lo; i < lo+2000; i++ {
			ack("insert pre-%06d", i)
		}
	}
	ack("ready")
	for w := 0; w < 8; w++ {
		go func() {
			for i := 0; ; i++ {
				id := fmt.Sprintf("w%d-%06d", w, i)
				if _, err := docs.InsertOne(ctx, bson.D{{Key: "_id", Value: id}, {Key: "k", Value: i % 97}, {Key: "s", Value: id}, {Key: "t", Value: bson.A{w, i}}}); err != nil {
					fail(err)
				}
				ack("insert %s", id)
			}
		}()
	}
	go func() {
		models := []mongo.IndexModel{
			{Keys: bson.D{{Key: "k", Value: 1}, {Key: "s", Value: 1}}},
			{Keys: bson.D{{Key: "s", Value: -1}}, Options: options.Index().SetUnique(true)},
			{Keys: bson.D{{Key: "t", Value: 1}}},
		}
		for i := 0; ; i++ {
			ack("building %d", i)
			if _, err := docs.Indexes().CreateMany(ctx, models); err != nil {
				fail(err)
			}
			ack("build %d", i)
			if err := docs.Indexes().DropAll(ctx); err != nil {
				fail(err)
			}
		}
	}()
	for i := 0; ; i++ {
		name := fmt.Sprintf("ddl%05d", i)
		if err := d.CreateCollection(ctx, name); err != nil {
			fail(err)
		}
		if _, err := d.Collection(name).InsertOne(ctx, bson.D{{Key: "i", Value: i}}); err != nil {
			fail(err)
		}
		ack("create %s", name)
		switch i % 3 {
		case 1:
			if err := d.Collection(name).Drop(ctx); err != nil {
				fail(err)
			}
			ack("drop %s", name)
		case 2:
			to := "ren" + name[3:]
			if err := client.Database("admin").RunCommand(ctx, bson.D{{Key: "renameCollection", Value: "d." + name}, {Key: "to", Value: "d." + to}}).Err(); err != nil {
				fail(err)
			}
			ack("rename %s %s", name, to)
		}
	}
}

// inFlightDDL reports whether collection name (ddlNNNNN) may be missing
// because the child's next step on it, unacknowledged when it was
// killed, committed: a drop (NNNNN % 3 == 1), or a rename to renNNNNN
// (NNNNN % 3 == 2), which must then exist.
func inFlightDDL(name string, exists map[string]bool) bool {
	i, err := strconv.Atoi(name[3:])
	if err != nil {
		return false
	}
	switch i % 3 {
	case 1:
		return true
	case 2:
		return exists["ren"+name[3:]]
	}
	return false
}
