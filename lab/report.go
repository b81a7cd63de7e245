package lab

import (
	"encoding/json"
	"io"
)

// SchemaVersion is the version of the JSON report.
const SchemaVersion = 1

// Report is the outcome of a run; its JSON form is the versioned schema
// of `formwork lab --json`.
type Report struct {
	Version  int             `json:"version"`
	Server   Server          `json:"server"`
	Scale    int             `json:"scale"`
	Seed     int64           `json:"seed"`
	Patterns []PatternResult `json:"patterns"`
	// Seconds is the run's wall-clock time; it is not part of the JSON
	// schema.
	Seconds float64 `json:"-"`
}

// Server describes where the lab ran.
type Server struct {
	// Version is buildInfo's version.
	Version string `json:"version"`
	// Topology is "standalone", "replica set <name>" or "sharded".
	Topology string `json:"topology"`
	// Target is "embedded engine (in memory)" or the URI without its
	// credentials.
	Target string `json:"target"`
	// Database is the scratch database the lab used and dropped.
	Database string `json:"database"`
}

// PatternResult is one pattern's scenario, measured.
type PatternResult struct {
	// Pattern is the package name: extref, subset, computed, approx,
	// bucket, outlier, attribute.
	Pattern string `json:"pattern"`
	// Scenario says what application both forms implement.
	Scenario string  `json:"scenario"`
	Verdict  Verdict `json:"verdict"`
	// Metrics are the measurements of both forms, in display order.
	Metrics []Metric `json:"metrics"`
	// Latencies are the latency samples of the main operations, for the
	// HTML charts; not part of the JSON schema.
	Latencies []Latency `json:"-"`
}

// Verdict names, in one line each, the pattern's biggest win and its
// biggest charge, with figures.
type Verdict struct {
	Buy    string `json:"buy"`
	Charge string `json:"charge"`
}

// Kind classifies a metric.
type Kind string

// The kinds of metric.
const (
	KindRead     Kind = "read"
	KindWrite    Kind = "write"
	KindStorage  Kind = "storage"
	KindAccuracy Kind = "accuracy"
)

// Better says which direction of a metric is good.
type Better string

// The directions.
const (
	Lower  Better = "lower"
	Higher Better = "higher"
)

// Metric is one measurement of both forms.
type Metric struct {
	Name    string  `json:"name"`
	Kind    Kind    `json:"kind"`
	Unit    string  `json:"unit"`
	Better  Better  `json:"better"`
	Naive   float64 `json:"naive"`
	Pattern float64 `json:"pattern"`
	// Timing marks a wall-clock figure, which varies between runs; the
	// verdict prefers the other metrics. Not part of the JSON schema.
	Timing bool `json:"-"`
	// Minor marks a figure the verdict names only when nothing else
	// differs: the bytes a read returns or a write sends, which follow
	// from the documents and round trips already counted. Not part of
	// the JSON schema.
	Minor bool `json:"-"`
}

// Latency holds one operation's latency samples in microseconds, for
// both forms.
type Latency struct {
	Op      string
	Naive   []float64
	Pattern []float64
}

// WriteJSON writes r as indented JSON.
func (r Report) WriteJSON(w io.Writer) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(r)
}
