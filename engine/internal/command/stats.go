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

// currentOp returns the operations in progress. $currentOp must run on
// admin with {aggregate: 1}.
//
// Divergence: the engine does not track other connections' operations;
// it reports the aggregate that asks.
// https://www.mongodb.com/docs/v7.0/reference/operator/aggregation/currentOp/
func (r *Request) currentOp(ns string, spec bson.RawValue) (agg.Source, error) {
	if _, ok := spec.DocumentOK(); !ok {
		return nil, mongoerr.Newf(mongoerr.FailedToParse, "$currentOp options must be specified in an object, but found: %s", typeName(spec.Type))
	}
	if r.DB != "admin" {
		return nil, mongoerr.New(mongoerr.InvalidNamespace, "$currentOp must be run against the 'admin' database with {aggregate: 1}")
	}
	op := bson.D{
		{Key: "type", Value: "op"},
		{Key: "host", Value: r.Env.Config.Host},
		{Key: "active", Value: true},
		{Key: "currentOpTime", Value: time.Now().Format("2006-01-02T15:04:05.000-07:00")},
		{Key: "opid", Value: int32(r.Conn.ID)},
		{Key: "secs_running", Value: int64(time.Since(r.start).Seconds())},
		{Key: "microsecs_running", Value: time.Since(r.start).Microseconds()},
		{Key: "op", Value: "command"},
		{Key: "ns", Value: ns},
		{Key: "command", Value: r.Body},
	}
	if r.Conn != nil {
		op = append(op, bson.E{Key: "client", Value: r.Conn.Remote}, bson.E{Key: "connectionId", Value: int32(r.Conn.ID)})
	}
	d, err := bson.Marshal(op)
	if err != nil {
		return nil, err
	}
	return agg.NewSliceSource([]bson.Raw{d}), nil
}

// listLocalSessions returns the sessions in the server's cache.
//
// Divergence: the engine keeps no session cache beyond open cursors and
// retryable writes, so the list is empty.
// https://www.mongodb.com/docs/v7.0/reference/operator/aggregation/listLocalSessions/
func (r *Request) listLocalSessions(spec bson.RawValue) (agg.Source, error) {
	if _, ok := spec.DocumentOK(); !ok {
		return nil, mongoerr.Newf(mongoerr.TypeMismatch, "$listLocalSessions options must be an object, found %s", typeName(spec.Type))
	}
	return agg.NewSliceSource(nil), nil
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
	}
}
