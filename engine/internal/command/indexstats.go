package command

import (
	"os"
	"time"

	"go.mongodb.org/mongo-driver/v2/bson"

	"github.com/formworkdb/formwork/engine/internal/match"
	"github.com/formworkdb/formwork/engine/internal/mongoerr"
	"github.com/formworkdb/formwork/engine/internal/storage"
)

// isStatsStage reports whether a pipeline stage is one of the metadata
// sources $indexStats and $collStats.
func isStatsStage(st bson.Raw) bool {
	e, err := st.IndexErr(0)
	return err == nil && (e.Key() == "$indexStats" || e.Key() == "$collStats")
}

// statsSource serves a $indexStats or $collStats source stage of ns and
// the $match stages that may follow it. $indexStats gives one document per
// index with accesses.ops, the number of executed plans (not planning
// trials) that read the index since the counter started (index creation or
// server start). A missing collection yields nothing; other following
// stages answer NotImplemented.
// https://www.mongodb.com/docs/manual/reference/operator/aggregation/indexStats/
// https://www.mongodb.com/docs/manual/reference/operator/aggregation/collStats/
func (r *Request) statsSource(ns string, stages []bson.Raw) (source, error) {
	first := stages[0].Index(0)
	spec, ok := first.Value().DocumentOK()
	if first.Key() == "$indexStats" && (!ok || len(spec) > 5) {
		return nil, mongoerr.New(mongoerr.Code(28803), "The $indexStats stage specification must be an empty object")
	}
	if first.Key() == "$collStats" && !ok {
		return nil, mongoerr.Newf(mongoerr.FailedToParse, "$collStats must take a nested object but found: %s", formatValue(first.Value()))
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
	if ts := tsOf(c); ts != nil {
		// A time series' figures are its buckets'.
		c = r.Env.Store.Collection(ts.bucketsNS)
	}
	var docs []bson.Raw
	switch {
	case first.Key() == "$collStats":
		d, err := r.collStatsDoc(ns, c, spec)
		if err != nil {
			return nil, err
		}
		docs = []bson.Raw{d}
	case c != nil:
		docs = r.Env.indexStatsDocs(c)
	}
	var out []bson.Raw
next:
	for _, d := range docs {
		for _, f := range filters {
			if !f.Match(d) {
				continue next
			}
		}
		out = append(out, d)
	}
	return &sliceSource{docs: out}, nil
}

// collStatsDoc builds the one document $collStats returns: ns, host and
// localTime, plus storageStats and count when asked for. latencyStats and
// queryExecStats answer NotImplemented: the engine does not keep them.
func (r *Request) collStatsDoc(ns string, c *storage.Collection, spec bson.Raw) (bson.Raw, error) {
	host, _ := os.Hostname()
	out := bson.D{{Key: "ns", Value: ns}, {Key: "host", Value: host}, {Key: "localTime", Value: bson.NewDateTimeFromTime(time.Now())}}
	elems, _ := spec.Elements()
	for _, e := range elems {
		switch e.Key() {
		case "storageStats", "count":
			if c == nil {
				return nil, mongoerr.Newf(mongoerr.NamespaceNotFound, "Unable to retrieve %s in $collStats stage :: caused by :: Collection [%s] not found.", e.Key(), ns)
			}
			opts, ok := e.Value().DocumentOK()
			if !ok {
				return nil, mongoerr.Newf(mongoerr.TypeMismatch, "BSON field '$collStats.%s' is the wrong type '%s', expected type 'object'", e.Key(), typeName(e.Value().Type))
			}
			if e.Key() == "count" {
				snap := r.Env.Store.Snapshot()
				st, err := storage.CollStats(snap, c)
				snap.Close()
				if err != nil {
					return nil, err
				}
				out = append(out, bson.E{Key: "count", Value: st.Count})
				continue
			}
			scale := int64(1)
			if v, err := opts.LookupErr("scale"); err == nil {
				n, ok := asInt(v)
				if !ok || n < 1 {
					return nil, mongoerr.New(mongoerr.BadValue, "scale has to be >= 1")
				}
				scale = n
			}
			st, err := r.Env.storageStats(c, scale)
			if ts := r.Env.tsColl(ns); ts != nil {
				st, err = r.Env.timeseriesStats(ts, scale)
			}
			if err != nil {
				return nil, err
			}
			out = append(out, bson.E{Key: "storageStats", Value: st[1:]}) // without ns
		case "latencyStats", "queryExecStats":
			return nil, mongoerr.Newf(mongoerr.NotImplemented, "$collStats %s is not supported: the engine does not record them", e.Key())
		default:
			return nil, mongoerr.Newf(mongoerr.UnknownBSONField, "BSON field '$collStats.%s' is an unknown field.", e.Key())
		}
	}
	b, err := bson.Marshal(out)
	return b, err
}
