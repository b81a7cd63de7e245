package advisor

import (
	"fmt"
	"strings"
)

// Severity ranks findings: Info < Warning < Error.
type Severity int

// Severities, in increasing order.
const (
	Info Severity = iota + 1
	Warning
	Error
)

// String returns the severity's name as the outputs spell it.
func (s Severity) String() string {
	switch s {
	case Info:
		return "info"
	case Warning:
		return "warning"
	case Error:
		return "error"
	}
	return fmt.Sprintf("severity(%d)", int(s))
}

// MarshalText writes the severity's name.
func (s Severity) MarshalText() ([]byte, error) { return []byte(s.String()), nil }

// UnmarshalText reads a severity's name.
func (s *Severity) UnmarshalText(b []byte) error {
	v, err := ParseSeverity(string(b))
	if err != nil {
		return err
	}
	*s = v
	return nil
}

// ParseSeverity reads "info", "warning" or "error" (case-insensitive).
func ParseSeverity(s string) (Severity, error) {
	switch strings.ToLower(s) {
	case "info", "note":
		return Info, nil
	case "warning", "warn":
		return Warning, nil
	case "error":
		return Error, nil
	}
	return 0, fmt.Errorf("advisor: unknown severity %q (want info, warning or error)", s)
}

// Figure is one measured number of a finding's evidence.
type Figure struct {
	// Name says what was measured, e.g. "p95 array length".
	Name string `json:"name"`
	// Value is the measurement.
	Value float64 `json:"value"`
	// Unit is empty for counts, or "bytes", "ms", "share".
	Unit string `json:"unit,omitempty"`
}

// String formats the figure for text output.
func (f Figure) String() string {
	return f.Name + " " + formatValue(f.Value, f.Unit)
}

// formatValue prints v in its unit.
func formatValue(v float64, unit string) string {
	switch unit {
	case "share":
		return fmt.Sprintf("%.1f%%", 100*v)
	case "bytes":
		return humanBytes(v)
	case "ms":
		return fmt.Sprintf("%.0f ms", v)
	}
	if v == float64(int64(v)) {
		return fmt.Sprintf("%d", int64(v))
	}
	return fmt.Sprintf("%.2f", v)
}

// humanBytes prints a byte count with a binary unit.
func humanBytes(v float64) string {
	switch {
	case v >= 1<<20:
		return fmt.Sprintf("%.1f MiB", v/(1<<20))
	case v >= 1<<10:
		return fmt.Sprintf("%.1f KiB", v/(1<<10))
	}
	return fmt.Sprintf("%.0f B", v)
}

// Evidence is what a finding rests on: how it was measured and the
// figures.
type Evidence struct {
	// Method says how the figures were obtained, e.g. "$sample of 1000
	// documents, $size per array computed with $group".
	Method string `json:"method"`
	// Figures are the measurements, in the order they read best.
	Figures []Figure `json:"figures"`
}

// Figure returns the value of the figure named name and whether there is
// one.
func (e Evidence) Figure(name string) (float64, bool) {
	for _, f := range e.Figures {
		if f.Name == name {
			return f.Value, true
		}
	}
	return 0, false
}

// Fix is what to do about a finding.
type Fix struct {
	// Summary says it in one sentence.
	Summary string `json:"summary"`
	// Commands are exact shell commands (mongosh syntax) to run.
	Commands []string `json:"commands,omitempty"`
	// Code is the code change in Go, e.g. the pattern package and its
	// Config.
	Code string `json:"code,omitempty"`
	// Lab is the formwork lab command that measures the pattern's effect,
	// when a scenario exists.
	Lab string `json:"lab,omitempty"`
}

// Finding is one thing a check found.
type Finding struct {
	// ID is the check's stable id, e.g. "blocking-sort".
	ID string `json:"id"`
	// Severity ranks the finding.
	Severity Severity `json:"severity"`
	// Namespace is "db.collection" (or "db" for database-wide findings).
	Namespace string `json:"namespace"`
	// Pattern names the catalogue pattern that fits (e.g. "subset") or,
	// for a mistake with no pattern, the fix's kind (e.g. "index").
	Pattern string `json:"pattern"`
	// Message says what was found, in one sentence.
	Message string `json:"message"`
	// Subject is the field path, index name or query shape concerned.
	Subject string `json:"subject,omitempty"`
	// Evidence holds the figures.
	Evidence Evidence `json:"evidence"`
	// Fix says what to do.
	Fix Fix `json:"fix"`
}
