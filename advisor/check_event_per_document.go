package advisor

import (
	"fmt"
	"slices"
	"strings"
)

func init() {
	register(Check{ID: "event-per-document", Pattern: "bucket",
		Doc: "Collections of Thresholds.EventDocs (10000) or more small dated documents (median under EventDocBytes, 512 bytes; at most 8 fields, no arrays, never updated by the workload): one document and one index entry per event; buckets or a time series collection hold them in a fraction of the space.",
		Run: checkEventPerDocument})
}

// timeField returns the top-level date field present in at least 99% of
// the sample, or nil.
func timeField(s *Schema) *Field {
	for _, f := range s.Fields {
		if !strings.Contains(f.Path, ".") && f.Dominant() == "date" && share(f.Types["date"], s.Sampled) >= 0.99 {
			return f
		}
	}
	return nil
}

// metaField guesses the field a time series would use as metaField: a
// top-level string, objectId or integer field present everywhere.
func metaField(s *Schema, skip ...string) string {
	for _, f := range s.Fields {
		if f.Path == "_id" || slices.Contains(skip, f.Path) || strings.Contains(f.Path, ".") || f.Docs < s.Sampled {
			continue
		}
		switch f.Dominant() {
		case "string", "objectId", "int", "long":
			return f.Path
		}
	}
	return ""
}

// checkEventPerDocument reports large collections of small dated
// documents that are not time series and hold no bucket arrays.
func checkEventPerDocument(e *checkEnv) []Finding {
	var out []Finding
	for _, c := range e.collections() {
		s := c.Schema
		if s == nil || c.Type == "timeseries" || c.Count < e.t.EventDocs || s.SizeP50 > float64(e.t.EventDocBytes) {
			continue
		}
		tf := timeField(s)
		if tf == nil {
			continue
		}
		// An event has few fields, is never an array's holder, and is
		// written once: documents that are updated are entities.
		if topLevelFields(s) > 8 || hasArrays(s) || updated(e, c.NS()) {
			continue
		}
		meta := metaField(s, tf.Path)
		ts := fmt.Sprintf("timeField: %q", tf.Path)
		if meta != "" {
			ts += fmt.Sprintf(", metaField: %q", meta)
		}
		out = append(out, Finding{Severity: Info, Namespace: c.NS(), Subject: tf.Path,
			Message: fmt.Sprintf("%d documents of median %s, one per event dated by %s: store them as a time series collection or in buckets", c.Count, humanBytes(s.SizeP50), tf.Path),
			Evidence: Evidence{Method: sampleMethod(c, "$bsonSize percentiles and field types") + "; count from $collStats", Figures: []Figure{
				count("documents", c.Count), fig("median document size", s.SizeP50, "bytes"),
				fig("documents with a date in "+tf.Path, round2(share(tf.Types["date"], s.Sampled)), "share"),
				fig("total index size", float64(c.TotalIndexSize), "bytes")}},
			Fix: Fix{Summary: "Move the events into a time series collection (the server buckets them, 1000 per bucket), or group them per owner and period with the bucket pattern when they need per-element updates.",
				Commands: []string{
					fmt.Sprintf("db.createCollection(%q, {timeseries: {%s, granularity: \"seconds\"}})", c.Name+"_ts", ts),
					fmt.Sprintf("%s.aggregate([{$out: %q}])", collRef(c.Name), c.Name+"_ts")},
				Code: fmt.Sprintf("store, err := bucket.New[Event](db.Collection(%q), bucket.Config{Size: 100, Owner: %q, Time: %q})", c.Name+"Buckets", orText(meta, "owner"), tf.Path)}})
	}
	return out
}

// topLevelFields counts a schema's top-level fields.
func topLevelFields(s *Schema) int {
	n := 0
	for _, f := range s.Fields {
		if !strings.Contains(f.Path, ".") {
			n++
		}
	}
	return n
}

// hasArrays reports whether some field is an array of two or more
// elements in the median document.
func hasArrays(s *Schema) bool {
	for _, f := range s.Fields {
		if f.Array != nil && f.Array.P50 >= 2 {
			return true
		}
	}
	return false
}

// updated reports whether the workload updates documents of ns.
func updated(e *checkEnv, ns string) bool {
	for _, sh := range e.shapesOn(ns) {
		if sh.Op == "update" || sh.Op == "findAndModify" {
			return true
		}
	}
	return false
}
