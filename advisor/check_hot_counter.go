package advisor

import (
	"fmt"
	"strings"

	"go.mongodb.org/mongo-driver/v2/bson"
)

func init() {
	register(Check{ID: "hot-counter", Pattern: "approx",
		Doc: "Update shapes that only $inc a counter of one document by _id, Thresholds.HotCounter (1000) times or more: every event is a write to one hot document; an approximate counter writes one in N.",
		Run: checkHotCounter})
}

// incOnly returns the field an update increments when it is exactly one
// $inc, and whether it is.
func incOnly(u any) (string, bool) {
	ud, ok := u.(bson.D)
	if !ok || len(ud) != 1 || ud[0].Key != "$inc" {
		return "", false
	}
	fields, ok := ud[0].Value.(bson.D)
	if !ok || len(fields) == 0 {
		return "", false
	}
	return fields[0].Key, true
}

// checkHotCounter reports frequent $inc-only updates on _id.
func checkHotCounter(e *checkEnv) []Finding {
	var out []Finding
	for _, sh := range e.snap.Shapes {
		if sh.Op != "update" || sh.Count < e.t.HotCounter || len(sh.Filter) != 1 || sh.Filter[0].Key != "_id" {
			continue
		}
		field, ok := incOnly(sh.Update)
		if !ok || strings.Contains(field, ".") {
			continue
		}
		out = append(out, Finding{Severity: Info, Namespace: sh.NS, Subject: sh.Text,
			Message:  fmt.Sprintf("counter %s is incremented %d times one write at a time: if an approximate count will do, write one in 100", field, sh.Count),
			Evidence: Evidence{Method: shapeMethod(e, ""), Figures: shapeFigures(sh)},
			Fix: Fix{Summary: "For counts that need not be exact (views, impressions — never money, stock or quotas), add N once every N events: 100 times fewer writes.",
				Code: fmt.Sprintf("views, err := approx.New(db.Collection(%q), approx.Config{Field: %q, N: 100, Mode: approx.Deterministic})", sh.Collection, field)}})
	}
	return out
}
