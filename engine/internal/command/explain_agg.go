package command

import (
	"context"
	"time"

	"go.mongodb.org/mongo-driver/v2/bson"

	"github.com/formworkdb/formwork/engine/internal/agg"
	"github.com/formworkdb/formwork/engine/internal/mongoerr"
	"github.com/formworkdb/formwork/engine/internal/plan"
	"github.com/formworkdb/formwork/engine/internal/storage"
)

// explainRec records the plan of an explained aggregate's pushed-down
// query, which the host plans afresh (no plan cache) on its first Open of
// the aggregated collection.
type explainRec struct {
	ns   string
	x    *plan.Executor
	snap *storage.Snapshot
	n    int64
	took time.Duration
}

// close releases the recorded plan and its snapshot.
func (e *explainRec) close() {
	if e.x != nil {
		e.x.Close()
	}
	if e.snap != nil {
		e.snap.Close()
	}
}

// explainAggregate answers {aggregate: …, explain: true}: the explain of
// the pipeline at queryPlanner verbosity, as the command's reply.
func explainAggregate(ctx context.Context, r *Request, p *aggregateParams, verb plan.Verbosity) (bson.D, error) {
	sections, err := aggregateSections(ctx, r, p, verb)
	if err != nil {
		return nil, err
	}
	return explainReply(r, sections, r.Body), nil
}

// aggregateSections explains a pipeline in mongod 7.0's shape. A pipeline
// that is all query ($match, $sort, $skip, $limit on a collection) has
// find's shape (queryPlanner, executionStats); any other has "stages":
// first {$cursor: {queryPlanner, executionStats}} for the pushed-down
// query, then each remaining stage with, from executionStats verbosity
// on, its nReturned, executionTimeMillisEstimate and, for blocking
// stages, usedDisk. Under executionStats the pipeline runs to the end.
//
// Divergence: a pipeline ending in $out or $merge is only planned, at any
// verbosity, so that explain never writes.
// https://www.mongodb.com/docs/v7.0/reference/explain-results/
func aggregateSections(ctx context.Context, r *Request, p *aggregateParams, verb plan.Verbosity) (bson.D, error) {
	if isChangeStream(p.stages) {
		return changeStreamSections(ctx, r, p, verb)
	}
	run := verb >= plan.ExecutionStats
	p, err := resolveViews(r, p)
	if err != nil {
		return nil, err
	}
	pl, err := p.pipeline(r, run)
	if err != nil {
		return nil, err
	}
	if _, writes := pl.Writes(); writes {
		run = false
	}
	ns := p.ns()
	q := p.query(pl)
	isView := r.Env.view(ns) != nil
	if pl.NeedsInput() && !isView && len(pl.Explain()) == 0 {
		qq, err := hostQuery(r, ns, q)
		if err != nil {
			return nil, err
		}
		qp, es, err := explainQuery(ctx, r, qq, verb)
		if err != nil {
			return nil, err
		}
		return querySections(qp, es, verb), nil
	}
	rec := &explainRec{ns: ns}
	defer rec.close()
	host := &aggHost{r: r, rec: rec}
	start := time.Now()
	if run {
		src, err := host.runQuery(ctx, pl, ns, q)
		if err != nil {
			return nil, err
		}
		for {
			d, err := src.Next(ctx)
			if err != nil {
				src.Close()
				return nil, err
			}
			if d == nil {
				break
			}
		}
		src.Close()
	} else if pl.NeedsInput() {
		src, err := host.Open(ctx, ns, q)
		if err != nil {
			return nil, err
		}
		src.Close()
	}
	stages := bson.A{}
	if rec.x != nil {
		cursor := bson.D{{Key: "queryPlanner", Value: rec.x.QueryPlannerDoc(nil)}}
		if run {
			cursor = append(cursor, bson.E{Key: "executionStats", Value: rec.x.ExecutionStatsDoc(nil, rec.n, rec.took, verb)})
		}
		st := bson.D{{Key: "$cursor", Value: cursor}}
		if run {
			st = append(st, bson.E{Key: "nReturned", Value: rec.n}, bson.E{Key: "executionTimeMillisEstimate", Value: time.Since(start).Milliseconds()})
		}
		stages = append(stages, st)
	}
	for _, s := range pl.Explain() {
		stages = append(stages, s)
	}
	return bson.D{{Key: "explainVersion", Value: "1"}, {Key: "stages", Value: stages}}, nil
}

// hostQuery compiles an agg.Query on ns.
func hostQuery(r *Request, ns string, q agg.Query) (*query, error) {
	qq := &query{coll: r.collection(ns), skip: q.Skip, limit: q.Limit, hint: q.Hint, allowDiskUse: q.AllowDiskUse}
	env := r.matchEnv(q.Let)
	env.Collation = q.Collation
	if err := qq.setFilter(q.Filter, env); err != nil {
		return nil, err
	}
	if err := qq.setSort(q.Sort); err != nil {
		return nil, err
	}
	if err := qq.resolveHint(); err != nil {
		return nil, err
	}
	return qq, nil
}

// openExplained plans qq for explain, records the plan in rec and returns
// a source over its rows that counts them; the plan outlives the source.
func (h *aggHost) openExplained(ctx context.Context, qq *query) (agg.Source, error) {
	rec := h.rec
	snap := h.r.snapshot(qq)
	x, err := qq.plan(ctx, snap, h.r.Env.explainEnv())
	if err != nil {
		snap.Close()
		return nil, err
	}
	rec.x, rec.snap = x, snap
	return &explainSource{rec: rec}, nil
}

// explainSource reads an explained plan, counting its results and time.
type explainSource struct {
	rec *explainRec
}

func (s *explainSource) Next(ctx context.Context) (bson.Raw, error) {
	start := time.Now()
	_, doc, ok, err := s.rec.x.Next(ctx)
	s.rec.took += time.Since(start)
	if err != nil || !ok {
		return nil, err
	}
	s.rec.n++
	return doc, nil
}

// Close leaves the plan open for rendering; explainRec.close releases it.
func (s *explainSource) Close() {}

// resolveViews returns p aimed at the collection under its view (and the
// views under that), with each view's pipeline in front, as mongod
// explains a read of a view.
func resolveViews(r *Request, p *aggregateParams) (*aggregateParams, error) {
	for range maxViewDepth {
		if p.coll == "" {
			return p, nil
		}
		v := r.Env.view(p.ns())
		if v == nil {
			return p, nil
		}
		q := *p
		q.db, q.coll = splitNS(v.viewOn)
		q.stages = append(append([]bson.Raw(nil), v.pipeline...), p.stages...)
		q.hint = r.Env.viewHint(v, p.hint)
		p = &q
	}
	return nil, mongoerr.New(mongoerr.ViewDepthLimitExceeded, "View depth too deep or view cycle detected. Maximum depth is 20")
}
