package lab

import (
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
)

// RequireChromiumVar, when set, turns a missing Chromium into a failure
// instead of a skip; CI sets it.
const RequireChromiumVar = "FORMWORK_REQUIRE_CHROMIUM"

// chromium returns the path of a Chromium or Chrome binary, or "".
func chromium() string {
	for _, name := range []string{"chromium", "chromium-browser", "google-chrome", "google-chrome-stable", "headless-shell"} {
		if p, err := exec.LookPath(name); err == nil {
			return p
		}
	}
	return ""
}

func TestHTMLStandsAlone(t *testing.T) {
	rep := smallRun(t)
	var b strings.Builder
	if err := rep.WriteHTML(&b); err != nil {
		t.Fatal(err)
	}
	page := b.String()
	for _, bad := range []string{"<script", "<link", "src=", "@import", "url(", "http://", "https://"} {
		if strings.Contains(page, bad) {
			t.Errorf("page contains %q: it must not fetch anything", bad)
		}
	}
}

// TestHTMLInChromium renders the report in headless Chromium and checks
// what a reader sees: one section per pattern with its verdict, a bar
// chart with a bar pair per metric, the latency charts, a table, no
// script error and no network request.
func TestHTMLInChromium(t *testing.T) {
	bin := chromium()
	if bin == "" {
		if os.Getenv(RequireChromiumVar) != "" {
			t.Fatalf("no chromium binary on PATH and %s is set", RequireChromiumVar)
		}
		t.Skipf("no chromium binary on PATH (set %s to require one)", RequireChromiumVar)
	}
	rep := smallRun(t)
	path := filepath.Join(t.TempDir(), "lab.html")
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := rep.WriteHTML(f); err != nil {
		t.Fatal(err)
	}
	f.Close()

	// No sandbox: CI runs as root, where Chromium refuses its sandbox.
	actx, cancel := chromedp.NewExecAllocator(context.Background(), chromedp.ExecPath(bin),
		chromedp.Headless, chromedp.NoSandbox, chromedp.DisableGPU)
	defer cancel()
	ctx, cancel := chromedp.NewContext(actx)
	defer cancel()
	ctx, cancel = context.WithTimeout(ctx, 90*time.Second)
	defer cancel()

	var mu sync.Mutex
	var requests, exceptions []string
	err = chromedp.Listen(ctx, func(ev any) {
		mu.Lock()
		defer mu.Unlock()
		switch e := ev.(type) {
		case *network.EventRequestWillBeSent:
			requests = append(requests, e.Request.URL)
		case *runtime.EventExceptionThrown:
			exceptions = append(exceptions, e.ExceptionDetails.Text)
		}
	})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := chromedp.Call(ctx, network.Enable, network.EnableParams{}); err != nil {
		t.Fatal(err)
	}
	if err := chromedp.Do(ctx, chromedp.Navigate("file://"+path), chromedp.WaitVisible(chromedp.CSS("section.pattern"))); err != nil {
		t.Fatal(err)
	}
	js, err := chromedp.Run(ctx, chromedp.Evaluate[string](`JSON.stringify({
		title: document.title,
		sections: [...document.querySelectorAll("section.pattern")].map(s => s.dataset.pattern),
		buys: document.querySelectorAll("section.pattern p.buy").length,
		charges: document.querySelectorAll("section.pattern p.charge").length,
		barCharts: document.querySelectorAll("svg.bars").length,
		barGroups: document.querySelectorAll("svg.bars g.metric").length,
		latency: document.querySelectorAll("svg.latency").length,
		lines: document.querySelectorAll("svg.latency polyline").length,
		rows: document.querySelectorAll("section.pattern tbody tr").length,
		minWidth: Math.min(...[...document.querySelectorAll("svg")].map(s => s.getBoundingClientRect().width)),
		pageHeight: document.body.scrollHeight,
	})`))
	if err != nil {
		t.Fatal(err)
	}
	shot, err := chromedp.Run(ctx, chromedp.FullScreenshot(60))
	if err != nil {
		t.Fatal(err)
	}
	var state struct {
		Title      string   `json:"title"`
		Sections   []string `json:"sections"`
		Buys       int      `json:"buys"`
		Charges    int      `json:"charges"`
		BarCharts  int      `json:"barCharts"`
		BarGroups  int      `json:"barGroups"`
		Latency    int      `json:"latency"`
		Lines      int      `json:"lines"`
		Rows       int      `json:"rows"`
		MinWidth   float64  `json:"minWidth"`
		PageHeight float64  `json:"pageHeight"`
	}
	if err := json.Unmarshal([]byte(js), &state); err != nil {
		t.Fatal(err)
	}
	if p := os.Getenv("FORMWORK_LAB_SCREENSHOT"); p != "" {
		os.WriteFile(p, shot, 0o644)
	}
	metrics, lats := 0, 0
	for _, p := range rep.Patterns {
		metrics += len(p.Metrics)
		lats += len(p.Latencies)
	}
	if !strings.HasPrefix(state.Title, "formwork lab") {
		t.Errorf("title %q", state.Title)
	}
	if strings.Join(state.Sections, ",") != strings.Join(Patterns(), ",") {
		t.Errorf("sections %v, want %v", state.Sections, Patterns())
	}
	n := len(rep.Patterns)
	if state.Buys != n || state.Charges != n || state.BarCharts != n {
		t.Errorf("%d buys, %d charges, %d bar charts for %d patterns", state.Buys, state.Charges, state.BarCharts, n)
	}
	if state.BarGroups != metrics || state.Rows != metrics {
		t.Errorf("%d bar pairs and %d table rows for %d metrics", state.BarGroups, state.Rows, metrics)
	}
	if state.Latency != lats || state.Lines != 2*lats {
		t.Errorf("%d latency charts with %d lines for %d operations", state.Latency, state.Lines, lats)
	}
	if state.MinWidth < 100 || state.PageHeight < 1000 {
		t.Errorf("charts not laid out: narrowest svg %.0f px, page %.0f px high", state.MinWidth, state.PageHeight)
	}
	if len(shot) < 10_000 {
		t.Errorf("screenshot of %d bytes", len(shot))
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
