package advisor

import (
	"fmt"
	"slices"
)

func init() {
	register(Check{ID: "blocking-sort", Pattern: "index",
		Doc: "Hot find and aggregate shapes (Thresholds.HotShape, 20 executions) or any that spilled, sorted in memory because no index provides the order: the exact index to create, in ESR order (equality, sort, range).",
		Run: checkBlockingSort})
}

// indexFields returns the field names of an index.
func indexFields(ix *Index) []string {
	out := make([]string, len(ix.Keys))
	for i, k := range ix.Keys {
		out[i] = k.Field
	}
	return out
}

// misorderedIndex returns the index the shape's plan used when it holds
// every equality and sort field of the query but not in ESR order, or
// nil.
func misorderedIndex(c *Collection, sh *Shape, ff filterFields) *Index {
	if sh.Explain == nil {
		return nil
	}
	want := esrKeys(ff, sh.Sort)
	for _, name := range sh.Explain.Indexes {
		ix := c.Index(name)
		if ix == nil {
			continue
		}
		have := indexFields(ix)
		all := true
		for _, k := range want {
			if !slices.Contains(have, k.Field) {
				all = false
			}
		}
		if all && !sameKeys(ix.Keys[:min(len(ix.Keys), len(want))], want) {
			return ix
		}
	}
	return nil
}

// sortShape reports whether sh is a find, or an aggregation opening with
// [$match,] $sort, whose sort the server did in memory: hasSortStage in
// the workload, or a SORT stage in the winning plan of its query.
func sortShape(sh *Shape) bool {
	return (sh.Op == "find" || sh.Op == "aggregate") && len(sh.Sort) > 0 &&
		(sh.SortStages > 0 || (sh.Explain != nil && sh.Explain.Sort))
}

// checkBlockingSort reports blocking sorts that no existing index
// half-serves (those are esr-violation's).
func checkBlockingSort(e *checkEnv) []Finding {
	var out []Finding
	for _, sh := range e.snap.Shapes {
		if !sortShape(sh) || (sh.Count < e.t.HotShape && sh.UsedDisk == 0 && sh.MemoryErrors == 0) {
			continue
		}
		c := e.collection(sh.NS)
		ff := splitFilter(sh.Filter)
		if c == nil || !ff.OK || misorderedIndex(c, sh, ff) != nil {
			continue
		}
		keys := esrKeys(ff, sh.Sort)
		figs := append(shapeFigures(sh), count("executions with a blocking SORT", sh.SortStages), count("executions that spilled to disk", sh.UsedDisk))
		out = append(out, Finding{Severity: Warning, Namespace: sh.NS, Subject: sh.Text,
			Message:  fmt.Sprintf("sorted in memory on every execution (%d of %d): create %s", sh.SortStages, sh.Count, keysString(keys)),
			Evidence: Evidence{Method: shapeMethod(e, "hasSortStage per operation and a queryPlanner explain"), Figures: figs},
			Fix: Fix{Summary: fmt.Sprintf("Create the index in ESR order — equality %v, sort %s, range %v — so the index returns documents in order and the SORT stage (100 MB limit) disappears.", ff.Eq, sortText(sh), ff.Range),
				Commands: []string{createIndex(sh.Collection, keys)}}})
	}
	return out
}

// sortText prints a shape's sort.
func sortText(sh *Shape) string { return shapeText(sh.Sort) }
