package lab

import (
	"bytes"
	"encoding/json"
	"maps"
	"slices"
	"strings"
	"testing"
)

// keys returns a JSON object's keys, sorted.
func keys(t *testing.T, v any, where string) []string {
	t.Helper()
	m, ok := v.(map[string]any)
	if !ok {
		t.Fatalf("%s: %T, want an object", where, v)
	}
	return slices.Sorted(maps.Keys(m))
}

// TestJSONSchema checks the report's JSON against the versioned schema:
// exactly these fields, these kinds and directions, numbers for figures.
func TestJSONSchema(t *testing.T) {
	rep := smallRun(t)
	var buf bytes.Buffer
	if err := rep.WriteJSON(&buf); err != nil {
		t.Fatal(err)
	}
	var doc map[string]any
	if err := json.Unmarshal(buf.Bytes(), &doc); err != nil {
		t.Fatal(err)
	}
	if got := keys(t, doc, "report"); !slices.Equal(got, []string{"patterns", "scale", "seed", "server", "version"}) {
		t.Errorf("report keys %v", got)
	}
	if doc["version"] != float64(1) || doc["scale"] != float64(smallScale) || doc["seed"] != float64(7) {
		t.Errorf("version %v scale %v seed %v", doc["version"], doc["scale"], doc["seed"])
	}
	if got := keys(t, doc["server"], "server"); !slices.Equal(got, []string{"database", "target", "topology", "version"}) {
		t.Errorf("server keys %v", got)
	}
	patterns, ok := doc["patterns"].([]any)
	if !ok || len(patterns) != len(Patterns()) {
		t.Fatalf("patterns: %v", doc["patterns"])
	}
	for i, p := range patterns {
		if got := keys(t, p, "pattern"); !slices.Equal(got, []string{"metrics", "pattern", "scenario", "verdict"}) {
			t.Errorf("pattern keys %v", got)
		}
		pm := p.(map[string]any)
		if pm["pattern"] != Patterns()[i] {
			t.Errorf("pattern %d is %v, want %s", i, pm["pattern"], Patterns()[i])
		}
		if got := keys(t, pm["verdict"], "verdict"); !slices.Equal(got, []string{"buy", "charge"}) {
			t.Errorf("verdict keys %v", got)
		}
		metrics, _ := pm["metrics"].([]any)
		if len(metrics) == 0 {
			t.Errorf("%v: no metrics", pm["pattern"])
		}
		for _, m := range metrics {
			if got := keys(t, m, "metric"); !slices.Equal(got, []string{"better", "kind", "naive", "name", "pattern", "unit"}) {
				t.Errorf("metric keys %v", got)
			}
			mm := m.(map[string]any)
			if !slices.Contains([]any{"read", "write", "storage", "accuracy"}, mm["kind"]) {
				t.Errorf("kind %v", mm["kind"])
			}
			if !slices.Contains([]any{"lower", "higher"}, mm["better"]) {
				t.Errorf("better %v", mm["better"])
			}
			for _, f := range []string{"naive", "pattern"} {
				if _, ok := mm[f].(float64); !ok {
					t.Errorf("%v %s: %T", mm["name"], f, mm[f])
				}
			}
			if s, _ := mm["name"].(string); s == "" {
				t.Errorf("metric without a name: %v", mm)
			}
		}
	}
}

func TestTable(t *testing.T) {
	rep := smallRun(t)
	var plain, color bytes.Buffer
	if err := rep.WriteTable(&plain, false); err != nil {
		t.Fatal(err)
	}
	if err := rep.WriteTable(&color, true); err != nil {
		t.Fatal(err)
	}
	if strings.Contains(plain.String(), "\x1b[") {
		t.Error("plain table has escape codes")
	}
	if !strings.Contains(color.String(), ansiGreen) || !strings.Contains(color.String(), ansiRed) {
		t.Error("coloured table has no colours")
	}
	for _, p := range rep.Patterns {
		for _, want := range []string{p.Pattern + " — " + p.Scenario, "buy     " + p.Verdict.Buy, "charge  " + p.Verdict.Charge} {
			if !strings.Contains(plain.String(), want) {
				t.Errorf("table lacks %q", want)
			}
		}
	}
	for _, line := range strings.Split(plain.String(), "\n") {
		if strings.HasSuffix(line, " ") {
			t.Errorf("trailing blank: %q", line)
		}
	}
}
