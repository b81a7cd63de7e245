package cli

import (
	"context"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"go.mongodb.org/mongo-driver/v2/bson"

	"github.com/formworkdb/formwork/engine"
	"github.com/formworkdb/formwork/internal/testenv"
)

// migrateServer serves an in-memory engine on a local port and returns
// its URI and a client.
func migrateServer(t *testing.T) (string, *engine.DB) {
	t.Helper()
	db, err := engine.Open(context.Background(), engine.Options{})
	if err != nil {
		t.Fatal(err)
	}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	go db.Serve(l)
	t.Cleanup(func() { l.Close(); db.Close() })
	return "mongodb://" + l.Addr().String() + "/?directConnection=true", db
}

// TestJobsMigrate runs formwork jobs migrate end to end on a served
// engine: a dry run writes nothing, a run upgrades every document through
// the spec's steps and prints the summary, a second run has nothing left.
func TestJobsMigrate(t *testing.T) {
	uri, eng := migrateServer(t)
	client, err := testenv.Connect(eng)
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	defer client.Disconnect(ctx)
	coll := client.Database("crm").Collection("contacts")
	var docs []any
	for i := range 1200 {
		d := bson.D{{Key: "_id", Value: i}, {Key: "name", Value: "n"}, {Key: "work", Value: "w"}}
		if i%2 == 1 {
			d = bson.D{{Key: "_id", Value: i}, {Key: "schemaVersion", Value: 2}, {Key: "name", Value: "n"}, {Key: "contactInfo", Value: bson.D{{Key: "work", Value: "w"}}}}
		}
		docs = append(docs, d)
	}
	if _, err := coll.InsertMany(ctx, docs); err != nil {
		t.Fatal(err)
	}
	spec := filepath.Join(t.TempDir(), "spec.json")
	if err := os.WriteFile(spec, []byte(`{"steps": [{"rename": {"work": "contactInfo.work"}}, {"set": {"tags": []}}]}`), 0o600); err != nil {
		t.Fatal(err)
	}
	args := []string{"jobs", "migrate", "--uri", uri, "--db", "crm", "--coll", "contacts", "--spec", spec, "--batch", "100"}

	env, out, errb, _ := testEnv()
	if code := Main(append(args, "--dry-run"), env); code != ExitOK {
		t.Fatalf("dry run: exit %d: %s", code, errb)
	}
	if !strings.Contains(out.String(), "dry run: 1200 documents to upgrade to version 3") || !strings.Contains(out.String(), "version 1: 600 documents") {
		t.Errorf("dry run output:\n%s", out)
	}
	if n, _ := coll.CountDocuments(ctx, bson.D{{Key: "schemaVersion", Value: 3}}); n != 0 {
		t.Fatalf("dry run wrote %d", n)
	}

	env, out, errb, _ = testEnv()
	if code := Main(args, env); code != ExitOK {
		t.Fatalf("run: exit %d: %s", code, errb)
	}
	for _, want := range []string{"migrated: 1200 of 1200 at version 3, finished in 12 batches", "version 3: 1200 documents (newest)"} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}
	if !strings.Contains(errb.String(), "migrate: 100 of 1200 at version 3") {
		t.Errorf("no progress lines: %q", errb)
	}
	raw, err := coll.FindOne(ctx, bson.D{{Key: "_id", Value: 0}}).Raw()
	if err != nil {
		t.Fatal(err)
	}
	if raw.Lookup("contactInfo", "work").StringValue() != "w" || raw.Lookup("work").Type != 0 || raw.Lookup("schemaVersion").AsInt64() != 3 {
		t.Errorf("stored %v", raw)
	}

	env, out, errb, _ = testEnv()
	if code := Main(args, env); code != ExitOK {
		t.Fatalf("rerun: exit %d: %s", code, errb)
	}
	if !strings.Contains(out.String(), "0 of 0 at version 3, finished") {
		t.Errorf("rerun output:\n%s", out)
	}
}

// TestJobsMigrateUsage checks the usage errors: missing flags, a bad
// batch, a spec that is not one.
func TestJobsMigrateUsage(t *testing.T) {
	bad := filepath.Join(t.TempDir(), "bad.json")
	os.WriteFile(bad, []byte(`{"steps": []}`), 0o600)
	for _, args := range [][]string{
		{"jobs", "migrate", "--db", "d", "--coll", "c", "--spec", "s"},
		{"jobs", "migrate", "--uri", "mongodb://x", "--db", "d", "--coll", "c", "--spec", "s", "--batch", "0"},
		{"jobs", "migrate", "--uri", "mongodb://x", "--db", "d", "--coll", "c", "--spec", bad},
	} {
		env, _, errb, _ := testEnv()
		if code := Main(args, env); code != ExitUsage {
			t.Errorf("%v: exit %d, want %d; %s", args, code, ExitUsage, errb)
		}
	}
}

// cancelOnWrite cancels a context at the first progress line written.
type cancelOnWrite struct {
	syncBuffer
	cancel context.CancelFunc
}

func (c *cancelOnWrite) Write(p []byte) (int, error) {
	if strings.HasPrefix(string(p), "migrate: ") {
		c.cancel()
	}
	return c.syncBuffer.Write(p)
}

// TestJobsMigrateResumes interrupts a run after its first batch (as a
// signal would), checks the exit status and that the rerun resumes the
// recorded job and finishes it.
func TestJobsMigrateResumes(t *testing.T) {
	uri, eng := migrateServer(t)
	client, err := testenv.Connect(eng)
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	defer client.Disconnect(ctx)
	coll := client.Database("crm").Collection("contacts")
	var docs []any
	for i := range 500 {
		docs = append(docs, bson.D{{Key: "_id", Value: i}, {Key: "work", Value: "w"}})
	}
	if _, err := coll.InsertMany(ctx, docs); err != nil {
		t.Fatal(err)
	}
	spec := filepath.Join(t.TempDir(), "spec.json")
	if err := os.WriteFile(spec, []byte(`{"steps": [{"rename": {"work": "contactInfo.work"}}]}`), 0o600); err != nil {
		t.Fatal(err)
	}
	args := []string{"jobs", "migrate", "--uri", uri, "--db", "crm", "--coll", "contacts", "--spec", spec, "--batch", "50"}
	sigCtx, cancel := context.WithCancel(ctx)
	errw := &cancelOnWrite{cancel: cancel}
	out := &syncBuffer{}
	env := Env{Stdout: out, Stderr: errw, Signals: func() (context.Context, func()) { return sigCtx, func() {} }}
	if code := Main(args, env); code != ExitInterrupted {
		t.Fatalf("interrupted run: exit %d; %s %s", code, out, errw.String())
	}
	left, _ := coll.CountDocuments(ctx, bson.D{{Key: "schemaVersion", Value: bson.D{{Key: "$ne", Value: 2}}}})
	if !strings.Contains(errw.String(), "progress is recorded, rerun to resume") {
		t.Errorf("no resume hint: %s", errw.String())
	}
	if left == 0 || left == 500 {
		t.Fatalf("%d left after the interrupted run", left)
	}
	env2, out2, errb2, _ := testEnv()
	if code := Main(args, env2); code != ExitOK {
		t.Fatalf("rerun: exit %d: %s", code, errb2)
	}
	if !strings.Contains(out2.String(), "migrated (resumed): 500 of 500 at version 2, finished") {
		t.Errorf("rerun output:\n%s", out2)
	}
}
