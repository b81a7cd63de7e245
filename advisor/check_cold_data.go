package advisor

import (
	"fmt"
	"strings"
)

func init() {
	register(Check{ID: "cold-data-in-hot-index", Pattern: "archive",
		Doc: "Collections of Thresholds.ColdDocs (10000) or more documents where at least ColdShare (half) are dated older than ColdDays (365): their entries fill every index and the cache; archive them.",
		Run: checkColdData})
}

// checkColdData reports top-level date fields mostly older than the
// snapshot's cutoff, on indexed collections.
func checkColdData(e *checkEnv) []Finding {
	var out []Finding
	for _, c := range e.collections() {
		s := c.Schema
		if s == nil || c.Count < e.t.ColdDocs || len(c.Indexes) < 2 || s.Sampled == 0 {
			continue
		}
		for _, f := range s.Fields {
			if strings.Contains(f.Path, ".") || f.Types["date"] == 0 {
				continue
			}
			sh := share(f.Old, s.Sampled)
			if sh < e.t.ColdShare {
				continue
			}
			cutoff := e.snap.Cutoff.UTC().Format("2006-01-02T15:04:05Z")
			out = append(out, Finding{Severity: Warning, Namespace: c.NS(), Subject: f.Path,
				Message: fmt.Sprintf("%.0f%% of documents have %s before %s (%d days ago) and still fill %d indexes", 100*sh, f.Path, cutoff[:10], e.t.ColdDays, len(c.Indexes)),
				Evidence: Evidence{Method: sampleMethod(c, fmt.Sprintf("dates before %s counted per field", cutoff)), Figures: []Figure{
					count("documents", c.Count), count("sampled documents", s.Sampled), count("sampled documents older than the cutoff", f.Old),
					fig("cold share", round2(sh), "share"), count("indexes", int64(len(c.Indexes))),
					fig("total index size", float64(c.TotalIndexSize), "bytes")}},
				Fix: Fix{Summary: "Archive the cold documents to another collection or database with one $merge and delete them here, slice by slice, with the cutoff computed once.",
					Commands: []string{
						fmt.Sprintf("const cutoff = ISODate(%q)", cutoff),
						fmt.Sprintf("%s.aggregate([{$match: {%s: {$lt: cutoff}}}, {$merge: {into: {db: \"archive\", coll: %q}, on: \"_id\", whenMatched: \"replace\", whenNotMatched: \"insert\"}}])", collRef(c.Name), quoteField(f.Path), c.Name),
						fmt.Sprintf("%s.deleteMany({%s: {$lt: cutoff}})", collRef(c.Name), quoteField(f.Path)),
						createIndex(c.Name, []Key{{Field: f.Path, Dir: 1}}) + "  // drives the $match and the deleteMany"}}})
		}
	}
	return out
}
