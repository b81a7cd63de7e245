package advisor

import (
	"fmt"
	"strings"
)

func init() {
	register(Check{ID: "index-limit", Pattern: "index",
		Doc: "Collections with Thresholds.Indexes (50) or more indexes: the limit is 64 (the _id index counts) and each index taxes every write.",
		Run: checkIndexLimit})
}

// checkIndexLimit reports collections with at least Indexes indexes.
func checkIndexLimit(e *checkEnv) []Finding {
	var out []Finding
	for _, c := range e.collections() {
		n := len(c.Indexes)
		if n < e.t.Indexes {
			continue
		}
		sev := Warning
		if n >= 60 {
			sev = Error
		}
		var unused []string
		for _, ix := range c.Indexes {
			if c.IndexStats && ix.Ops == 0 && ix.Name != "_id_" {
				unused = append(unused, ix.Name)
			}
		}
		var cmds []string
		listed := unused
		if len(listed) > 10 {
			listed = append(listed[:10:10], fmt.Sprintf("and %d more", len(unused)-10))
		}
		for _, name := range unused[:min(len(unused), 10)] {
			cmds = append(cmds, fmt.Sprintf("%s.hideIndex(%q)  // no access since the counters started", collRef(c.Name), name))
		}
		out = append(out, Finding{Severity: sev, Namespace: c.NS(),
			Message: fmt.Sprintf("%d indexes of at most 64: the 65th createIndex fails with CannotCreateIndex (67)", n),
			Evidence: Evidence{Method: "listIndexes, $indexStats accesses.ops and $collStats indexSizes", Figures: []Figure{
				count("indexes", int64(n)), count("limit", 64), count("indexes with no access", int64(len(unused))),
				fig("total index size", float64(c.TotalIndexSize), "bytes")}},
			Fix: Fix{Summary: "Drop unused and prefix-redundant indexes; replace per-attribute indexes with one attribute index {\"attrs.k\": 1, \"attrs.v\": 1} or a wildcard index. Unused: " + orText(strings.Join(listed, ", "), "none") + ".",
				Commands: cmds}})
	}
	return out
}
