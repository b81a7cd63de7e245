package advisor

import (
	"fmt"
	"strings"

	"go.mongodb.org/mongo-driver/v2/bson"
)

func init() {
	register(Check{ID: "repeated-group", Pattern: "computed",
		Doc: "Aggregations that $group children into totals ($sum, $avg, $count) run Thresholds.HotShape (20) times or more: the same totals recomputed on every read; keep them on the parent (computed pattern).",
		Run: checkRepeatedGroup})
}

// groupSpec returns the first $group of a pipeline.
func groupSpec(p []bson.D) bson.D {
	for _, st := range p {
		if len(st) == 1 && st[0].Key == "$group" {
			spec, _ := st[0].Value.(bson.D)
			return spec
		}
	}
	return nil
}

// checkRepeatedGroup reports hot aggregate shapes with a $group of
// $sum/$avg/$count accumulators.
func checkRepeatedGroup(e *checkEnv) []Finding {
	var out []Finding
	for _, sh := range e.snap.Shapes {
		if sh.Op != "aggregate" || sh.Count < e.t.HotShape {
			continue
		}
		g := groupSpec(sh.Pipeline)
		if g == nil {
			continue
		}
		parent, value := "", ""
		numeric := false
		for _, el := range g {
			if el.Key == "_id" {
				if s, ok := el.Value.(string); ok {
					parent = strings.TrimPrefix(s, "$")
				}
				continue
			}
			acc, ok := el.Value.(bson.D)
			if !ok || len(acc) != 1 {
				continue
			}
			switch acc[0].Key {
			case "$sum", "$avg", "$count":
				numeric = true
				if s, ok := acc[0].Value.(string); ok && value == "" {
					value = strings.TrimPrefix(s, "$")
				}
			}
		}
		if !numeric {
			continue
		}
		out = append(out, Finding{Severity: Warning, Namespace: sh.NS, Subject: sh.Text,
			Message:  fmt.Sprintf("the same $group totals are recomputed %d times, examining %.0f documents each: keep them on the parent", sh.Count, float64(sh.DocsExamined)/float64(sh.Count)),
			Evidence: Evidence{Method: shapeMethod(e, ""), Figures: shapeFigures(sh)},
			Fix: Fix{Summary: "Keep sum and count on the parent document, updated with $inc on every child write (or recomputed on a schedule with $group + $merge), and read them with the parent.",
				Code: fmt.Sprintf("totals, err := computed.New[Parent, Child](db.Collection(\"<parents>\"), db.Collection(%q), computed.Config{\n\tParent: %q, Value: %q, Target: \"totals\", Stats: computed.Sum | computed.Count})",
					sh.Collection, orText(parent, "parentId"), orText(value, "value"))}})
	}
	return out
}
