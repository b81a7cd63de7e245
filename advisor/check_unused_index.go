package advisor

import (
	"fmt"
	"time"
)

func init() {
	register(Check{ID: "unused-index", Pattern: "index",
		Doc: "Indexes with no access in $indexStats while the collection has a workload (or for a day or more): every write maintains them for nothing.",
		Run: checkUnusedIndex})
}

// checkUnusedIndex reports secondary indexes with accesses.ops 0, other
// than unique, TTL, hidden and partial ones (they have other jobs or
// their own checks), where the absence of use means something: the
// workload has shapes on the collection, or the counter has run a day.
func checkUnusedIndex(e *checkEnv) []Finding {
	var out []Finding
	for _, c := range e.collections() {
		if !c.IndexStats {
			continue
		}
		shapes := e.shapesOn(c.NS())
		var execs int64
		for _, sh := range shapes {
			if sh.Op != "insert" {
				execs += sh.Count
			}
		}
		for _, ix := range c.Indexes {
			if ix.Name == "_id_" || ix.Ops > 0 || ix.Unique || ix.TTL || ix.Hidden || ix.Partial != "" {
				continue
			}
			longRun := !ix.Since.IsZero() && e.snap.Taken.Sub(ix.Since) >= 24*time.Hour
			if execs == 0 && !longRun {
				continue
			}
			since := "never"
			if !ix.Since.IsZero() {
				since = ix.Since.Format(time.RFC3339)
			}
			out = append(out, Finding{Severity: Warning, Namespace: c.NS(), Subject: ix.Name,
				Message: fmt.Sprintf("index %s %s has not been used since %s, across %d reads and writes of the workload", ix.Name, ix.KeyString(), since, execs),
				Evidence: Evidence{Method: "$indexStats accesses.ops and accesses.since; $collStats indexSizes; " + shapeMethod(e, ""), Figures: []Figure{
					count("accesses.ops", ix.Ops), count("workload operations on the collection", execs),
					fig("index size", float64(ix.Size), "bytes"), fig("hours counted", round2(e.snap.Taken.Sub(ix.Since).Hours()), "")}},
				Fix: Fix{Summary: "Hide the index, watch for regressions over a full business cycle, then drop it.",
					Commands: []string{
						fmt.Sprintf("%s.hideIndex(%q)", collRef(c.Name), ix.Name),
						fmt.Sprintf("%s.dropIndex(%q)  // once nothing slowed down", collRef(c.Name), ix.Name)}}})
		}
	}
	return out
}
