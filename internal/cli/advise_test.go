package cli

import (
	"context"
	"encoding/json"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo"
	"go.mongodb.org/mongo-driver/v2/mongo/options"

	"github.com/formworkdb/formwork/advisor"
	"github.com/formworkdb/formwork/engine"
)

func TestAdviseFlags(t *testing.T) {
	env, _, _, _ := testEnv()
	cmd := newAdviseCmd(env)
	if err := cmd.ParseFlags([]string{"--uri", "mongodb://h:1", "--db", "a", "--db", "b", "--sample", "50",
		"--json=r.json", "--sarif", "r.sarif", "--html", "r.html", "--fail-on", "warning", "--threshold", "arrayLen=300",
		"--check", "unbounded-array", "--budget", "10s", "--max-time", "2s", "--enable-profiler"}); err != nil {
		t.Fatal(err)
	}
	f := cmd.Flags()
	if v, _ := f.GetStringArray("db"); strings.Join(v, ",") != "a,b" {
		t.Errorf("db = %v", v)
	}
	for name, want := range map[string]string{"uri": "mongodb://h:1", "json": "r.json", "sarif": "r.sarif", "html": "r.html", "fail-on": "warning"} {
		if v, _ := f.GetString(name); v != want {
			t.Errorf("%s = %q, want %q", name, v, want)
		}
	}
	// --json alone writes to stdout.
	cmd = newAdviseCmd(env)
	if err := cmd.ParseFlags([]string{"--json"}); err != nil {
		t.Fatal(err)
	}
	if v, _ := cmd.Flags().GetString("json"); v != "-" {
		t.Errorf("--json alone = %q", v)
	}
	// Parsing turns the flags into advisor options.
	o := &adviseOptions{URI: "mongodb://h:1", Sample: 50, Budget: time.Second, MaxTime: time.Second,
		ProfileFrom: advisor.ProfileSource, Thresholds: []string{"arrayLen=300", "coldDays=30"}}
	opts, err := o.parse()
	if err != nil {
		t.Fatal(err)
	}
	if opts.Thresholds.ArrayLen != 300 || opts.Thresholds.ColdDays != 30 || opts.Sample != 50 || opts.Workload != nil {
		t.Errorf("options %+v", opts)
	}
}

func TestAdviseUsageErrors(t *testing.T) {
	for _, args := range [][]string{
		{"advise"},
		{"advise", "--demo", "--uri", "mongodb://h:1"},
		{"advise", "--demo", "--db", "x"},
		{"advise", "--uri", "mongodb://h:1", "--fail-on", "fatal"},
		{"advise", "--uri", "mongodb://h:1", "--threshold", "arrayLen"},
		{"advise", "--uri", "mongodb://h:1", "--threshold", "noSuch=1"},
		{"advise", "--uri", "mongodb://h:1", "--threshold", "arrayLen=many"},
		{"advise", "--uri", "mongodb://h:1", "--check", "no-such-check"},
		{"advise", "--uri", "mongodb://h:1", "--sample", "0"},
		{"advise", "--uri", "mongodb://h:1", "--profile-from", "/no/such/file"},
		{"advise", "extra"},
	} {
		env, _, errb, _ := testEnv()
		if code := Main(args, env); code != ExitUsage {
			t.Errorf("%v: exit = %d, want %d; stderr %s", args, code, ExitUsage, errb)
		}
	}
}

// TestAdviseDemo runs the demo end to end: text on stdout, the three
// files, and exit status 3 for --fail-on error.
func TestAdviseDemo(t *testing.T) {
	if testing.Short() {
		t.Skip("the demo takes seconds")
	}
	dir := t.TempDir()
	j, s, h := filepath.Join(dir, "a.json"), filepath.Join(dir, "a.sarif"), filepath.Join(dir, "a.html")
	env, out, errb, _ := testEnv()
	code := Main([]string{"advise", "--demo", "--json=" + j, "--sarif", s, "--html", h, "--fail-on", "error"}, env)
	if code != ExitFindings {
		t.Fatalf("exit %d, want %d; stderr %s", code, ExitFindings, errb)
	}
	text := out.String()
	for _, want := range []string{"formwork_demo.orders", "blocking-sort", "unbounded-array", "measure it: formwork lab subset"} {
		if !strings.Contains(text, want) {
			t.Errorf("text lacks %q", want)
		}
	}
	var rep struct {
		Version  int `json:"version"`
		Findings []struct {
			ID string `json:"id"`
		} `json:"findings"`
	}
	raw, err := os.ReadFile(j)
	if err != nil || json.Unmarshal(raw, &rep) != nil || rep.Version != 1 || len(rep.Findings) < len(advisor.Checks()) {
		t.Errorf("json: %v, %d findings", err, len(rep.Findings))
	}
	if raw, err := os.ReadFile(s); err != nil || !strings.Contains(string(raw), `"version": "2.1.0"`) {
		t.Errorf("sarif: %v", err)
	}
	if raw, err := os.ReadFile(h); err != nil || !strings.Contains(string(raw), `data-id="unbounded-array"`) {
		t.Errorf("html: %v", err)
	}
}

// TestAdviseURI advises on a database served over TCP: --db selects it,
// --json=- prints the JSON alone, and with no finding at or above
// --fail-on the exit status is 0.
func TestAdviseURI(t *testing.T) {
	ctx := context.Background()
	db, err := engine.Open(ctx, engine.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	go db.Serve(l)
	uri := fmt.Sprintf("mongodb://%s/?directConnection=true", l.Addr())
	client, err := mongo.Connect(options.Client().ApplyURI(uri))
	if err != nil {
		t.Fatal(err)
	}
	defer client.Disconnect(ctx)
	posts := make([]any, 20)
	for i := range posts {
		arr := make(bson.A, 300+i)
		for j := range arr {
			arr[j] = j
		}
		posts[i] = bson.D{{Key: "_id", Value: i}, {Key: "comments", Value: arr}}
	}
	if _, err := client.Database("blog").Collection("posts").InsertMany(ctx, posts); err != nil {
		t.Fatal(err)
	}
	env, out, errb, _ := testEnv()
	code := Main([]string{"advise", "--uri", uri, "--db", "blog", "--json", "--fail-on", "error"}, env)
	if code != ExitOK {
		t.Fatalf("exit %d; stderr %s", code, errb)
	}
	var rep struct {
		Server struct {
			Target string `json:"target"`
		} `json:"server"`
		Findings []struct {
			ID, Namespace string
		} `json:"findings"`
	}
	if err := json.Unmarshal([]byte(out.String()), &rep); err != nil {
		t.Fatalf("stdout is not the JSON report: %v\n%s", err, out)
	}
	if len(rep.Findings) != 1 || rep.Findings[0].ID != "unbounded-array" || rep.Findings[0].Namespace != "blog.posts" || !strings.HasPrefix(rep.Server.Target, "mongodb://127.0.0.1:") {
		t.Errorf("report %+v", rep)
	}
	// --fail-on warning turns the same finding into exit status 3.
	env, _, errb, _ = testEnv()
	if code := Main([]string{"advise", "--uri", uri, "--db", "blog", "--fail-on", "warning"}, env); code != ExitFindings {
		t.Errorf("exit %d, want %d; stderr %s", code, ExitFindings, errb)
	}
}

func TestAdviseListChecks(t *testing.T) {
	env, out, errb, _ := testEnv()
	if code := Main([]string{"advise", "--list-checks"}, env); code != ExitOK {
		t.Fatalf("exit %d; stderr %s", code, errb)
	}
	text := out.String()
	for _, c := range advisor.Checks() {
		if !strings.Contains(text, c.ID+" ") {
			t.Errorf("no %s in\n%s", c.ID, text)
		}
	}
	if !strings.Contains(text, "arrayLen=200") {
		t.Errorf("no thresholds in\n%s", text)
	}
}
