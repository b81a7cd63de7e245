package advisor

import (
	"fmt"
	"strings"
)

func init() {
	register(Check{ID: "sparse-attributes", Pattern: "attribute",
		Doc: "Collections with Thresholds.SparseFields (10) or more top-level fields each present in under SparseShare (10%) of documents: one index per field does not scale; the attribute pattern needs one.",
		Run: checkSparseAttributes})
}

// checkSparseAttributes counts top-level fields present in fewer than
// SparseShare of the sampled documents.
func checkSparseAttributes(e *checkEnv) []Finding {
	var out []Finding
	for _, c := range e.collections() {
		s := c.Schema
		if s == nil || s.Sampled == 0 {
			continue
		}
		var sparse []string
		top := 0
		for _, f := range s.Fields {
			if strings.Contains(f.Path, ".") || f.Path == "_id" {
				continue
			}
			top++
			if share(f.Docs, s.Sampled) < e.t.SparseShare {
				sparse = append(sparse, f.Path)
			}
		}
		if len(sparse) < e.t.SparseFields {
			continue
		}
		shown := sparse
		if len(shown) > 8 {
			shown = shown[:8]
		}
		out = append(out, Finding{Severity: Warning, Namespace: c.NS(), Subject: strings.Join(shown, ", "),
			Message: fmt.Sprintf("%d of %d top-level fields are each present in under %.0f%% of documents: store them as {k, v} attributes under one index", len(sparse), top, 100*e.t.SparseShare),
			Evidence: Evidence{Method: sampleMethod(c, "presence of each field ($objectToArray, $group)"), Figures: []Figure{
				count("sampled documents", s.Sampled), count("top-level fields", int64(top)), count("sparse fields", int64(len(sparse)))}},
			Fix: Fix{Summary: "Move the sparse fields into an array of {k, v} documents indexed once, and query it with $elemMatch.",
				Commands: []string{
					fmt.Sprintf("%s.createIndex({\"attrs.k\": 1, \"attrs.v\": 1})", collRef(c.Name)),
					fmt.Sprintf("%s.find({attrs: {$elemMatch: {k: %q, v: <value>}}})", collRef(c.Name), sparse[0])},
				Code: fmt.Sprintf("attrs, err := attribute.New[Doc](db.Collection(%q), attribute.Config{Field: \"attrs\", NumericStrings: attribute.Normalize})", c.Name)}})
	}
	return out
}
