package advisor

import (
	"fmt"

	"go.mongodb.org/mongo-driver/v2/bson"
)

func init() {
	register(Check{ID: "tree-without-index", Pattern: "tree",
		Doc: "$graphLookup whose connectToField has no index in the from collection: every level of the traversal scans the whole collection.",
		Run: checkTreeWithoutIndex})
}

// leadingIndex reports whether some index of c starts with field.
func leadingIndex(c *Collection, field string) bool {
	for _, ix := range c.Indexes {
		if len(ix.Keys) > 0 && ix.Keys[0].Field == field && !ix.Hidden && ix.Partial == "" {
			return true
		}
	}
	return field == "_id"
}

// checkTreeWithoutIndex reports $graphLookup stages on unindexed
// connectToFields.
func checkTreeWithoutIndex(e *checkEnv) []Finding {
	var out []Finding
	for _, sh := range e.snap.Shapes {
		if sh.Op != "aggregate" {
			continue
		}
		for _, st := range sh.Pipeline {
			if len(st) != 1 || st[0].Key != "$graphLookup" {
				continue
			}
			spec, _ := st[0].Value.(bson.D)
			from, _ := lookup(spec, "from").(string)
			to, _ := lookup(spec, "connectToField").(string)
			src := e.collection(sh.DB + "." + from)
			if src == nil || to == "" || leadingIndex(src, to) {
				continue
			}
			figs := append(shapeFigures(sh), count("documents in "+from, src.Count))
			out = append(out, Finding{Severity: Warning, Namespace: sh.DB + "." + from, Subject: to,
				Message:  fmt.Sprintf("$graphLookup follows %s.%s, which no index leads with: each level of the tree is a collection scan", from, to),
				Evidence: Evidence{Method: shapeMethod(e, "listIndexes of "+from), Figures: figs},
				Fix: Fix{Summary: fmt.Sprintf("Index %s: each level becomes an index lookup.", to),
					Commands: []string{createIndex(from, []Key{{Field: to, Dir: 1}})}}})
		}
	}
	return out
}
