package advisor

import "fmt"

func init() {
	register(Check{ID: "disk-use-sorts", Pattern: "index",
		Doc: "Sorts and groups that spilled to disk (usedDisk) or failed with QueryExceededMemoryLimitNoDiskUseAllowed (292): past 100 MB per stage; an index for the sort, or allowDiskUse where a slow report is fine.",
		Run: checkDiskUseSorts})
}

// checkDiskUseSorts reports shapes that spilled or failed for memory.
func checkDiskUseSorts(e *checkEnv) []Finding {
	var out []Finding
	for _, sh := range e.snap.Shapes {
		if sh.UsedDisk == 0 && sh.MemoryErrors == 0 {
			continue
		}
		sev := Warning
		msg := fmt.Sprintf("spilled to disk in %d of %d executions", sh.UsedDisk, sh.Count)
		if sh.MemoryErrors > 0 {
			sev = Error
			msg = fmt.Sprintf("failed with QueryExceededMemoryLimitNoDiskUseAllowed (292) in %d of %d executions", sh.MemoryErrors, sh.Count)
		}
		fix := Fix{}
		if sh.Op == "find" && len(sh.Sort) > 0 {
			ff := splitFilter(sh.Filter)
			keys := esrKeys(ff, sh.Sort)
			fix = Fix{Summary: "Give the sort an index in ESR order: the index provides the order, no memory limit applies and allowDiskUse has no effect.",
				Commands: []string{createIndex(sh.Collection, keys)}}
		} else if sh.Count >= e.t.HotShape {
			fix = Fix{Summary: "A hot aggregation past 100 MB per stage: $match and $project early so less reaches the $sort/$group, or precompute the result (computed pattern).",
				Commands: []string{fmt.Sprintf("%s.aggregate([{$match: …}, {$project: {only: 1, needed: 1}}, …])", collRef(sh.Collection))}}
		} else {
			fix = Fix{Summary: "A rare report: allowDiskUse is fine here (the default since 6.0); set it explicitly where allowDiskUseByDefault is off.",
				Commands: []string{fmt.Sprintf("%s.aggregate(pipeline, {allowDiskUse: true})", collRef(sh.Collection))}}
		}
		figs := append(shapeFigures(sh), count("executions that spilled", sh.UsedDisk), count("executions that failed with 292", sh.MemoryErrors))
		out = append(out, Finding{Severity: sev, Namespace: sh.NS, Subject: sh.Text, Message: msg,
			Evidence: Evidence{Method: shapeMethod(e, "usedDisk and errCode per operation"), Figures: figs}, Fix: fix})
	}
	return out
}
