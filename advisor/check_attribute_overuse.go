package advisor

import (
	"fmt"
	"strings"
)

func init() {
	register(Check{ID: "attribute-overuse", Pattern: "attribute",
		Doc: "Keys of a {k, v} attribute array present in at least Thresholds.CommonKeyShare (90%) of documents: a field every document has belongs at top level, with its own index and type.",
		Run: checkAttributeOveruse})
}

// checkAttributeOveruse reports k/v keys present in most documents.
func checkAttributeOveruse(e *checkEnv) []Finding {
	var out []Finding
	for _, c := range e.collections() {
		s := c.Schema
		if s == nil || s.Sampled < 10 {
			continue
		}
		for _, k := range s.KV {
			sh := share(k.Docs, s.Sampled)
			if sh < e.t.CommonKeyShare {
				continue
			}
			out = append(out, Finding{Severity: Info, Namespace: c.NS(), Subject: k.Path + "." + k.Key,
				Message: fmt.Sprintf("attribute %q of %s is in %.0f%% of documents: make it a top-level field", k.Key, k.Path, 100*sh),
				Evidence: Evidence{Method: sampleMethod(c, "documents per k of each {k, v} array ($unwind, $group)"), Figures: []Figure{
					count("sampled documents", s.Sampled), count("documents with the key", k.Docs), fig("share", round2(sh), "share")}},
				Fix: Fix{Summary: fmt.Sprintf("Promote %q to a top-level field and remove it from %s.", k.Key, k.Path),
					Commands: []string{fmt.Sprintf("%s.updateMany({%q: %q}, [{$set: {%s: {$getField: {field: \"v\", input: {$first: {$filter: {input: \"$%s\", cond: {$eq: [\"$$this.k\", %q]}}}}}}}}, {$set: {%s: {$filter: {input: \"$%s\", cond: {$ne: [\"$$this.k\", %q]}}}}}])",
						collRef(c.Name), k.Path+".k", k.Key, quoteField(strings.ReplaceAll(k.Key, ".", "_")), k.Path, k.Key, quoteField(k.Path), k.Path, k.Key)}}})
		}
	}
	return out
}
