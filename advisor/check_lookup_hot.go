package advisor

import (
	"fmt"

	"go.mongodb.org/mongo-driver/v2/bson"
)

func init() {
	register(Check{ID: "lookup-hot", Pattern: "extref",
		Doc: "Aggregations run Thresholds.HotShape (20) times or more that $lookup another collection: a join on the hot path, where copying the few fields read (extended reference) makes it one read.",
		Run: checkLookupHot})
}

// lookupStages returns the $lookup specs of a pipeline.
func lookupStages(p []bson.D) []bson.D {
	var out []bson.D
	for _, st := range p {
		if len(st) == 1 && st[0].Key == "$lookup" {
			if spec, ok := st[0].Value.(bson.D); ok {
				out = append(out, spec)
			}
		}
	}
	return out
}

// checkLookupHot reports hot aggregate shapes with a $lookup, with the
// fan-out a copy would cost: referencing documents per source document.
func checkLookupHot(e *checkEnv) []Finding {
	var out []Finding
	for _, sh := range e.snap.Shapes {
		if sh.Op != "aggregate" || sh.Count < e.t.HotShape {
			continue
		}
		for _, spec := range lookupStages(sh.Pipeline) {
			from, _ := lookup(spec, "from").(string)
			as, _ := lookup(spec, "as").(string)
			local, _ := lookup(spec, "localField").(string)
			if from == "" {
				continue
			}
			figs := shapeFigures(sh)
			var fanout float64
			refs, src := e.collection(sh.NS), e.collection(sh.DB+"."+from)
			if refs != nil && src != nil && src.Count > 0 {
				fanout = round2(float64(refs.Count) / float64(src.Count))
				figs = append(figs, count("documents in "+sh.Collection, refs.Count), count("documents in "+from, src.Count),
					fig("fan-out: copies to update per change of a "+from+" document", fanout, ""))
			}
			field := orText(as, from)
			out = append(out, Finding{Severity: Warning, Namespace: sh.NS, Subject: sh.Text,
				Message:  fmt.Sprintf("a hot aggregation joins %s with $lookup %d times: copy the fields it reads into %s (about %.0f copies per %s document to keep in step)", from, sh.Count, sh.Collection, fanout, from),
				Evidence: Evidence{Method: shapeMethod(e, "document counts from $collStats"), Figures: figs},
				Fix: Fix{Summary: fmt.Sprintf("Embed {_id, fields read} of the %s document in %s as %q (extended reference), index %s._id for the fan-out, and drop the $lookup from the hot read.", from, sh.Collection, field, field),
					Commands: []string{createIndex(sh.Collection, []Key{{Field: field + "._id", Dir: 1}})},
					Code:     fmt.Sprintf("refs, err := extref.New[Source, Ref, Copy](db.Collection(%q), db.Collection(%q), extref.Config{\n\tField: %q, Fields: []string{\"name\"} /* the stable fields the page reads */})\n// %s joined on %q", from, sh.Collection, field, from, local)}})
		}
	}
	return out
}
