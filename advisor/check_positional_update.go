package advisor

import (
	"fmt"
	"strings"

	"go.mongodb.org/mongo-driver/v2/bson"
)

func init() {
	register(Check{ID: "positional-update-large-array", Pattern: "bucket",
		Doc: "Updates through a positional path (items.$.qty, items.$[].qty, items.$[e].qty) into arrays whose median length is Thresholds.PositionalArrayLen (100) or more: each one searches and rewrites a large array.",
		Run: checkPositionalUpdate})
}

// positionalArrays returns the array paths an update document changes
// through a positional operator.
func positionalArrays(u any) []string {
	ud, ok := u.(bson.D)
	if !ok {
		return nil
	}
	var out []string
	for _, op := range ud {
		fields, ok := op.Value.(bson.D)
		if !ok || !strings.HasPrefix(op.Key, "$") {
			continue
		}
		for _, f := range fields {
			if i := strings.Index(f.Key, ".$"); i > 0 {
				out = appendNew(out, f.Key[:i])
			}
		}
	}
	return out
}

// checkPositionalUpdate reports positional updates of long arrays.
func checkPositionalUpdate(e *checkEnv) []Finding {
	var out []Finding
	for _, sh := range e.snap.Shapes {
		if sh.Op != "update" && sh.Op != "findAndModify" {
			continue
		}
		c := e.collection(sh.NS)
		if c == nil || c.Schema == nil {
			continue
		}
		for _, path := range positionalArrays(sh.Update) {
			f := c.Schema.Field(path)
			if f == nil || f.Array == nil || f.Array.P50 < float64(e.t.PositionalArrayLen) {
				continue
			}
			figs := append(shapeFigures(sh), fig("median length of "+path, f.Array.P50, ""), fig("max length of "+path, f.Array.Max, ""),
				fig("median document size", c.Schema.SizeP50, "bytes"))
			out = append(out, Finding{Severity: Warning, Namespace: sh.NS, Subject: sh.Text,
				Message:  fmt.Sprintf("positional updates into %s, a median of %.0f elements: each one finds the element by scanning the array and rewrites the document", path, f.Array.P50),
				Evidence: Evidence{Method: shapeMethod(e, "array lengths from the $sample schema"), Figures: figs},
				Fix: Fix{Summary: "Keep the elements in buckets of a bounded size (bucket pattern) or in their own collection, so an update touches a small document.",
					Code: fmt.Sprintf("store, err := bucket.New[Elem](db.Collection(%q), bucket.Config{Size: 50, Owner: \"owner\", Elements: %q, ElementID: \"id\"})", c.Name+"Buckets", path)}})
		}
	}
	return out
}
