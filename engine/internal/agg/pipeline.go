package agg

import (
	"context"
	"strings"
	"sync"
	"time"

	"go.mongodb.org/mongo-driver/v2/bson"

	"github.com/formworkdb/formwork/engine/internal/expr"
	"github.com/formworkdb/formwork/engine/internal/mongoerr"
)

// Pipeline is a parsed and optimised aggregation pipeline. It is
// immutable after Parse except for the explain counters of its latest run
// (guarded by a mutex), so Run may be called concurrently.
type Pipeline struct {
	plan
	opts    Options
	vars    []bson.RawValue // the command let's values by slot
	names   []letVar
	writeNS string

	mu   sync.Mutex
	last *runStats
}

// plan is a (sub-)pipeline after optimisation: the leading part the host
// runs as a Query, and the stages that run here.
type plan struct {
	query  Query
	stages []stage
	source bool // the first stage makes its own documents
}

// Parse parses and optimises a pipeline. Each element of stages is one
// stage document. Errors are *mongoerr.Error with mongod's codes: 40323
// for a stage that is not a one-field document, 40324 for an unknown
// stage, 40601/40602 for position rules, and each stage's own codes.
func Parse(stages []bson.Raw, opts Options) (*Pipeline, error) {
	if opts.Now.IsZero() {
		opts.Now = time.Now()
	}
	p := &Pipeline{opts: opts}
	sc := expr.NewScope()
	sc.SetCollation(opts.Collation)
	pc := &parseCtx{opts: &p.opts, scope: sc, where: inTop}
	vars, names, err := evalLet(opts.Let, pc, &p.opts)
	if err != nil {
		return nil, err
	}
	p.vars, p.names = vars, names
	pc.vars = names
	ss, err := parseStages(pc, stages)
	if err != nil {
		return nil, err
	}
	ss = optimize(ss)
	p.plan = split(ss, true)
	p.query.Collation = opts.Collation
	if len(p.query.Filter) > 0 && hasExpr(p.query.Filter, 0) && (&runCtx{vars: p.vars, names: p.names}).letMissing() {
		// A missing let value cannot travel in Query.Let: the $match runs
		// here.
		p.plan = split(ss, false)
	}
	if n := len(p.stages); n > 0 {
		if w, ok := p.stages[n-1].(writer); ok {
			p.writeNS = w.target()
		}
	}
	return p, nil
}

// evalLet evaluates the command's let once (it may use $$NOW) and defines
// its variables in pc's scope.
func evalLet(let bson.Raw, pc *parseCtx, opts *Options) ([]bson.RawValue, []letVar, error) {
	if len(let) == 0 {
		return nil, nil, nil
	}
	elems, err := let.Elements()
	if err != nil {
		return nil, nil, mongoerr.New(mongoerr.InvalidBSON, err.Error())
	}
	type def struct {
		name string
		e    expr.Expr
	}
	defs := make([]def, 0, len(elems))
	for _, el := range elems {
		if err := expr.ValidateVarName(el.Key()); err != nil {
			return nil, nil, err
		}
		e, err := pc.parseExpr(el.Value(), nil)
		if err != nil {
			return nil, nil, err
		}
		defs = append(defs, def{el.Key(), e})
	}
	c := &expr.Ctx{Vars: make([]bson.RawValue, pc.scope.Slots()), Now: opts.Now, ClusterTime: opts.ClusterTime, Collation: opts.Collation}
	var names []letVar
	for _, d := range defs {
		v, err := d.e.Eval(c)
		if err != nil {
			return nil, nil, err
		}
		slot := pc.scope.Define(d.name)
		c.Set(slot, v)
		names = append(names, letVar{name: d.name, slot: slot})
	}
	return c.Vars, names, nil
}

// parseStages parses the stages of one (sub-)pipeline and checks their
// positions and the context rules.
func parseStages(pc *parseCtx, raws []bson.Raw) ([]stage, error) {
	if len(raws) > MaxStages {
		return nil, mongoerr.Newf(mongoerr.Code(7749501), "Pipeline length must be no longer than %d stages.", MaxStages)
	}
	out := make([]stage, 0, len(raws))
	for i, raw := range raws {
		elems, err := raw.Elements()
		if err != nil {
			return nil, mongoerr.New(mongoerr.InvalidBSON, err.Error())
		}
		if len(elems) != 1 {
			return nil, mongoerr.New(mongoerr.Code(40323), "A pipeline stage specification object must contain exactly one field.")
		}
		name := elems[0].Key()
		def, ok := stageDefs[name]
		if !ok {
			return nil, mongoerr.Newf(mongoerr.Code(40324), "Unrecognized pipeline stage name: '%s'", name)
		}
		if pc.where == inUpdate {
			return nil, errUpdateStage(name)
		}
		st, err := def.parse(pc, elems[0].Value())
		if err != nil {
			return nil, err
		}
		if err := checkPosition(pc, def.flags, name, i, len(raws)); err != nil {
			return nil, err
		}
		if ex, ok := st.(expander); ok {
			// A stage mongod desugars ($setWindowFields, $densify, $fill)
			// runs as the stages it stands for.
			out = append(out, ex.expand()...)
			continue
		}
		out = append(out, st)
	}
	return out, nil
}

// checkPosition applies a stage's position and context rules.
func checkPosition(pc *parseCtx, f stageFlags, name string, i, n int) error {
	switch {
	case pc.where == inFacet && (f&flagNoFacet != 0 || f&flagFirst != 0):
		return mongoerr.Newf(mongoerr.Code(40600), "%s is not allowed to be used within a $facet stage", name)
	case pc.where == inLookup && f&flagNoLookup != 0:
		return mongoerr.Newf(mongoerr.Code(51047), "%s is not allowed within a $lookup's sub-pipeline", name)
	case pc.where == inUnionWith && f&flagNoLookup != 0:
		return mongoerr.Newf(mongoerr.Code(31441), "%s is not allowed within a $unionWith's sub-pipeline", name)
	case f&flagFirst != 0 && i != 0:
		return mongoerr.Newf(mongoerr.Code(40602), "%s is only valid as the first stage in a pipeline", name)
	case f&flagLast != 0 && i != n-1:
		return mongoerr.Newf(mongoerr.Code(40601), "%s can only be the final stage in the pipeline", name)
	}
	return nil
}

// split takes the leading stages the query layer can run off ss. With
// collection false (a $facet's buffered input) nothing is taken.
func split(ss []stage, collection bool) plan {
	pl := plan{stages: ss}
	if len(ss) > 0 {
		if def, ok := stageDefs[ss[0].name()]; ok && def.flags&flagSource != 0 {
			pl.source = true
			return pl
		}
	}
	if !collection {
		return pl
	}
	q, rest := pushdown(ss)
	pl.query, pl.stages = q, rest
	return pl
}

// run chains the plan's stages over in (nil for a source pipeline).
func (pl *plan) run(ctx context.Context, rc *runCtx, in Source) (Source, error) {
	src := in
	if src == nil && !pl.source {
		src = NewSliceSource(nil)
	}
	for i, st := range pl.stages {
		stats := &stageStats{}
		if rc.stats != nil {
			if i < len(rc.stats.stages) {
				stats = rc.stats.stages[i]
			}
		}
		rc.st = stats
		next, err := st.open(ctx, rc, src)
		if err != nil {
			if src != nil {
				src.Close()
			}
			return nil, err
		}
		src = next
		if rc.stats != nil {
			src = &countingSource{src: src, st: stats}
		}
	}
	return src, nil
}

// Query returns the leading part of the pipeline that the host runs with
// indexes over the aggregated collection; the zero Query reads every
// document. Its Let holds the command let's values.
func (p *Pipeline) Query() Query {
	q := p.query
	if len(q.Filter) > 0 && len(p.names) > 0 {
		rc := &runCtx{vars: p.vars, names: p.names}
		q.Let = rc.letDoc()
	}
	return q
}

// Run runs the pipeline's stages (those after Query) over in, the
// documents of Query (nil when NeedsInput is false). The returned Source
// yields the results; closing it closes in.
func (p *Pipeline) Run(ctx context.Context, host Host, in Source) (Source, error) {
	rc := &runCtx{host: host, opts: &p.opts, vars: p.vars, names: p.names, st: &stageStats{}}
	if p.opts.Explain {
		rc.stats = &runStats{}
		for range p.stages {
			rc.stats.stages = append(rc.stats.stages, &stageStats{})
		}
		p.mu.Lock()
		p.last = rc.stats
		p.mu.Unlock()
	}
	if p.source && in != nil {
		in.Close()
		in = nil
	}
	return p.run(ctx, rc, in)
}

// NeedsInput reports whether the pipeline reads the aggregated
// collection: false when it starts with a source stage such as $documents
// or $collStats.
func (p *Pipeline) NeedsInput() bool { return !p.source }

// Writes reports the namespace a final $out or $merge writes to, for the
// host's checks (views, system collections, transactions).
func (p *Pipeline) Writes() (ns string, ok bool) { return p.writeNS, p.writeNS != "" }

// Explain returns the stages after $cursor as mongod 7.0's explain shows
// them. After a run with Options.Explain it adds each stage's
// executionStats figures (nReturned, executionTimeMillisEstimate, and
// usedDisk/spills for blocking stages).
func (p *Pipeline) Explain() []bson.Raw {
	p.mu.Lock()
	stats := p.last
	p.mu.Unlock()
	out := make([]bson.Raw, 0, len(p.stages))
	for i, st := range p.stages {
		d := st.explain()
		if m, ok := st.(multiExplainer); ok {
			ds := m.explainAll()
			for _, x := range ds[:len(ds)-1] {
				raw, _ := bson.Marshal(x)
				out = append(out, raw)
			}
			d = ds[len(ds)-1]
		}
		if stats != nil && i < len(stats.stages) {
			s := stats.stages[i]
			d = append(d, s.extra...)
			if isBlocking(st) {
				d = append(d, bson.E{Key: "usedDisk", Value: s.usedDisk}, bson.E{Key: "spills", Value: s.spills})
			}
			d = append(d, bson.E{Key: "nReturned", Value: s.nReturned},
				bson.E{Key: "executionTimeMillisEstimate", Value: s.elapsed.Milliseconds()})
		}
		raw, err := bson.Marshal(d)
		if err != nil {
			raw, _ = bson.Marshal(bson.D{{Key: st.name(), Value: bson.D{}}})
		}
		out = append(out, raw)
	}
	return out
}

// multiExplainer is implemented by stages that mongod runs as several
// ($count, $sortByCount): explain shows each; the counters go on the last.
type multiExplainer interface {
	explainAll() []bson.D
}

// isBlocking reports whether a stage buffers its whole input.
func isBlocking(st stage) bool {
	switch st.name() {
	case "$group", "$sort", "$bucketAuto", "$bucket", "$sortByCount":
		return true
	}
	return false
}

// writer is implemented by $out and $merge.
type writer interface {
	target() string
}

// nsOf joins a database and a collection name.
func nsOf(db, coll string) string { return db + "." + coll }

// splitNS splits "db.coll".
func splitNS(ns string) (string, string) {
	db, coll, _ := strings.Cut(ns, ".")
	return db, coll
}
