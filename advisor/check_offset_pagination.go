package advisor

import "fmt"

func init() {
	register(Check{ID: "offset-pagination", Pattern: "index",
		Doc: "Shapes that page with skip past Thresholds.Skip (1000): the server reads and drops every skipped document, so each page costs more than the last; page by key instead.",
		Run: checkOffsetPagination})
}

// checkOffsetPagination reports shapes with a large skip; a warning when
// the shape is hot.
func checkOffsetPagination(e *checkEnv) []Finding {
	var out []Finding
	for _, sh := range e.snap.Shapes {
		if sh.MaxSkip < e.t.Skip {
			continue
		}
		sev := Info
		if sh.Count >= e.t.HotShape {
			sev = Warning
		}
		sortSpec := "{_id: 1}"
		if len(sh.Sort) > 0 {
			sortSpec = sortText(sh)
		}
		figs := append(shapeFigures(sh), count("largest skip", sh.MaxSkip))
		out = append(out, Finding{Severity: sev, Namespace: sh.NS, Subject: sh.Text,
			Message:  fmt.Sprintf("pages by offset with skips up to %d: every page reads and drops the pages before it", sh.MaxSkip),
			Evidence: Evidence{Method: shapeMethod(e, "skip of each operation"), Figures: figs},
			Fix: Fix{Summary: "Page by key: sort on a unique key (add _id as tiebreaker), remember the last key of the page, and ask for the next page after it.",
				Commands: []string{fmt.Sprintf("%s.find({...filter, $or: [{k: {$gt: last.k}}, {k: last.k, _id: {$gt: last._id}}]}).sort(%s).limit(pageSize)  // k = the sort key", collRef(sh.Collection), sortSpec)}}})
	}
	return out
}
