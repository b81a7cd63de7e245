package advisor

import (
	"html/template"
	"io"
)

// htmlPage is the report as one self-contained page: inline CSS, no
// script, nothing fetched.
var htmlPage = template.Must(template.New("advise").Funcs(template.FuncMap{
	"fig": func(f Figure) string { return formatValue(f.Value, f.Unit) },
}).Parse(`<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>formwork advise — {{.Target}}</title>
<style>
body{font:15px/1.45 system-ui,sans-serif;margin:0 auto;max-width:980px;padding:1.5em;color:#1d2327;background:#fbfbfa}
h1{font-size:1.5em;margin:.2em 0}
h2{font-size:1.15em;margin:1.6em 0 .4em;padding-bottom:.2em;border-bottom:2px solid #d7dadd;font-family:ui-monospace,monospace}
.meta{color:#555}
.summary{display:flex;gap:.8em;margin:1em 0}
.summary span{padding:.3em .8em;border-radius:4px;color:#fff;font-weight:600}
.error{background:#b3261e}.warning{background:#a86400}.info{background:#2f6f9f}
article.finding{background:#fff;border:1px solid #d7dadd;border-left:5px solid #2f6f9f;border-radius:4px;margin:.8em 0;padding:.6em 1em}
article.finding[data-severity=error]{border-left-color:#b3261e}
article.finding[data-severity=warning]{border-left-color:#a86400}
article h3{font-size:1em;margin:.2em 0}
.sev{font-size:.8em;padding:.1em .5em;border-radius:3px;color:#fff;margin-right:.5em;text-transform:uppercase}
table.evidence{border-collapse:collapse;margin:.4em 0}
table.evidence td{padding:.15em .8em .15em 0;border-bottom:1px solid #eee}
table.evidence td.v{font-variant-numeric:tabular-nums;text-align:right;font-weight:600}
pre{background:#f3f4f5;padding:.5em .8em;overflow-x:auto;border-radius:3px;font-size:.88em}
.method,.subject{color:#555;font-size:.9em}
ul.notes{color:#555}
</style></head>
<body>
<h1>formwork advise</h1>
<p class="meta">{{.Target}} · MongoDB {{.Version}} ({{.Topology}}) · {{.Collections}} collections, sample {{.Sample}} · {{.Entries}} workload entries in {{.Shapes}} shapes from {{.Source}}</p>
<div class="summary"><span class="error">{{.Errors}} error</span><span class="warning">{{.Warnings}} warning</span><span class="info">{{.Infos}} info</span></div>
{{if not .Groups}}<p class="none">No findings.</p>{{end}}
{{range .Groups}}<section class="collection" data-ns="{{.NS}}">
<h2>{{.NS}}</h2>
{{range .Findings}}<article class="finding" id="{{.ID}}-{{.Namespace}}" data-id="{{.ID}}" data-severity="{{.Severity}}">
<h3><span class="sev {{.Severity}}">{{.Severity}}</span>{{.ID}}: {{.Message}}</h3>
{{if .Subject}}<p class="subject">on <code>{{.Subject}}</code></p>{{end}}
<table class="evidence"><tbody>{{range .Evidence.Figures}}<tr><td>{{.Name}}</td><td class="v">{{fig .}}</td></tr>{{end}}</tbody></table>
<p class="method">Measured: {{.Evidence.Method}}</p>
<p class="fix"><b>Fix ({{.Pattern}}):</b> {{.Fix.Summary}}</p>
{{if .Fix.Commands}}<pre class="commands">{{range .Fix.Commands}}{{.}}
{{end}}</pre>{{end}}
{{if .Fix.Code}}<pre class="code">{{.Fix.Code}}</pre>{{end}}
{{if .Fix.Lab}}<p class="lab">Measure the pattern: <code>{{.Fix.Lab}}</code></p>{{end}}
</article>
{{end}}</section>
{{end}}
{{if .Notes}}<h2>Notes</h2><ul class="notes">{{range .Notes}}<li>{{.}}</li>{{end}}</ul>{{end}}
</body></html>
`))

// htmlGroup is one collection's findings.
type htmlGroup struct {
	NS       string
	Findings []Finding
}

// WriteHTML writes the report as one self-contained HTML page, one
// section per namespace.
func (r *Report) WriteHTML(w io.Writer) error {
	v := struct {
		Target, Version, Topology, Source string
		Collections, Sample, Entries      int
		Shapes                            int
		Errors, Warnings, Infos           int
		Groups                            []htmlGroup
		Notes                             []string
	}{Target: "server", Source: "no workload"}
	if s := r.Snapshot; s != nil {
		v.Target = orText(s.Server.Target, "server")
		v.Version, v.Topology, v.Sample = s.Server.Version, s.Server.Topology, s.Sample
		v.Source = orText(s.Workload.Source, "no workload")
		v.Entries, v.Shapes, v.Notes = s.Workload.Entries, len(s.Shapes), s.Notes
		for _, d := range s.Databases {
			v.Collections += len(d.Collections)
		}
	}
	for _, f := range r.Findings {
		switch f.Severity {
		case Error:
			v.Errors++
		case Warning:
			v.Warnings++
		default:
			v.Infos++
		}
		if n := len(v.Groups); n == 0 || v.Groups[n-1].NS != f.Namespace {
			v.Groups = append(v.Groups, htmlGroup{NS: f.Namespace})
		}
		g := &v.Groups[len(v.Groups)-1]
		g.Findings = append(g.Findings, f)
	}
	return htmlPage.Execute(w, v)
}
