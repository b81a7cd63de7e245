package advisor

import (
	"encoding/json"
	"io"
)

// jsonReport is the --json document, version 1.
type jsonReport struct {
	Version    int         `json:"version"`
	Server     Server      `json:"server"`
	Taken      string      `json:"taken"`
	Sample     int         `json:"sample"`
	Workload   Workload    `json:"workload"`
	Thresholds Thresholds  `json:"thresholds"`
	Findings   []Finding   `json:"findings"`
	Notes      []string    `json:"notes"`
	Shapes     []jsonShape `json:"shapes"`
}

// jsonShape is a shape as the JSON report lists it.
type jsonShape struct {
	NS           string `json:"ns"`
	Shape        string `json:"shape"`
	Count        int64  `json:"count"`
	KeysExamined int64  `json:"keysExamined"`
	DocsExamined int64  `json:"docsExamined"`
	NReturned    int64  `json:"nreturned"`
	Millis       int64  `json:"millis"`
	PlanSummary  string `json:"planSummary,omitempty"`
}

// WriteJSON writes {"version": 1, "server": {…}, "findings": [{"id",
// "severity", "namespace", "pattern", "evidence", "fix", …}], …}.
func (r *Report) WriteJSON(w io.Writer) error {
	out := jsonReport{Version: 1, Thresholds: r.Thresholds, Findings: r.Findings, Notes: []string{}, Shapes: []jsonShape{}}
	if out.Findings == nil {
		out.Findings = []Finding{}
	}
	if s := r.Snapshot; s != nil {
		out.Server, out.Sample, out.Workload = s.Server, s.Sample, s.Workload
		out.Taken = s.Taken.UTC().Format("2006-01-02T15:04:05Z")
		if s.Notes != nil {
			out.Notes = s.Notes
		}
		for _, sh := range s.Shapes {
			out.Shapes = append(out.Shapes, jsonShape{NS: sh.NS, Shape: sh.Text, Count: sh.Count,
				KeysExamined: sh.KeysExamined, DocsExamined: sh.DocsExamined, NReturned: sh.NReturned,
				Millis: sh.Millis, PlanSummary: sh.PlanSummary})
		}
	}
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(out)
}
