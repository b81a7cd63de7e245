package command

import (
	"go.mongodb.org/mongo-driver/v2/bson"

	"github.com/formworkdb/formwork/engine/internal/match"
	"github.com/formworkdb/formwork/engine/internal/mongoerr"
)

// isIndexStats reports whether a pipeline stage is {$indexStats: {}}.
func isIndexStats(st bson.Raw) bool {
	e, err := st.IndexErr(0)
	return err == nil && e.Key() == "$indexStats"
}

// indexStatsSource serves the $indexStats source stage of ns and the
// $match stages that may follow it: one document per index with
// accesses.ops, the number of executed plans (not planning trials) that
// read the index since the counter started (index creation or server
// start). A missing collection yields nothing; other following stages
// answer NotImplemented.
// https://www.mongodb.com/docs/manual/reference/operator/aggregation/indexStats/
func (r *Request) indexStatsSource(ns string, stages []bson.Raw) (source, error) {
	if d, ok := stages[0].Index(0).Value().DocumentOK(); !ok || len(d) > 5 {
		return nil, mongoerr.New(mongoerr.Code(28803), "The $indexStats stage specification must be an empty object")
	}
	var filters []*match.Filter
	for _, st := range stages[1:] {
		e := st.Index(0)
		if e.Key() != "$match" {
			return nil, unsupportedStage(st)
		}
		d, ok := e.Value().DocumentOK()
		if !ok {
			return nil, mongoerr.New(mongoerr.Code(15959), "the match filter must be an expression in an object")
		}
		f, err := match.Compile(d)
		if err != nil {
			return nil, err
		}
		filters = append(filters, f)
	}
	c := r.Env.Store.Collection(ns)
	if c == nil {
		return &sliceSource{}, nil
	}
	var out []bson.Raw
next:
	for _, d := range r.Env.indexStatsDocs(c) {
		for _, f := range filters {
			if !f.Match(d) {
				continue next
			}
		}
		out = append(out, d)
	}
	return &sliceSource{docs: out}, nil
}
