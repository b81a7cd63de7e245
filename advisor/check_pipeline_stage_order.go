package advisor

import (
	"fmt"
	"strings"

	"go.mongodb.org/mongo-driver/v2/bson"
)

func init() {
	register(Check{ID: "pipeline-stage-order", Pattern: "index",
		Doc: "Aggregations with a $match or $sort on the collection's own fields placed after a $lookup or $unwind: it runs on the multiplied documents and cannot use an index; move it to the front.",
		Run: checkPipelineStageOrder})
}

// stageFields returns the top-level field paths a $match or $sort names.
func stageFields(v any) []string {
	d, ok := v.(bson.D)
	if !ok {
		return nil
	}
	var out []string
	for _, e := range d {
		if e.Key == "$and" || e.Key == "$or" || e.Key == "$nor" {
			arr, _ := e.Value.(bson.A)
			for _, c := range arr {
				out = append(out, stageFields(c)...)
			}
			continue
		}
		if strings.HasPrefix(e.Key, "$") {
			return append(out, "$") // $expr and friends: fields unknown
		}
		out = append(out, e.Key)
	}
	return out
}

// under reports whether path is p or inside it.
func under(path, p string) bool { return path == p || strings.HasPrefix(path, p+".") }

// checkPipelineStageOrder reports a $match or $sort after a $lookup or
// $unwind that does not read what those stages produced.
func checkPipelineStageOrder(e *checkEnv) []Finding {
	var out []Finding
	for _, sh := range e.snap.Shapes {
		if sh.Op != "aggregate" {
			continue
		}
		var produced []string
		multiplier := ""
	stages:
		for i, st := range sh.Pipeline {
			if len(st) != 1 {
				break
			}
			switch st[0].Key {
			case "$lookup", "$graphLookup":
				spec, _ := st[0].Value.(bson.D)
				as, _ := lookup(spec, "as").(string)
				produced = append(produced, as)
				multiplier = st[0].Key
			case "$unwind":
				path, _ := st[0].Value.(string)
				if spec, ok := st[0].Value.(bson.D); ok {
					path, _ = lookup(spec, "path").(string)
				}
				produced = append(produced, strings.TrimPrefix(path, "$"))
				multiplier = "$unwind"
			case "$match", "$sort":
				if multiplier == "" {
					continue
				}
				fields := stageFields(st[0].Value)
				for _, f := range fields {
					if f == "$" {
						continue stages
					}
					for _, p := range produced {
						if under(f, p) {
							continue stages
						}
					}
				}
				if len(fields) == 0 {
					continue
				}
				sev := Info
				if sh.Count >= e.t.HotShape {
					sev = Warning
				}
				out = append(out, Finding{Severity: sev, Namespace: sh.NS, Subject: sh.Text,
					Message:  fmt.Sprintf("stage %d (%s on %s) comes after %s although it reads only %s's own fields: it filters or sorts the multiplied documents without an index", i+1, st[0].Key, strings.Join(fields, ", "), multiplier, sh.Collection),
					Evidence: Evidence{Method: shapeMethod(e, "pipeline stages compared with the fields $lookup/$unwind produce"), Figures: append(shapeFigures(sh), count("stage position", int64(i+1)))},
					Fix: Fix{Summary: fmt.Sprintf("Move the %s to the start of the pipeline, where it runs once per %s document and can use an index.", st[0].Key, sh.Collection),
						Commands: []string{fmt.Sprintf("%s.aggregate([%s, /* then the $lookup/$unwind stages */ ...])", collRef(sh.Collection), shapeText(normalize(st, 0)))}}})
				break stages
			case "$group", "$project", "$replaceRoot", "$replaceWith", "$addFields", "$set", "$unset", "$facet", "$bucket", "$bucketAuto":
				break stages
			}
		}
	}
	return out
}
