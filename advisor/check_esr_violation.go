package advisor

import "fmt"

func init() {
	register(Check{ID: "esr-violation", Pattern: "index",
		Doc: "Hot find and aggregate shapes served by an index that holds the query's fields out of ESR order (a range or sort field before an equality field, a range before the sort): the plan sorts in memory or scans twice the keys it returns; the ESR order fixes both.",
		Run: checkESRViolation})
}

// checkESRViolation reports hot shapes whose index is misordered and
// costs a SORT or twice the keys needed.
func checkESRViolation(e *checkEnv) []Finding {
	var out []Finding
	for _, sh := range e.snap.Shapes {
		if (sh.Op != "find" && sh.Op != "aggregate") || sh.Count < e.t.HotShape {
			continue
		}
		c := e.collection(sh.NS)
		ff := splitFilter(sh.Filter)
		if c == nil || !ff.OK {
			continue
		}
		ix := misorderedIndex(c, sh, ff)
		if ix == nil {
			continue
		}
		sorted := sortShape(sh)
		extraKeys := sh.KeysExamined > 2*sh.NReturned
		if !sorted && !extraKeys {
			continue
		}
		keys := esrKeys(ff, sh.Sort)
		figs := append(shapeFigures(sh), count("executions with a blocking SORT", sh.SortStages),
			fig("keys examined per document returned", round2(float64(sh.KeysExamined)/float64(max(sh.NReturned, 1))), ""))
		out = append(out, Finding{Severity: Warning, Namespace: sh.NS, Subject: ix.Name,
			Message:  fmt.Sprintf("index %s %s puts a range field before the sort or equality fields: the query wants %s", ix.Name, ix.KeyString(), keysString(keys)),
			Evidence: Evidence{Method: shapeMethod(e, "queryPlanner explain of the shape, hasSortStage and keysExamined per operation"), Figures: figs},
			Fix: Fix{Summary: fmt.Sprintf("Create the index in ESR order (equality %v, sort %s, range %v), then hide and drop %s if nothing else uses it.", ff.Eq, sortText(sh), ff.Range, ix.Name),
				Commands: []string{createIndex(sh.Collection, keys),
					fmt.Sprintf("%s.hideIndex(%q)", collRef(sh.Collection), ix.Name)}}})
	}
	return out
}
