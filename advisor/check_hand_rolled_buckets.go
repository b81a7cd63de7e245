package advisor

import (
	"fmt"
	"strings"
)

func init() {
	register(Check{ID: "hand-rolled-buckets", Pattern: "timeseries",
		Doc: "Documents that bucket timestamped measurements by hand (an array of dated elements next to a bucket date and a count): a time series collection does the bucketing, compression and expiry on the server.",
		Run: checkHandRolledBuckets})
}

// checkHandRolledBuckets reports arrays of dated documents held next to a
// top-level date and a top-level integer count.
func checkHandRolledBuckets(e *checkEnv) []Finding {
	var out []Finding
	for _, c := range e.collections() {
		s := c.Schema
		if s == nil || c.Type == "timeseries" || s.Sampled == 0 {
			continue
		}
		tf := timeField(s)
		if tf == nil {
			continue
		}
		counter := ""
		for _, f := range s.Fields {
			if !strings.Contains(f.Path, ".") && f.Path != "_id" && share(f.Docs, s.Sampled) >= 0.9 &&
				(f.Dominant() == "int" || f.Dominant() == "long") && strings.Contains(strings.ToLower(f.Path), "count") {
				counter = f.Path
				break
			}
		}
		if counter == "" {
			continue
		}
		for _, f := range s.Fields {
			if f.Array == nil || strings.Contains(f.Path, ".") || f.Array.P50 < 2 {
				continue
			}
			elemTime := ""
			for _, sub := range s.Fields {
				if rest, ok := strings.CutPrefix(sub.Path, f.Path+"."); ok && !strings.Contains(rest, ".") && sub.Dominant() == "date" {
					elemTime = rest
					break
				}
			}
			if elemTime == "" {
				continue
			}
			meta := metaField(s, tf.Path, counter)
			spec := fmt.Sprintf("timeField: %q", elemTime)
			if meta != "" {
				spec += fmt.Sprintf(", metaField: %q", meta)
			}
			out = append(out, Finding{Severity: Info, Namespace: c.NS(), Subject: f.Path,
				Message: fmt.Sprintf("hand-rolled buckets: %s holds dated measurements (%s.%s), %s opens the bucket and %s counts them", f.Path, f.Path, elemTime, tf.Path, counter),
				Evidence: Evidence{Method: sampleMethod(c, "field types and $size percentiles"), Figures: []Figure{
					count("documents", c.Count), fig("median measurements per bucket", f.Array.P50, ""),
					fig("max measurements per bucket", f.Array.Max, ""), fig("median document size", s.SizeP50, "bytes")}},
				Fix: Fix{Summary: "Use a time series collection: one document per measurement, bucketed, compressed and expired by the server (keep the hand-rolled bucket only when elements need per-element updates or uniqueness).",
					Commands: []string{
						fmt.Sprintf("db.createCollection(%q, {timeseries: {%s, granularity: \"seconds\"}})", c.Name+"_ts", spec),
						fmt.Sprintf("%s.aggregate([{$unwind: \"$%s\"}, {$replaceWith: {$mergeObjects: [\"$%s\", {%s}]}}, {$out: %q}])",
							collRef(c.Name), f.Path, f.Path, metaProjection(meta), c.Name+"_ts")}}})
		}
	}
	return out
}

// metaProjection copies the meta field into each unwound measurement.
func metaProjection(meta string) string {
	if meta == "" {
		return ""
	}
	return fmt.Sprintf("%s: \"$%s\"", quoteField(meta), meta)
}
