package cli

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestLabFlags(t *testing.T) {
	env, _, _, _ := testEnv()
	cmd := newLabCmd(env)
	if err := cmd.ParseFlags([]string{"--scale", "7", "--seed", "9", "--uri", "mongodb://h:1", "--json", "r.json", "--html", "r.html", "--quiet"}); err != nil {
		t.Fatal(err)
	}
	f := cmd.Flags()
	if v, _ := f.GetInt("scale"); v != 7 {
		t.Errorf("scale = %d", v)
	}
	if v, _ := f.GetInt64("seed"); v != 9 {
		t.Errorf("seed = %d", v)
	}
	for name, want := range map[string]string{"uri": "mongodb://h:1", "json": "r.json", "html": "r.html"} {
		if v, _ := f.GetString(name); v != want {
			t.Errorf("%s = %q", name, v)
		}
	}
	if v, _ := f.GetBool("quiet"); !v {
		t.Error("quiet not set")
	}
	fresh := newLabCmd(env).Flags()
	if v, _ := fresh.GetInt("scale"); v != 100 {
		t.Errorf("default scale = %d", v)
	}
}

func TestLabUsageErrors(t *testing.T) {
	for _, args := range [][]string{
		{"lab", "nosuchpattern"},
		{"lab", "--scale", "0"},
		{"lab", "--scale", "big"},
		{"lab", "--colour"},
	} {
		env, _, errb, _ := testEnv()
		if code := Main(args, env); code != ExitUsage {
			t.Errorf("%v: exit = %d, want %d; stderr %s", args, code, ExitUsage, errb)
		}
	}
}

// TestLabRun runs two scenarios at a small scale end to end: the table on
// stdout (no colour: not a terminal), progress lines on stderr, the JSON
// and HTML files.
func TestLabRun(t *testing.T) {
	dir := t.TempDir()
	jsonPath, htmlPath := filepath.Join(dir, "lab.json"), filepath.Join(dir, "lab.html")
	env, out, errb, _ := testEnv()
	code := Main([]string{"lab", "subset", "approx", "--scale", "5", "--json", jsonPath, "--html", htmlPath}, env)
	if code != ExitOK {
		t.Fatalf("exit %d; stderr %s", code, errb)
	}
	table := out.String()
	for _, want := range []string{"subset — ", "approx — ", "buy ", "charge ", "product page: documents examined"} {
		if !strings.Contains(table, want) {
			t.Errorf("table lacks %q:\n%s", want, table)
		}
	}
	if strings.Contains(table, "\x1b[") || strings.Contains(table, "outlier") {
		t.Errorf("table has colour codes or an unselected pattern:\n%s", table)
	}
	if !strings.Contains(errb.String(), "lab: subset done") {
		t.Errorf("no progress on stderr: %q", errb)
	}
	raw, err := os.ReadFile(jsonPath)
	if err != nil {
		t.Fatal(err)
	}
	var rep struct {
		Version  int `json:"version"`
		Patterns []struct {
			Pattern string `json:"pattern"`
		} `json:"patterns"`
	}
	if err := json.Unmarshal(raw, &rep); err != nil || rep.Version != 1 || len(rep.Patterns) != 2 {
		t.Errorf("json: %v %+v", err, rep)
	}
	page, err := os.ReadFile(htmlPath)
	if err != nil || !strings.Contains(string(page), `data-pattern="subset"`) {
		t.Errorf("html: %v", err)
	}

	// --json - prints the JSON alone on stdout; --quiet prints no progress.
	env, out, errb, _ = testEnv()
	if code := Main([]string{"lab", "approx", "--scale", "5", "--json", "-", "--quiet"}, env); code != ExitOK {
		t.Fatalf("exit %d; stderr %s", code, errb)
	}
	if err := json.Unmarshal([]byte(out.String()), &rep); err != nil || rep.Patterns[0].Pattern != "approx" {
		t.Errorf("stdout is not the JSON report: %v\n%s", err, out)
	}
	if errb.String() != "" {
		t.Errorf("--quiet wrote %q", errb)
	}
}
