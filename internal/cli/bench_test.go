package cli

import (
	"encoding/json"
	"strings"
	"testing"
	"time"
)

func TestBenchFlags(t *testing.T) {
	env, _, _, _ := testEnv()
	cmd := newBenchCmd(env)
	if err := cmd.ParseFlags([]string{"--uri", "mongodb://h:1", "--duration", "5s", "--clients", "2,16", "--only", "mixed,insertOne", "--json"}); err != nil {
		t.Fatal(err)
	}
	f := cmd.Flags()
	if v, _ := f.GetString("uri"); v != "mongodb://h:1" {
		t.Errorf("uri = %q", v)
	}
	if v, _ := f.GetDuration("duration"); v != 5*time.Second {
		t.Errorf("duration = %v", v)
	}
	if v, _ := f.GetIntSlice("clients"); len(v) != 2 || v[0] != 2 || v[1] != 16 {
		t.Errorf("clients = %v", v)
	}
	if v, _ := f.GetStringSlice("only"); len(v) != 2 || v[0] != "mixed" {
		t.Errorf("only = %v", v)
	}
	fresh := newBenchCmd(env).Flags()
	if v, _ := fresh.GetIntSlice("clients"); len(v) != 3 || v[2] != 32 {
		t.Errorf("default clients = %v", v)
	}
	if v, _ := fresh.GetString("database"); v != "formwork_bench" {
		t.Errorf("default database = %q", v)
	}
}

func TestBenchUsageErrors(t *testing.T) {
	for _, args := range [][]string{
		{"bench", "--uri", "mongodb://h:1", "--dbpath", "/tmp/x"},
		{"bench", "--clients", "0"},
		{"bench", "--duration", "0s"},
		{"bench", "--duration", "soon"},
	} {
		env, _, errb, _ := testEnv()
		if code := Main(args, env); code != ExitUsage {
			t.Errorf("%v: exit = %d, want %d; stderr %s", args, code, ExitUsage, errb)
		}
	}
}

func TestBenchRunsEmbeddedJSON(t *testing.T) {
	env, out, errb, _ := testEnv()
	args := []string{"bench", "--duration", "50ms", "--clients", "2", "--only", "insertOne,indexScan/docs=10000,mixed,pushLarge", "--json"}
	if code := Main(args, env); code != ExitOK {
		t.Fatalf("exit = %d; stderr %s", code, errb)
	}
	var rep struct {
		Version int
		Target  string
		Results []struct {
			Name    string
			Ops     int
			Metrics map[string]float64
		}
	}
	if err := json.Unmarshal([]byte(out.String()), &rep); err != nil {
		t.Fatalf("%v: %s", err, out)
	}
	var names []string
	for _, r := range rep.Results {
		names = append(names, r.Name)
		if r.Ops == 0 || len(r.Metrics) == 0 {
			t.Errorf("%s: %d ops, metrics %v", r.Name, r.Ops, r.Metrics)
		}
	}
	want := "insertOne/clients=2 indexScan/docs=10000 mixed/clients=2 pushLarge/size=100KB"
	if rep.Version != 1 || rep.Target != "embedded engine in memory" || strings.Join(names, " ") != want {
		t.Fatalf("report: version %d, target %q, results %v; want %s", rep.Version, rep.Target, names, want)
	}
	if r := rep.Results[1].Metrics; r["ix/coll"] <= 0 || r["ix-ns/doc"] <= 0 {
		t.Errorf("indexScan metrics = %v", r)
	}
}

func TestBenchPrintsTable(t *testing.T) {
	env, out, errb, _ := testEnv()
	if code := Main([]string{"bench", "--duration", "20ms", "--only", "pushLarge"}, env); code != ExitOK {
		t.Fatalf("exit = %d; stderr %s", code, errb)
	}
	if s := out.String(); !strings.HasPrefix(s, "target: embedded engine in memory\npushLarge/size=100KB") || !strings.Contains(s, "MB/s") {
		t.Fatalf("output = %q", s)
	}
}

// TestBenchDurableReportsLogSyncs runs insertOne on a durable embedded
// engine: the server reports its journal figures, so the result says how
// many writes one log sync carried; in memory there are none to report.
func TestBenchDurableReportsLogSyncs(t *testing.T) {
	env, out, errb, _ := testEnv()
	args := []string{"bench", "--dbpath", t.TempDir(), "--duration", "100ms", "--clients", "4", "--only", "insertOne", "--json"}
	if code := Main(args, env); code != ExitOK {
		t.Fatalf("exit = %d; stderr %s", code, errb)
	}
	var rep struct {
		Results []struct {
			Name    string
			Metrics map[string]float64
		}
	}
	if err := json.Unmarshal([]byte(out.String()), &rep); err != nil || len(rep.Results) != 1 {
		t.Fatalf("%v: %s", err, out)
	}
	m := rep.Results[0].Metrics
	if m["log-writes/sync"] < 1 || m["log-µs/sync"] <= 0 {
		t.Errorf("durable insertOne metrics = %v, want log-writes/sync ≥ 1 and log-µs/sync > 0", m)
	}

	env, out, errb, _ = testEnv()
	if code := Main([]string{"bench", "--duration", "50ms", "--clients", "2", "--only", "insertOne", "--json"}, env); code != ExitOK {
		t.Fatalf("exit = %d; stderr %s", code, errb)
	}
	if strings.Contains(out.String(), "log-writes/sync") {
		t.Errorf("in memory the report has journal figures: %s", out)
	}
}
