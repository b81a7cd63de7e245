package advisor

import "fmt"

func init() {
	register(Check{ID: "unbounded-array", Pattern: "subset",
		Doc: "Arrays whose typical length (95th percentile) is past Thresholds.ArrayLen (200), other than fixed-size vectors (every sampled array the same length): they grow toward 16 MiB, every push rewrites the document and multikey indexes bloat.",
		Run: checkUnboundedArray})
}

// checkUnboundedArray reports array paths whose 95th percentile length
// is at least ArrayLen.
func checkUnboundedArray(e *checkEnv) []Finding {
	var out []Finding
	for _, c := range e.collections() {
		if c.Schema == nil {
			continue
		}
		for _, f := range c.Schema.Fields {
			a := f.Array
			if a == nil || a.P95 < float64(e.t.ArrayLen) {
				continue
			}
			if a.Count >= 10 && a.P50 == a.Max {
				continue // every array the same length: a fixed-size vector (an embedding), not a growing list
			}
			sev := Warning
			if a.P95 >= 5*float64(e.t.ArrayLen) {
				sev = Error
			}
			out = append(out, Finding{Severity: sev, Namespace: c.NS(), Subject: f.Path,
				Message: fmt.Sprintf("array %s typically holds %.0f elements or more (threshold %d): keep a bounded window in the document and the rest in their own collection", f.Path, a.P95, e.t.ArrayLen),
				Evidence: Evidence{Method: sampleMethod(c, "$size of each array, $percentile (approximate)"), Figures: []Figure{
					count("documents with the array", a.Count), fig("median length", a.P50, ""), fig("p95 length", a.P95, ""),
					fig("max length", a.Max, ""), fig("p99 document size", c.Schema.SizeP99, "bytes")}},
				Fix: Fix{Summary: "Move the elements into their own collection and embed only the newest few (subset), or page them into buckets of a fixed size (bucket).",
					Code: fmt.Sprintf("// children in their own collection, the newest 20 embedded in %s.%s\nw, err := subset.New[Parent, Child](db.Collection(%q), db.Collection(%q), subset.Config{\n\tParent: \"parentId\", Time: \"at\", Array: %q, Size: 20})",
						c.Name, f.Path, c.Name, c.Name+"_"+goIdent(f.Path), f.Path)}})
		}
	}
	return out
}
