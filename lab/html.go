package lab

import (
	"fmt"
	"html"
	"io"
	"math"
	"slices"
	"strings"
)

// WriteHTML writes the report as one self-contained HTML page: inline
// CSS and inline SVG charts (for each pattern, naive against pattern bars
// per metric and the latency distributions of its main operations), no
// script and no fetch of anything.
func (r Report) WriteHTML(w io.Writer) error {
	var b strings.Builder
	title := fmt.Sprintf("formwork lab — scale %d, seed %d", r.Scale, r.Seed)
	fmt.Fprintf(&b, `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>%s</title>
<style>%s</style>
</head>
<body>
<h1>formwork lab</h1>
<p class="meta">%s · server %s (%s) · database %s · scale %d · seed %d`,
		esc(title), pageCSS, esc(r.Server.Target), esc(r.Server.Version), esc(r.Server.Topology),
		esc(r.Server.Database), r.Scale, r.Seed)
	if r.Seconds > 0 {
		fmt.Fprintf(&b, " · %.1f s", r.Seconds)
	}
	b.WriteString("</p>\n<p class=\"legend\"><span class=\"swatch naive\"></span>naive form <span class=\"swatch win\"></span>pattern wins <span class=\"swatch pay\"></span>pattern pays <span class=\"swatch even\"></span>even</p>\n<nav>")
	for _, p := range r.Patterns {
		fmt.Fprintf(&b, `<a href="#pattern-%s">%s</a> `, esc(p.Pattern), esc(p.Pattern))
	}
	b.WriteString("</nav>\n")
	for _, p := range r.Patterns {
		writePatternHTML(&b, p)
	}
	b.WriteString("</body>\n</html>\n")
	_, err := io.WriteString(w, b.String())
	return err
}

// esc escapes text for HTML and SVG.
func esc(s string) string { return html.EscapeString(s) }

// writePatternHTML writes one pattern's section.
func writePatternHTML(b *strings.Builder, p PatternResult) {
	fmt.Fprintf(b, `<section class="pattern" id="pattern-%s" data-pattern="%s">
<h2>%s</h2>
<p class="scenario">%s</p>
<p class="verdict buy"><b>Buy</b> %s</p>
<p class="verdict charge"><b>Charge</b> %s</p>
`, esc(p.Pattern), esc(p.Pattern), esc(p.Pattern), esc(p.Scenario), esc(p.Verdict.Buy), esc(p.Verdict.Charge))
	writeBars(b, p.Metrics)
	if len(p.Latencies) > 0 {
		b.WriteString(`<div class="latencies">`)
		for _, l := range p.Latencies {
			writeLatency(b, l)
		}
		b.WriteString("</div>\n")
	}
	b.WriteString("<table>\n<thead><tr><th>metric</th><th>kind</th><th>naive</th><th>pattern</th><th>unit</th></tr></thead>\n<tbody>\n")
	for _, m := range p.Metrics {
		fmt.Fprintf(b, "<tr class=\"%s\"><td>%s</td><td>%s</td><td class=\"num\">%s</td><td class=\"num\">%s</td><td>%s</td></tr>\n",
			outcome(m), esc(m.Name), esc(string(m.Kind)), esc(Format(m.Naive, m.Unit)), esc(Format(m.Pattern, m.Unit)), esc(m.Unit))
	}
	b.WriteString("</tbody>\n</table>\n</section>\n")
}

// outcome is a metric's CSS class: win, pay or even.
func outcome(m Metric) string {
	switch {
	case m.Wins():
		return "win"
	case m.Pays():
		return "pay"
	}
	return "even"
}

// Geometry of the bar chart.
const (
	barWidth  = 900
	barLabel  = 360 // label column
	barArea   = 400 // longest bar
	barRow    = 30
	barHeight = 10
)

// writeBars draws one row per metric: the naive and the pattern figure
// as two bars scaled to the larger of the two, so that each row compares
// its own pair whatever the unit.
func writeBars(b *strings.Builder, ms []Metric) {
	h := barRow*len(ms) + 10
	fmt.Fprintf(b, `<svg class="bars" role="img" aria-label="naive against pattern, per metric" viewBox="0 0 %d %d" width="%d" height="%d">`+"\n",
		barWidth, h, barWidth, h)
	for i, m := range ms {
		y := 5 + i*barRow
		top := math.Max(math.Abs(m.Naive), math.Abs(m.Pattern))
		scale := func(v float64) float64 {
			if top == 0 {
				return 0
			}
			return math.Max(1, math.Abs(v)/top*barArea)
		}
		fmt.Fprintf(b, `<g class="metric %s"><title>%s: naive %s, pattern %s %s</title>`,
			outcome(m), esc(m.Name), esc(Format(m.Naive, m.Unit)), esc(Format(m.Pattern, m.Unit)), esc(m.Unit))
		fmt.Fprintf(b, `<text x="0" y="%d" class="label">%s</text>`, y+barHeight+4, esc(m.Name))
		fmt.Fprintf(b, `<rect class="naive" x="%d" y="%d" width="%.1f" height="%d"/>`, barLabel, y, scale(m.Naive), barHeight)
		fmt.Fprintf(b, `<text x="%.1f" y="%d" class="value">%s</text>`, float64(barLabel)+scale(m.Naive)+4, y+barHeight-1, esc(Format(m.Naive, m.Unit)))
		fmt.Fprintf(b, `<rect class="pattern" x="%d" y="%d" width="%.1f" height="%d"/>`, barLabel, y+barHeight+2, scale(m.Pattern), barHeight)
		fmt.Fprintf(b, `<text x="%.1f" y="%d" class="value">%s %s</text>`, float64(barLabel)+scale(m.Pattern)+4, y+2*barHeight+1,
			esc(Format(m.Pattern, m.Unit)), esc(m.Unit))
		b.WriteString("</g>\n")
	}
	b.WriteString("</svg>\n")
}

// Geometry of a latency chart.
const (
	latW, latH       = 440, 240
	latLeft, latBot  = 44, 36
	latTop, latRight = 28, 36
)

// writeLatency draws the cumulative distribution of one operation's
// latencies in both forms, on a logarithmic time axis.
func writeLatency(b *strings.Builder, l Latency) {
	all := append(slices.Clone(l.Naive), l.Pattern...)
	fmt.Fprintf(b, `<svg class="latency" role="img" aria-label="latency distribution: %s" viewBox="0 0 %d %d" width="%d" height="%d">`+"\n",
		esc(l.Op), latW, latH, latW, latH)
	fmt.Fprintf(b, `<text x="%d" y="16" class="title">%s</text>`+"\n", latLeft, esc(l.Op))
	lo, hi := math.Inf(1), math.Inf(-1)
	for _, v := range all {
		if v > 0 {
			lo, hi = math.Min(lo, v), math.Max(hi, v)
		}
	}
	if math.IsInf(lo, 1) {
		b.WriteString("</svg>\n")
		return
	}
	llo, lhi := math.Floor(math.Log10(lo)), math.Ceil(math.Log10(hi))
	if lhi == llo {
		lhi++
	}
	plotW, plotH := float64(latW-latLeft-latRight), float64(latH-latTop-latBot)
	x := func(v float64) float64 {
		// Zero samples sit on the left edge.
		return float64(latLeft) + (math.Log10(math.Max(v, math.Pow(10, llo)))-llo)/(lhi-llo)*plotW
	}
	y := func(f float64) float64 { return float64(latTop) + (1-f)*plotH }
	fmt.Fprintf(b, `<rect class="frame" x="%d" y="%d" width="%.0f" height="%.0f"/>`+"\n", latLeft, latTop, plotW, plotH)
	for e := llo; e <= lhi; e++ {
		xe := x(math.Pow(10, e))
		fmt.Fprintf(b, `<line class="grid" x1="%.1f" y1="%d" x2="%.1f" y2="%.0f"/><text x="%.1f" y="%d" class="tick" text-anchor="middle">%s</text>`+"\n",
			xe, latTop, xe, float64(latTop)+plotH, xe, latH-latBot+14, esc(durationText(math.Pow(10, e))))
	}
	for _, f := range []float64{0, 0.5, 0.99} {
		fmt.Fprintf(b, `<text x="4" y="%.1f" class="tick">p%.0f</text>`+"\n", y(f)+4, f*100)
	}
	fmt.Fprintf(b, `<text x="%d" y="%d" class="tick">latency per operation, cumulative (log scale)</text>`+"\n", latLeft, latH-4)
	for _, s := range []struct {
		class string
		xs    []float64
	}{{"naive", l.Naive}, {"pattern", l.Pattern}} {
		if len(s.xs) == 0 {
			continue
		}
		sorted := slices.Clone(s.xs)
		slices.Sort(sorted)
		var pts strings.Builder
		for i, v := range sorted {
			fmt.Fprintf(&pts, "%.1f,%.1f ", x(v), y(float64(i+1)/float64(len(sorted))))
		}
		fmt.Fprintf(b, `<polyline class="cdf %s" points="%s"/>`+"\n", s.class, strings.TrimSpace(pts.String()))
	}
	fmt.Fprintf(b, `<text x="%d" y="%d" class="key naive">naive</text><text x="%d" y="%d" class="key pattern">pattern</text>`+"\n",
		latW-latRight-80, 16, latW-latRight-30, 16)
	b.WriteString("</svg>\n")
}

// durationText prints microseconds as µs, ms or s.
func durationText(us float64) string {
	switch {
	case us >= 1e6:
		return fmt.Sprintf("%gs", us/1e6)
	case us >= 1e3:
		return fmt.Sprintf("%gms", us/1e3)
	}
	return fmt.Sprintf("%gµs", us)
}

// pageCSS styles the page; it is inline so that the file stands alone.
const pageCSS = `
body{font:14px/1.45 system-ui,-apple-system,"Segoe UI",sans-serif;margin:24px auto;max-width:960px;color:#1d2125;padding:0 16px}
h1{margin:0 0 4px}h2{margin:0;font-size:20px}
.meta,.scenario{color:#555}
nav a{margin-right:10px}
section.pattern{border-top:1px solid #ddd;margin-top:28px;padding-top:12px}
.verdict{margin:4px 0}.verdict b{display:inline-block;width:64px}
.buy b{color:#1a7f37}.charge b{color:#c62828}
svg{display:block;margin:12px 0;max-width:100%;height:auto}
svg text{font:12px system-ui,sans-serif;fill:#1d2125}
svg .value,svg .tick{fill:#555;font-size:11px}
svg .title{font-weight:600}
rect.naive{fill:#9aa0a6}
.win rect.pattern{fill:#2e9e4f}.pay rect.pattern{fill:#d64545}.even rect.pattern{fill:#4a78c2}
.frame{fill:none;stroke:#ccc}.grid{stroke:#eee}
polyline.cdf{fill:none;stroke-width:2}
polyline.naive{stroke:#9aa0a6}polyline.pattern{stroke:#4a78c2}
text.key.naive{fill:#7d848b}text.key.pattern{fill:#4a78c2}
.latencies{display:flex;flex-wrap:wrap;gap:12px}
table{border-collapse:collapse;width:100%;margin-top:8px}
th,td{text-align:left;padding:3px 8px;border-bottom:1px solid #eee}
td.num{text-align:right;font-variant-numeric:tabular-nums}
tr.win td:nth-child(4){color:#1a7f37}tr.pay td:nth-child(4){color:#c62828}
.legend .swatch{display:inline-block;width:12px;height:10px;margin:0 4px 0 10px}
.swatch.naive{background:#9aa0a6}.swatch.win{background:#2e9e4f}.swatch.pay{background:#d64545}.swatch.even{background:#4a78c2}
`
