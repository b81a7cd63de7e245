package advisor

import (
	"fmt"
	"math"
)

func init() {
	register(Check{ID: "outlier-skew", Pattern: "outlier",
		Doc: "Arrays short in most documents but past Thresholds.ArrayLen in a few: the outliers dictate the document's size and every query's cost.",
		Run: checkOutlierSkew})
}

// checkOutlierSkew reports array paths whose longest array reaches
// ArrayLen and OutlierRatio times the 95th percentile, while the 95th
// percentile stays below ArrayLen.
func checkOutlierSkew(e *checkEnv) []Finding {
	var out []Finding
	for _, c := range e.collections() {
		if c.Schema == nil {
			continue
		}
		for _, f := range c.Schema.Fields {
			a := f.Array
			if a == nil || a.P95 >= float64(e.t.ArrayLen) || a.Max < float64(e.t.ArrayLen) ||
				a.Max < e.t.OutlierRatio*math.Max(a.P95, 1) {
				continue
			}
			threshold := int(math.Max(math.Ceil(a.P95)*2, 10))
			out = append(out, Finding{Severity: Warning, Namespace: c.NS(), Subject: f.Path,
				Message: fmt.Sprintf("array %s holds at most %.0f elements in 95%% of documents but %.0f in the largest: embed up to a threshold and overflow the outliers", f.Path, a.P95, a.Max),
				Evidence: Evidence{Method: sampleMethod(c, "$size of each array, $percentile (approximate) and $max"), Figures: []Figure{
					count("documents with the array", a.Count), fig("median length", a.P50, ""), fig("p95 length", a.P95, ""),
					fig("max length", a.Max, ""), fig("max over p95", round2(a.Max/math.Max(a.P95, 1)), "")}},
				Fix: Fix{Summary: fmt.Sprintf("Embed at most %d elements (twice the 95th percentile) and move the rest of an outlier's list to an overflow collection of buckets.", threshold),
					Code: fmt.Sprintf("s, err := outlier.New[Parent, Elem](db.Collection(%q), db.Collection(%q), outlier.Config{\n\tThreshold: %d, List: %q, Count: \"count\", Flag: \"hasOverflow\"})",
						c.Name, c.Name+"Overflow", threshold, f.Path)}})
		}
	}
	return out
}
