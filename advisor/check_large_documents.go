package advisor

import "fmt"

func init() {
	register(Check{ID: "large-documents", Pattern: "subset",
		Doc: "Documents past Thresholds.DocWarnBytes (2 MB) or DocErrorBytes (8 MiB): the working set outgrows RAM, every read loads the whole document, and 16 MiB is a hard limit.",
		Run: checkLargeDocuments})
}

// checkLargeDocuments reports collections whose largest sampled document
// passes DocWarnBytes.
func checkLargeDocuments(e *checkEnv) []Finding {
	var out []Finding
	for _, c := range e.collections() {
		s := c.Schema
		if s == nil || s.SizeMax < float64(e.t.DocWarnBytes) {
			continue
		}
		sev := Warning
		if s.SizeMax >= float64(e.t.DocErrorBytes) {
			sev = Error
		}
		out = append(out, Finding{Severity: sev, Namespace: c.NS(),
			Message: fmt.Sprintf("documents reach %.0f bytes (%s; warning at %d bytes, hard limit 16 MiB = 16777216): move cold or growing parts out", s.SizeMax, humanBytes(s.SizeMax), e.t.DocWarnBytes),
			Evidence: Evidence{Method: sampleMethod(c, "$bsonSize of each document, $percentile (approximate) and $max"), Figures: []Figure{
				fig("median document size", s.SizeP50, "bytes"), fig("p99 document size", s.SizeP99, "bytes"),
				fig("max document size", s.SizeMax, "bytes"), fig("collStats avgObjSize", float64(c.AvgObjSize), "bytes")}},
			Fix: Fix{Summary: "Keep what the hot read needs in the document and move large or growing parts (long arrays, blobs, history) to their own collection: subset for lists, a referenced collection for cold fields.",
				Commands: []string{fmt.Sprintf("%s.aggregate([{$project: {s: {$bsonSize: \"$$ROOT\"}}}, {$sort: {s: -1}}, {$limit: 10}])  // the largest documents", collRef(c.Name))}}})
	}
	return out
}
