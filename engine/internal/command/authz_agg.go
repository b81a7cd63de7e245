package command

import (
	"go.mongodb.org/mongo-driver/v2/bson"

	"github.com/formworkdb/formwork/engine/internal/auth"
)

// maxPipelineAuthDepth bounds how deep aggregateNeeds follows nested
// pipelines ($lookup, $unionWith, $facet).
const maxPipelineAuthDepth = 20

// initialSources are stages that produce documents instead of reading the
// aggregated collection, so a pipeline starting with one needs no find on
// it.
var initialSources = map[string]bool{
	"$documents": true, "$currentOp": true, "$listLocalSessions": true, "$listSessions": true,
	"$collStats": true, "$indexStats": true, "$changeStream": true, "$planCacheStats": true,
	"$listCatalog": true, "$listSearchIndexes": true,
}

// aggregateNeeds requires find on the aggregated collection and what each
// stage reads or writes elsewhere, as mongod's getPrivilegesForAggregate.
func aggregateNeeds(r *Request) [][]auth.Need {
	arr, _ := r.Body.Lookup("pipeline").ArrayOK()
	needs := pipelineNeeds(r.DB, targetNS(r), bson.Raw(arr), 0)
	if boolField(r.Body, "bypassDocumentValidation") {
		needs = append(needs, need(targetNS(r), auth.ActBypassDocumentValidation))
	}
	return one(needs...)
}

// pipelineNeeds lists the needs of pipeline run over res in database db.
func pipelineNeeds(db string, res auth.Resource, pipeline bson.Raw, depth int) []auth.Need {
	if depth > maxPipelineAuthDepth {
		return []auth.Need{unlistedNeed}
	}
	stages, _ := bson.RawArray(pipeline).Values()
	var out []auth.Need
	if res.Collection != "" && (len(stages) == 0 || !initialSources[stageName(stages[0])]) {
		out = append(out, need(res, auth.ActFind))
	}
	for _, sv := range stages {
		st, ok := sv.DocumentOK()
		if !ok {
			continue
		}
		first, err := st.IndexErr(0)
		if err != nil {
			continue
		}
		v := first.Value()
		switch first.Key() {
		case "$out":
			out = append(out, need(stageTarget(db, v, "db", "coll"), auth.ActInsert, auth.ActRemove))
		case "$merge":
			into := v
			if d, ok := v.DocumentOK(); ok {
				into = d.Lookup("into")
			}
			out = append(out, need(stageTarget(db, into, "db", "coll"), auth.ActInsert, auth.ActUpdate))
		case "$lookup", "$graphLookup":
			d, _ := v.DocumentOK()
			from := stageTarget(db, d.Lookup("from"), "db", "coll")
			sub, _ := d.Lookup("pipeline").ArrayOK()
			if from.Collection != "" {
				out = append(out, pipelineNeeds(db, from, bson.Raw(sub), depth+1)...)
			} else {
				out = append(out, pipelineNeeds(db, auth.Resource{DB: db}, bson.Raw(sub), depth+1)...)
			}
		case "$unionWith":
			coll := v
			var sub bson.RawArray
			if d, ok := v.DocumentOK(); ok {
				coll = d.Lookup("coll")
				sub, _ = d.Lookup("pipeline").ArrayOK()
			}
			out = append(out, pipelineNeeds(db, stageTarget(db, coll, "db", "coll"), bson.Raw(sub), depth+1)...)
		case "$facet":
			d, _ := v.DocumentOK()
			elems, _ := d.Elements()
			for _, e := range elems {
				sub, _ := e.Value().ArrayOK()
				out = append(out, pipelineNeeds(db, auth.Resource{DB: db}, bson.Raw(sub), depth+1)...)
			}
		case "$currentOp":
			out = append(out, need(auth.ClusterResource, auth.ActInprog))
		case "$listSessions":
			out = append(out, need(auth.ClusterResource, auth.ActListSessions))
		case "$collStats":
			out = append(out, need(res, auth.ActCollStats))
		case "$indexStats":
			out = append(out, need(res, auth.ActIndexStats))
		case "$changeStream":
			out = append(out, need(res, auth.ActChangeStream, auth.ActFind))
		case "$planCacheStats":
			out = append(out, need(res, auth.ActPlanCacheRead))
		}
	}
	return out
}

func stageName(v bson.RawValue) string {
	d, ok := v.DocumentOK()
	if !ok {
		return ""
	}
	e, err := d.IndexErr(0)
	if err != nil {
		return ""
	}
	return e.Key()
}

// stageTarget is the namespace a stage names as "coll" or {db, coll}.
func stageTarget(db string, v bson.RawValue, dbKey, collKey string) auth.Resource {
	if s, ok := v.StringValueOK(); ok {
		return auth.NSResource(db, s)
	}
	if d, ok := v.DocumentOK(); ok {
		if s, ok := d.Lookup(dbKey).StringValueOK(); ok {
			db = s
		}
		c, _ := d.Lookup(collKey).StringValueOK()
		return auth.NSResource(db, c)
	}
	return auth.Resource{DB: db, Collection: "\x00"} // no such collection: only anyResource covers it
}
