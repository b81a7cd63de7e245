package advisor

import (
	"fmt"
	"slices"
	"strings"
)

func init() {
	register(Check{ID: "partial-index-unused", Pattern: "polymorphic",
		Doc: "Partial indexes never used while the workload queries their key without repeating the partial filter: the planner uses a partial index only when the query implies its filter.",
		Run: checkPartialIndexUnused})
}

// checkPartialIndexUnused reports partial indexes with no access and the
// shapes that filter on their first key but not on every field of their
// partialFilterExpression.
func checkPartialIndexUnused(e *checkEnv) []Finding {
	var out []Finding
	for _, c := range e.collections() {
		if !c.IndexStats {
			continue
		}
		for _, ix := range c.Indexes {
			if ix.Partial == "" || ix.Ops > 0 || len(ix.Keys) == 0 {
				continue
			}
			var missing []*Shape
			var execs int64
			for _, sh := range e.shapesOn(c.NS()) {
				if sh.Filter == nil {
					continue
				}
				ff := splitFilter(sh.Filter)
				fields := append(append([]string{}, ff.Eq...), ff.Range...)
				if !slices.Contains(fields, ix.Keys[0].Field) {
					continue
				}
				for _, pf := range ix.PartialFields {
					if !strings.HasPrefix(pf, "$") && !slices.Contains(fields, pf) {
						missing = append(missing, sh)
						execs += sh.Count
						break
					}
				}
			}
			if len(missing) == 0 {
				continue
			}
			out = append(out, Finding{Severity: Warning, Namespace: c.NS(), Subject: ix.Name,
				Message: fmt.Sprintf("partial index %s %s (filter %s) is never used: %d query shapes on %s leave out %s", ix.Name, ix.KeyString(), ix.Partial, len(missing), ix.Keys[0].Field, strings.Join(ix.PartialFields, ", ")),
				Evidence: Evidence{Method: "$indexStats accesses.ops; listIndexes partialFilterExpression; " + shapeMethod(e, "filters compared with the partial filter's fields"), Figures: []Figure{
					count("accesses.ops", ix.Ops), count("shapes without the partial filter", int64(len(missing))),
					count("their executions", execs), fig("index size", float64(ix.Size), "bytes")}},
				Fix: Fix{Summary: fmt.Sprintf("Repeat the partial filter %s in these queries (e.g. %s), or drop the index.", ix.Partial, missing[0].Text),
					Commands: []string{fmt.Sprintf("%s.find({...%s, %s: <value>})  // the filter implies the partial filter: the index applies", collRef(c.Name), ix.Partial, quoteField(ix.Keys[0].Field))}}})
		}
	}
	return out
}
