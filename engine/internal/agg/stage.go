package agg

import (
	"context"
	"sort"
	"time"

	"go.mongodb.org/mongo-driver/v2/bson"

	"github.com/formworkdb/formwork/engine/internal/expr"
	"github.com/formworkdb/formwork/engine/internal/mongoerr"
)

// stage is one parsed pipeline stage. A stage is immutable after parsing
// (I2): open builds the per-run state.
type stage interface {
	// name returns the stage's name as written ("$match").
	name() string
	// open returns the stage's output over in. rc carries the run's host,
	// variables, options and explain counters; in is nil for a stage
	// registered with flagSource when it is first.
	open(ctx context.Context, rc *runCtx, in Source) (Source, error)
	// explain returns the stage as mongod's explain shows it, e.g.
	// {$match: {...}}.
	explain() bson.D
}

// depsStage is implemented by stages that can say which fields of their
// input they read. deps adds them to d and reports whether the stage
// builds a new document from only those fields (so later stages' needs do
// not reach back through it). A stage without deps needs the whole
// document.
type depsStage interface {
	deps(d *depSet) (fresh bool)
}

// depSet collects the fields a pipeline reads.
type depSet struct {
	paths map[string]bool
	whole bool
}

func (d *depSet) add(paths ...string) {
	if d.paths == nil {
		d.paths = map[string]bool{}
	}
	for _, p := range paths {
		d.paths[p] = true
	}
}

func (d *depSet) addExpr(e *expr.Deps) {
	if e.Whole {
		d.whole = true
	}
	d.add(e.Paths...)
}

// sorted returns the collected paths in order.
func (d *depSet) sorted() []string {
	out := make([]string, 0, len(d.paths))
	for p := range d.paths {
		out = append(out, p)
	}
	sort.Strings(out)
	return out
}

// stageFlags are a stage's position and context restrictions.
type stageFlags int

const (
	// flagFirst: only valid as the first stage (40602).
	flagFirst stageFlags = 1 << iota
	// flagLast: only valid as the last stage (40601).
	flagLast
	// flagSource: produces its own documents; a pipeline that starts
	// with it needs no collection input.
	flagSource
	// flagNoFacet: not allowed inside $facet (40600).
	flagNoFacet
	// flagNoLookup: not allowed inside a $lookup or $unionWith
	// sub-pipeline (51047, 31441).
	flagNoLookup
	// flagWrites: $out and $merge.
	flagWrites
	// flagFirstOrDB: a source that must be first in the pipeline and
	// run against a database ({aggregate: 1}) rather than a collection.
	flagDBLevel
)

// parseFunc parses the value of one stage ({$name: spec}).
type parseFunc func(pc *parseCtx, spec bson.RawValue) (stage, error)

// stageDef is a registered stage.
type stageDef struct {
	parse parseFunc
	flags stageFlags
}

// stageDefs maps each stage name to its definition; the stage_*.go files
// fill it in their init functions.
var stageDefs = map[string]stageDef{}

// register adds a stage. It panics on a duplicate, a programming error
// any test catches.
func register(name string, flags stageFlags, f parseFunc) {
	if _, dup := stageDefs[name]; dup {
		panic("agg: stage registered twice: " + name)
	}
	stageDefs[name] = stageDef{parse: f, flags: flags}
}

// context kinds a (sub-)pipeline is parsed in.
const (
	inTop = iota
	inFacet
	inLookup
	inUnionWith
	inUpdate
)

// MaxDepth bounds the nesting of sub-pipelines ($lookup, $facet,
// $unionWith inside each other), as mongod's
// internalPipelineLengthLimit-style guards do; deeper nesting fails with
// 40391-like MaxSubPipelineDepthExceeded (code 5833200 in mongod's
// namespace; here Overflow-free).
const MaxDepth = 20

// MaxStages bounds the number of stages in one pipeline, mongod's
// internalPipelineLengthLimit (1000).
const MaxStages = 1000

// letVar is a user variable visible to a pipeline: the command's let or a
// $lookup's let.
type letVar struct {
	name string
	slot int
}

// parseCtx carries what parsing a (sub-)pipeline needs.
type parseCtx struct {
	opts  *Options
	scope *expr.Scope
	vars  []letVar // user variables visible here, outermost first
	depth int
	where int
}

// child returns a context for a sub-pipeline parsed in kind where, with
// a child scope so that its let variables stay local.
func (pc *parseCtx) child(where int) (*parseCtx, error) {
	if pc.depth+1 > MaxDepth {
		return nil, mongoerr.Newf(mongoerr.Code(5833200), "Maximum number of nested sub-pipelines exceeded. Limit is %d", MaxDepth)
	}
	return &parseCtx{opts: pc.opts, scope: pc.scope.Child(), vars: append([]letVar(nil), pc.vars...), depth: pc.depth + 1, where: where}, nil
}

// parseExpr parses an expression in the pipeline's scope, recording its
// dependencies in d (may be nil).
func (pc *parseCtx) parseExpr(v bson.RawValue, d *expr.Deps) (expr.Expr, error) {
	return expr.ParseDeps(v, pc.scope, d)
}

// runCtx is the state of one run of a pipeline.
type runCtx struct {
	host  Host
	opts  *Options
	vars  []bson.RawValue // variable values by slot (let variables)
	names []letVar
	stats *runStats
	st    *stageStats // the counters of the stage being opened; never nil
	depth int
}

// exprCtx returns a fresh evaluation context with the run's variables.
func (rc *runCtx) exprCtx() *expr.Ctx {
	c := &expr.Ctx{Vars: append([]bson.RawValue(nil), rc.vars...), Now: rc.opts.Now, ClusterTime: rc.opts.ClusterTime, Collation: rc.opts.Collation}
	for len(c.Vars) < 2 {
		c.Vars = append(c.Vars, bson.RawValue{})
	}
	return c
}

// with returns a copy of rc whose variables are those of c (after a
// $lookup bound its let variables), for running a sub-pipeline.
func (rc *runCtx) with(c *expr.Ctx, names []letVar) *runCtx {
	n := *rc
	n.vars = append([]bson.RawValue(nil), c.Vars...)
	n.names = names
	n.stats = nil
	n.st = &stageStats{}
	n.depth = rc.depth + 1
	return &n
}

// letDoc returns the user variables' current values as a document, the
// Query.Let a host needs to evaluate $expr in a pushed-down filter.
func (rc *runCtx) letDoc() bson.Raw {
	if len(rc.names) == 0 {
		return nil
	}
	b := expr.NewDocBuilder()
	for _, v := range rc.names {
		if v.slot < len(rc.vars) {
			b.Append(v.name, rc.vars[v.slot])
		}
	}
	return b.Doc()
}

// letMissing reports whether a user variable is missing, which a
// Query's Let cannot carry.
func (rc *runCtx) letMissing() bool {
	for _, v := range rc.names {
		if v.slot >= len(rc.vars) || rc.vars[v.slot].Type == 0 {
			return true
		}
	}
	return false
}

// runStats are the explain counters of one run.
type runStats struct {
	stages []*stageStats
}

// stageStats are one stage's explain counters.
type stageStats struct {
	nReturned int64
	elapsed   time.Duration
	usedDisk  bool
	spills    int64
	extra     bson.D // stage-specific figures, appended to explain
	accMax    map[string]int64
}

// maxAcc returns the largest memory recorded for an accumulator field.
func (s *stageStats) maxAcc(f string) int64 { return s.accMax[f] }

// setMaxAcc records the memory of an accumulator field.
func (s *stageStats) setMaxAcc(f string, n int64) {
	if s.accMax == nil {
		s.accMax = map[string]int64{}
	}
	s.accMax[f] = n
}

// countingSource counts what a stage returns and the time it spends, for
// explain's executionStats.
type countingSource struct {
	src Source
	st  *stageStats
}

func (c *countingSource) Next(ctx context.Context) (bson.Raw, error) {
	start := time.Now()
	d, err := c.src.Next(ctx)
	c.st.elapsed += time.Since(start)
	if d != nil {
		c.st.nReturned++
	}
	return d, err
}

func (c *countingSource) Close() { c.src.Close() }

// sub returns a copy of rc for running a sub-pipeline with the same
// variables (no explain counters).
func (rc *runCtx) sub() *runCtx {
	n := *rc
	n.stats = nil
	n.st = &stageStats{}
	n.depth = rc.depth + 1
	return &n
}
