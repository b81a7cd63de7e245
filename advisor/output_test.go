package advisor

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/cdproto/network"
	"github.com/chromedp/cdproto/runtime"
	"github.com/chromedp/chromedp"
	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo/options"
)

// sampleReport advises on a database with three findings in two
// collections: an unbounded array (warning), a hidden index (info) and a
// sort that failed for memory (error).
func sampleReport(t *testing.T) *Report {
	t.Helper()
	db := newDB(t)
	insert(t, db.Collection("posts"), 20, func(i int) bson.D {
		return bson.D{{Key: "_id", Value: i}, {Key: "comments", Value: ints(300 + i%3)}}
	})
	index(t, db.Collection("posts"), bson.D{{Key: "x", Value: 1}}, options.Index().SetHidden(true))
	reports(t, db, false)
	return advise(t, db, Thresholds{}, "unbounded-array", "hidden-index", "disk-use-sorts")
}

func TestWriteJSON(t *testing.T) {
	rep := sampleReport(t)
	var b bytes.Buffer
	must(t, rep.WriteJSON(&b))
	var doc struct {
		Version int `json:"version"`
		Server  struct {
			Version, Topology string
		} `json:"server"`
		Findings []map[string]json.RawMessage `json:"findings"`
		Shapes   []map[string]any             `json:"shapes"`
	}
	must(t, json.Unmarshal(b.Bytes(), &doc))
	if doc.Version != 1 || doc.Server.Version == "" || doc.Server.Topology == "" {
		t.Errorf("header %+v", doc)
	}
	if len(doc.Findings) != 3 {
		t.Fatalf("%d findings", len(doc.Findings))
	}
	for _, f := range doc.Findings {
		for _, k := range []string{"id", "severity", "namespace", "pattern", "evidence", "fix"} {
			if _, ok := f[k]; !ok {
				t.Errorf("finding lacks %q: %v", k, f)
			}
		}
	}
	var first Finding
	raw, _ := json.Marshal(doc.Findings[0])
	must(t, json.Unmarshal(raw, &first))
	if first.ID != "unbounded-array" || first.Severity != Warning || first.Fix.Lab != "formwork lab subset" || first.Evidence.Method == "" || len(first.Evidence.Figures) == 0 {
		t.Errorf("first finding %+v", first)
	}
}

func TestWriteSARIF(t *testing.T) {
	rep := sampleReport(t)
	var b bytes.Buffer
	must(t, rep.WriteSARIF(&b))
	var log struct {
		Schema  string `json:"$schema"`
		Version string `json:"version"`
		Runs    []struct {
			Tool struct {
				Driver struct {
					Name  string `json:"name"`
					Rules []struct {
						ID string `json:"id"`
					} `json:"rules"`
				} `json:"driver"`
			} `json:"tool"`
			Results []struct {
				RuleID    string `json:"ruleId"`
				RuleIndex int    `json:"ruleIndex"`
				Level     string `json:"level"`
				Message   struct {
					Text string `json:"text"`
				} `json:"message"`
				Locations []struct {
					LogicalLocations []struct {
						Name string `json:"name"`
					} `json:"logicalLocations"`
				} `json:"locations"`
			} `json:"results"`
		} `json:"runs"`
	}
	must(t, json.Unmarshal(b.Bytes(), &log))
	if log.Version != "2.1.0" || !strings.Contains(log.Schema, "sarif-2.1.0") || len(log.Runs) != 1 {
		t.Fatalf("log %+v", log)
	}
	run := log.Runs[0]
	if len(run.Tool.Driver.Rules) != len(Checks()) {
		t.Errorf("%d rules for %d checks", len(run.Tool.Driver.Rules), len(Checks()))
	}
	levels := map[string]string{}
	for _, r := range run.Results {
		levels[r.RuleID] = r.Level
		if run.Tool.Driver.Rules[r.RuleIndex].ID != r.RuleID {
			t.Errorf("ruleIndex %d is %s, not %s", r.RuleIndex, run.Tool.Driver.Rules[r.RuleIndex].ID, r.RuleID)
		}
		if len(r.Locations) != 1 || !strings.HasSuffix(r.Locations[0].LogicalLocations[0].Name, ".posts") && !strings.HasSuffix(r.Locations[0].LogicalLocations[0].Name, ".reports") {
			t.Errorf("locations %+v", r.Locations)
		}
	}
	want := map[string]string{"disk-use-sorts": "error", "unbounded-array": "warning", "hidden-index": "note"}
	for id, l := range want {
		if levels[id] != l {
			t.Errorf("%s level %q, want %q", id, levels[id], l)
		}
	}
}

func TestWriteText(t *testing.T) {
	rep := sampleReport(t)
	var b bytes.Buffer
	must(t, rep.WriteText(&b, false))
	out := b.String()
	posts, reports := strings.Index(out, ".posts\n"), strings.Index(out, ".reports\n")
	if posts < 0 || reports < 0 || posts > reports {
		t.Errorf("not grouped by collection in order:\n%s", out)
	}
	for _, want := range []string{"error   disk-use-sorts", "warning unbounded-array", "info    hidden-index",
		"evidence: documents with the array 20;", "measure it: formwork lab subset", "3 findings: 1 error, 1 warning, 1 info"} {
		if !strings.Contains(out, want) {
			t.Errorf("text lacks %q:\n%s", want, out)
		}
	}
	if strings.Contains(out, "\x1b[") {
		t.Error("colour codes without colour")
	}
}

func TestHTMLStandsAlone(t *testing.T) {
	var b strings.Builder
	must(t, sampleReport(t).WriteHTML(&b))
	page := b.String()
	for _, bad := range []string{"<script", "<link", "src=", "@import", "url(", "http://", "https://"} {
		if strings.Contains(page, bad) {
			t.Errorf("page contains %q: it must not fetch anything", bad)
		}
	}
}

// requireChromiumVar, when set, turns a missing Chromium into a failure;
// CI sets it (the lab's tests read the same variable).
const requireChromiumVar = "FORMWORK_REQUIRE_CHROMIUM"

// chromium returns the path of a Chromium or Chrome binary, or "".
func chromium() string {
	for _, name := range []string{"chromium", "chromium-browser", "google-chrome", "google-chrome-stable", "headless-shell"} {
		if p, err := exec.LookPath(name); err == nil {
			return p
		}
	}
	return ""
}

// TestHTMLInChromium renders the report in headless Chromium and checks
// what a reader sees: one section per collection, one article per
// finding with its severity, evidence rows and fix, no script error and
// no network request.
func TestHTMLInChromium(t *testing.T) {
	bin := chromium()
	if bin == "" {
		if os.Getenv(requireChromiumVar) != "" {
			t.Fatalf("no chromium binary on PATH and %s is set", requireChromiumVar)
		}
		t.Skipf("no chromium binary on PATH (set %s to require one)", requireChromiumVar)
	}
	rep := sampleReport(t)
	path := filepath.Join(t.TempDir(), "advise.html")
	f, err := os.Create(path)
	must(t, err)
	must(t, rep.WriteHTML(f))
	f.Close()

	actx, cancel := chromedp.NewExecAllocator(context.Background(), chromedp.ExecPath(bin),
		chromedp.Headless, chromedp.NoSandbox, chromedp.DisableGPU)
	defer cancel()
	ctx, cancel := chromedp.NewContext(actx)
	defer cancel()
	ctx, cancel = context.WithTimeout(ctx, 90*time.Second)
	defer cancel()
	var mu sync.Mutex
	var requests, exceptions []string
	must(t, chromedp.Listen(ctx, func(ev any) {
		mu.Lock()
		defer mu.Unlock()
		switch e := ev.(type) {
		case *network.EventRequestWillBeSent:
			requests = append(requests, e.Request.URL)
		case *runtime.EventExceptionThrown:
			exceptions = append(exceptions, e.ExceptionDetails.Text)
		}
	}))
	if _, err := chromedp.Call(ctx, network.Enable, network.EnableParams{}); err != nil {
		t.Fatal(err)
	}
	must(t, chromedp.Do(ctx, chromedp.Navigate("file://"+path), chromedp.WaitVisible(chromedp.CSS("section.collection"))))
	js, err := chromedp.Run(ctx, chromedp.Evaluate[string](`JSON.stringify({
		title: document.title,
		sections: [...document.querySelectorAll("section.collection")].map(s => s.dataset.ns.split(".").pop()),
		findings: [...document.querySelectorAll("article.finding")].map(a => a.dataset.id + ":" + a.dataset.severity),
		evidenceRows: document.querySelectorAll("article.finding table.evidence tr").length,
		fixes: document.querySelectorAll("article.finding p.fix").length,
		commands: document.querySelectorAll("article.finding pre.commands").length,
		code: document.querySelectorAll("article.finding pre.code").length,
		width: Math.min(...[...document.querySelectorAll("article.finding")].map(a => a.getBoundingClientRect().width)),
	})`))
	must(t, err)
	var state struct {
		Title        string   `json:"title"`
		Sections     []string `json:"sections"`
		Findings     []string `json:"findings"`
		EvidenceRows int      `json:"evidenceRows"`
		Fixes        int      `json:"fixes"`
		Commands     int      `json:"commands"`
		Code         int      `json:"code"`
		Width        float64  `json:"width"`
	}
	must(t, json.Unmarshal([]byte(js), &state))
	if !strings.HasPrefix(state.Title, "formwork advise") {
		t.Errorf("title %q", state.Title)
	}
	if strings.Join(state.Sections, ",") != "posts,reports" {
		t.Errorf("sections %v", state.Sections)
	}
	if strings.Join(state.Findings, ",") != "unbounded-array:warning,hidden-index:info,disk-use-sorts:error" {
		t.Errorf("findings %v", state.Findings)
	}
	figs := 0
	for _, f := range rep.Findings {
		figs += len(f.Evidence.Figures)
	}
	if state.EvidenceRows != figs || state.Fixes != 3 || state.Commands != 2 || state.Code != 1 {
		t.Errorf("%d evidence rows for %d figures, %d fixes, %d command blocks, %d code blocks", state.EvidenceRows, figs, state.Fixes, state.Commands, state.Code)
	}
	if state.Width < 300 {
		t.Errorf("findings laid out %.0f px wide", state.Width)
	}
	mu.Lock()
	defer mu.Unlock()
	for _, u := range requests {
		if u != "file://"+path {
			t.Errorf("the page fetched %s", u)
		}
	}
	if len(exceptions) > 0 {
		t.Errorf("script errors: %v", exceptions)
	}
}
