package command

import (
	"context"
	"time"

	"go.mongodb.org/mongo-driver/v2/bson"

	"github.com/formworkdb/formwork/engine/internal/agg"
	"github.com/formworkdb/formwork/engine/internal/mongoerr"
)

// statsStage answers a source stage that reads server state. stage is the
// whole stage document.
func (r *Request) statsStage(ctx context.Context, ns string, stage bson.Raw) (agg.Source, error) {
	first, err := stage.IndexErr(0)
	if err != nil {
		return nil, mongoerr.New(mongoerr.Code(40323), "A pipeline stage specification object must contain exactly one field.")
	}
	switch first.Key() {
	case "$collStats", "$indexStats":
		return r.statsSource(ns, []bson.Raw{stage})
	case "$planCacheStats":
		return r.planCacheStats(ns, first.Value())
	case "$currentOp":
		return r.currentOp(ns, first.Value())
	case "$listLocalSessions":
		return r.listLocalSessions(first.Value())
	}
	return nil, unsupportedStage(stage)
}

// planCacheStats returns one document per cached plan of ns: queryHash,
// planCacheKey, isActive, works and the cached plan's identity.
//
// Divergence: mongod also reports createdFromQuery, the full cachedPlan
// tree and per-candidate scores; the engine keeps only the winner's
// identity per query shape.
// https://www.mongodb.com/docs/v7.0/reference/operator/aggregation/planCacheStats/
func (r *Request) planCacheStats(ns string, spec bson.RawValue) (agg.Source, error) {
	if _, ok := spec.DocumentOK(); !ok {
		return nil, mongoerr.Newf(mongoerr.FailedToParse, "$planCacheStats value must be an object. Found: %s", typeName(spec.Type))
	}
	c := r.Env.Store.Collection(ns)
	if c == nil {
		return agg.NewSliceSource(nil), nil
	}
	var docs []bson.Raw
	for _, e := range r.Env.ext().planner.CacheEntries(ns, c) {
		d, err := bson.Marshal(bson.D{
			{Key: "queryHash", Value: e.QueryHash},
			{Key: "planCacheKey", Value: e.PlanCacheKey},
			{Key: "isActive", Value: true},
			{Key: "works", Value: e.Works},
			{Key: "cachedPlan", Value: bson.D{{Key: "stage", Value: e.Plan}}},
			{Key: "host", Value: r.Env.Config.Host},
		})
		if err != nil {
			return nil, err
		}
		docs = append(docs, d)
	}
	return agg.NewSliceSource(docs), nil
}

// currentOp returns the operations in progress on every connection (the
// asking aggregate among them), and idle connections and cursors when the
// options ask. $currentOp must run on admin with {aggregate: 1}.
// Authentication is off, so allUsers and localOps change nothing.
// https://www.mongodb.com/docs/v7.0/reference/operator/aggregation/currentOp/
func (r *Request) currentOp(ns string, spec bson.RawValue) (agg.Source, error) {
	d, ok := spec.DocumentOK()
	if !ok {
		return nil, mongoerr.Newf(mongoerr.FailedToParse, "$currentOp options must be specified in an object, but found: %s", typeName(spec.Type))
	}
	if r.DB != "admin" {
		return nil, mongoerr.New(mongoerr.InvalidNamespace, "$currentOp must be run against the 'admin' database with {aggregate: 1}")
	}
	var opts currentOpOptions
	elems, _ := d.Elements()
	for _, e := range elems {
		k := e.Key()
		switch k {
		case "allUsers", "idleConnections", "idleCursors", "idleSessions", "localOps", "truncateOps", "backtrace":
		default:
			return nil, mongoerr.Newf(mongoerr.FailedToParse, "Unrecognized option '%s' in $currentOp stage.", k)
		}
		b, ok := e.Value().BooleanOK()
		if !ok {
			return nil, mongoerr.Newf(mongoerr.FailedToParse, "The '%s' parameter of the $currentOp stage must be a boolean value, but found: %s", k, typeName(e.Value().Type))
		}
		switch k {
		case "idleConnections":
			opts.idleConnections = b
		case "idleCursors":
			opts.idleCursors = b
		}
	}
	return agg.NewSliceSource(r.Env.currentOps(opts)), nil
}

// listLocalSessions returns the sessions in the server's logical session
// cache: those that commands have used in the last 30 minutes and that
// endSessions has not ended. Authentication is off, so every session
// belongs to the unauthenticated user; a users list names other users and
// matches none.
// https://www.mongodb.com/docs/v7.0/reference/operator/aggregation/listLocalSessions/
func (r *Request) listLocalSessions(spec bson.RawValue) (agg.Source, error) {
	d, ok := spec.DocumentOK()
	if !ok {
		return nil, mongoerr.Newf(mongoerr.TypeMismatch, "$listLocalSessions options must be an object, found %s", typeName(spec.Type))
	}
	others := false
	elems, _ := d.Elements()
	for _, e := range elems {
		switch e.Key() {
		case "allUsers":
			if _, ok := e.Value().BooleanOK(); !ok {
				return nil, mongoerr.FieldType("$listLocalSessions", "allUsers", typeName(e.Value().Type), "bool")
			}
		case "users":
			arr, ok := e.Value().ArrayOK()
			if !ok {
				return nil, mongoerr.FieldType("$listLocalSessions", "users", typeName(e.Value().Type), "array")
			}
			vals, _ := arr.Values()
			for _, u := range vals {
				ud, ok := u.DocumentOK()
				if !ok {
					return nil, mongoerr.FieldType("$listLocalSessions", "users", typeName(u.Type), "object")
				}
				for _, f := range []string{"user", "db"} {
					v, err := ud.LookupErr(f)
					if err != nil {
						return nil, mongoerr.Newf(mongoerr.Code(40414), "BSON field 'ListSessionsUser.%s' is missing but a required field", f)
					}
					if _, ok := v.StringValueOK(); !ok {
						return nil, mongoerr.FieldType("ListSessionsUser", f, typeName(v.Type), "string")
					}
				}
			}
			others = len(vals) > 0
		default:
			return nil, mongoerr.Newf(mongoerr.UnknownBSONField, "BSON field '$listLocalSessions.%s' is an unknown field.", e.Key())
		}
	}
	if others {
		return agg.NewSliceSource(nil), nil
	}
	return agg.NewSliceSource(r.Env.sessions.list(time.Now())), nil
}

// aggLimits returns the memory limits of the blocking stages from the
// server parameters.
func (e *Env) aggLimits() agg.Limits {
	return agg.Limits{
		Sort:            e.params.Int("internalQueryMaxBlockingSortMemoryUsageBytes"),
		Group:           e.params.Int("internalDocumentSourceGroupMaxMemoryBytes"),
		BucketAuto:      e.params.Int("internalDocumentSourceBucketAutoMaxMemoryBytes"),
		SetWindowFields: e.params.Int("internalDocumentSourceSetWindowFieldsMaxMemoryBytes"),
		GraphLookup:     e.params.Int("internalDocumentSourceGraphLookupMaxMemoryBytes"),
		DensifyDocs:     e.params.Int("internalQueryMaxAllowedDensifyDocs"),
	}
}
