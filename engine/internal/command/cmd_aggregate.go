package command

import (
	"context"
	"strings"

	"go.mongodb.org/mongo-driver/v2/bson"

	"github.com/formworkdb/formwork/engine/internal/agg"
	"github.com/formworkdb/formwork/engine/internal/expr"
	"github.com/formworkdb/formwork/engine/internal/mongoerr"
)

func init() {
	register("aggregate", &spec{run: runAggregate, apiV1: true, help: "run an aggregation pipeline"})
}

// aggregateParams are the fields of an aggregate command.
type aggregateParams struct {
	db, coll     string // coll "" for {aggregate: 1}
	stages       []bson.Raw
	haveCur      bool
	batchSize    int64
	explain      bool
	allowDiskUse *bool
	hint         bson.RawValue
	let          bson.Raw // unevaluated: agg evaluates it with the pipeline's scope
	collation    collationArg
}

// ns returns the aggregated namespace ("db.$cmd.aggregate" for
// {aggregate: 1}, as mongod's cursors name it).
func (p *aggregateParams) ns() string {
	if p.coll == "" {
		return p.db + ".$cmd.aggregate"
	}
	return p.db + "." + p.coll
}

// parseAggregate parses an aggregate command's fields.
func parseAggregate(r *Request) (*aggregateParams, error) {
	p := &aggregateParams{db: r.DB, batchSize: defaultBatchSize}
	first := r.Body.Index(0).Value()
	if name, ok := first.StringValueOK(); ok {
		if err := validCollName(r.DB, name); err != nil {
			return nil, err
		}
		p.coll = name
	} else if n, ok := asFloat(first); !ok || n != 1 {
		return nil, mongoerr.New(mongoerr.FailedToParse, "Invalid command format: the 'aggregate' field must specify a collection name or 1")
	}
	havePipe := false
	err := fields("aggregate", r.Body, func(k string, v bson.RawValue) error {
		var err error
		switch k {
		case "pipeline":
			p.stages, err = docArray("aggregate", k, v)
			havePipe = true
		case "cursor":
			var d bson.Raw
			if d, err = wantDoc("aggregate", k, v); err == nil {
				p.haveCur = true
				if bs, e := d.LookupErr("batchSize"); e == nil {
					p.batchSize, err = wantNonNegative("aggregate", "cursor.batchSize", bs)
				}
			}
		case "allowDiskUse":
			var b bool
			b, err = wantBool("aggregate", k, v)
			p.allowDiskUse = &b
		case "bypassDocumentValidation":
			r.bypassValidation, err = wantBool("aggregate", k, v)
		case "collation":
			p.collation, err = r.parseCollationArg(v)
		case "explain":
			p.explain, err = wantBool("aggregate", k, v)
		case "hint":
			if v.Type != bson.TypeString && v.Type != bson.TypeEmbeddedDocument {
				return mongoerr.New(mongoerr.FailedToParse, "hint must be a string or an object")
			}
			p.hint = v
		case "let":
			p.let, err = wantDoc("aggregate", k, v)
		case "fromMongos", "needsMerge", "$_requestReshardingResumeToken", "isMapReduceCommand":
			_, err = wantBool("aggregate", k, v)
		default:
			return errUnknown
		}
		return err
	})
	if err != nil {
		return nil, err
	}
	if !havePipe {
		return nil, mongoerr.New(mongoerr.Code(40414), "BSON field 'aggregate.pipeline' is missing but a required field")
	}
	return p, nil
}

// pipeline parses and optimises p's pipeline for r.
func (p *aggregateParams) pipeline(r *Request, explain bool) (*agg.Pipeline, error) {
	if r.Env.view(p.ns()) != nil {
		if _, err := r.viewCollation(p.ns(), p.collation); err != nil {
			return nil, err
		}
	}
	allow := r.Env.params.Bool("allowDiskUseByDefault")
	if p.allowDiskUse != nil {
		allow = *p.allowDiskUse
	}
	pl, err := agg.Parse(p.stages, agg.Options{
		DB: p.db, Coll: p.coll, Let: p.let, AllowDiskUse: allow,
		TempDir: r.Env.tempDir(), Limits: r.Env.aggLimits(),
		Now: r.start, ClusterTime: r.Env.clock.current(), Explain: explain,
		Collation: r.collationFor(r.collection(p.db+"."+p.coll), p.collation),
	})
	if err != nil {
		return nil, err
	}
	if p.coll == "" && pl.NeedsInput() {
		name := "(empty)"
		if len(p.stages) > 0 {
			if e, err := p.stages[0].IndexErr(0); err == nil {
				name = e.Key()
			}
		}
		return nil, mongoerr.Newf(mongoerr.InvalidNamespace, "{aggregate: 1} is not valid for '%s'; a collection is required.", name)
	}
	if ns, ok := pl.Writes(); ok && !r.Env.outToTimeseries(pl, ns) {
		if err := (&aggHost{r: r}).checkTarget(ns); err != nil {
			return nil, err
		}
	}
	return pl, nil
}

// query returns the pushed-down query of pl with p's hint.
func (p *aggregateParams) query(pl *agg.Pipeline) agg.Query {
	q := pl.Query()
	if p.hint.Type != 0 {
		q.Hint = p.hint
	}
	q.AllowDiskUse = p.allowDiskUse
	return q
}

// runAggregate runs an aggregation pipeline: its leading $match, $sort,
// $skip and $limit through the query planner, the other stages in package
// agg, and returns a cursor.
// https://www.mongodb.com/docs/v7.0/reference/command/aggregate/
func runAggregate(ctx context.Context, r *Request) (bson.D, error) {
	p, err := parseAggregate(r)
	if err != nil {
		return nil, err
	}
	if isChangeStream(p.stages) {
		return runChangeStream(ctx, r, p)
	}
	if p.explain {
		return explainAggregate(ctx, r, p, 0)
	}
	if !p.haveCur {
		return nil, mongoerr.New(mongoerr.FailedToParse, "The 'cursor' option is required, except for aggregate with the explain argument")
	}
	// A profiled database records usedDisk, which the stages' counters
	// (kept under explain) tell.
	profiled := r.op != nil && r.op.profiled
	pl, err := p.pipeline(r, profiled)
	if err != nil {
		return nil, err
	}
	host := &aggHost{r: r}
	src, err := host.runQuery(ctx, pl, p.ns(), p.query(pl))
	if err != nil {
		return nil, err
	}
	if profiled {
		src = &profSource{src: src, pl: pl, op: r.op}
	}
	if _, writes := pl.Writes(); writes {
		// $out and $merge write everything before the reply, whatever
		// the batch size, and return no documents.
		for {
			d, err := src.Next(ctx)
			if err != nil {
				src.Close()
				return nil, aggExecErr(err)
			}
			if d == nil {
				break
			}
		}
		src.Close()
		reply := cursorReply(0, p.ns(), "firstBatch", nil)
		if wce := r.Generic.WriteConcern.concernError(); wce != nil {
			reply = append(reply, bson.E{Key: "writeConcernError", Value: wce})
		}
		return reply, nil
	}
	if p.batchSize == 0 {
		// A zero batch opens the cursor without reading anything.
		c := r.Env.Cursors.add(p.ns(), r.Generic.LSID, src, nil)
		return cursorReply(c.ID, p.ns(), "firstBatch", nil), nil
	}
	reply, err := openCursor(ctx, r, p.ns(), src, p.batchSize, false)
	if err != nil {
		return nil, aggExecErr(err)
	}
	return reply, nil
}

// aggExecErr adds mongod's context to an error raised while running the
// pipeline for the first batch (parsing and planning errors come before
// and have none): "PlanExecutor error during aggregation :: caused by ::
// <message>", same code and extra fields. A getMore's errors carry
// getMore's own context, not this one.
func aggExecErr(err error) error {
	me := mongoerr.As(err)
	c := *me
	c.Msg = "PlanExecutor error during aggregation :: caused by :: " + me.Msg
	return &c
}

// runQuery opens q on ns (nothing for a pipeline that makes its own
// documents) and runs the rest of pl over it.
func (h *aggHost) runQuery(ctx context.Context, pl *agg.Pipeline, ns string, q agg.Query) (agg.Source, error) {
	var in agg.Source
	if pl.NeedsInput() {
		var err error
		if in, err = h.Open(ctx, ns, q); err != nil {
			return nil, err
		}
	}
	return pl.Run(ctx, h, in)
}

// queryStages returns q as pipeline stages, for a query on a view: $match
// (its let values as literals), $sort, $skip, $limit, $sample.
func queryStages(q agg.Query) []bson.Raw {
	var out []bson.Raw
	add := func(name string, v bson.RawValue) {
		b := expr.NewDocBuilder()
		b.Append(name, v)
		out = append(out, b.Doc())
	}
	if len(q.Filter) > 5 {
		f := q.Filter
		if len(q.Let) > 5 {
			// The view's pipeline does not define the caller's let
			// variables: put their values into the filter.
			f = bindLet(q.Filter, q.Let)
		}
		add("$match", expr.Doc(f))
	}
	if len(q.Sort) > 5 {
		add("$sort", expr.Doc(q.Sort))
	}
	if q.Skip > 0 {
		add("$skip", expr.Int64(q.Skip))
	}
	if q.Limit > 0 {
		add("$limit", expr.Int64(q.Limit))
	}
	if q.Sample > 0 {
		b := expr.NewDocBuilder()
		b.Append("size", expr.Int64(q.Sample))
		add("$sample", expr.Doc(b.Doc()))
	}
	return out
}

// bindLet replaces "$$name" strings of let variables in filter's $expr
// operands with {$literal: value}, so that the filter can run where the
// variables are not defined. Other strings are kept.
func bindLet(filter, let bson.Raw) bson.Raw {
	vals := map[string]bson.RawValue{}
	if elems, err := let.Elements(); err == nil {
		for _, e := range elems {
			vals[e.Key()] = e.Value()
		}
	}
	var sub func(v bson.RawValue, depth int) bson.RawValue
	sub = func(v bson.RawValue, depth int) bson.RawValue {
		if depth > expr.MaxDepth {
			return v
		}
		switch v.Type {
		case bson.TypeString:
			s := v.StringValue()
			if strings.HasPrefix(s, "$$") {
				name, rest, _ := strings.Cut(s[2:], ".")
				if lv, ok := vals[name]; ok && rest == "" {
					b := expr.NewDocBuilder()
					b.Append("$literal", lv)
					return expr.Doc(b.Doc())
				}
			}
		case bson.TypeEmbeddedDocument:
			b := expr.NewDocBuilder()
			elems, _ := v.Document().Elements()
			for _, e := range elems {
				b.Append(e.Key(), sub(e.Value(), depth+1))
			}
			return expr.Doc(b.Doc())
		case bson.TypeArray:
			var out []bson.RawValue
			for _, x := range expr.Values(v) {
				out = append(out, sub(x, depth+1))
			}
			return expr.Array(out)
		}
		return v
	}
	return sub(expr.Doc(filter), 0).Document()
}

// unsupportedStage is the error for a stage the engine cannot run where
// it stands.
func unsupportedStage(st bson.Raw) error {
	name := "(empty)"
	if e, err := st.IndexErr(0); err == nil {
		name = e.Key()
	}
	if !strings.HasPrefix(name, "$") {
		return mongoerr.Newf(mongoerr.Code(40324), "Unrecognized pipeline stage name: '%s'", name)
	}
	return mongoerr.Newf(mongoerr.NotImplemented, "aggregation stage %s in this position is not supported yet", name)
}

// profSource reports to the operation reading it whether the pipeline's
// blocking stages spilled to disk (the profiler's usedDisk).
type profSource struct {
	src   agg.Source
	pl    *agg.Pipeline
	op    *opState
	first bool // the first result was reported
}

func (s *profSource) Next(ctx context.Context) (bson.Raw, error) {
	d, err := s.src.Next(ctx)
	if d == nil || !s.first {
		// A blocking stage has read all its input by its first result.
		s.first = true
		s.report()
	}
	return d, err
}

// report marks the operation usedDisk when a stage spilled.
func (s *profSource) report() {
	if s.op == nil {
		return
	}
	for _, st := range s.pl.Explain() {
		if b, ok := st.Lookup("usedDisk").BooleanOK(); ok && b {
			s.op.mu.Lock()
			s.op.usedDisk = true
			s.op.mu.Unlock()
			return
		}
	}
}

func (s *profSource) attach(op *opState) { s.op = op }

func (s *profSource) Close() { s.src.Close() }
