package command

import (
	"context"
	"strings"

	"go.mongodb.org/mongo-driver/v2/bson"

	"github.com/formworkdb/formwork/engine/internal/mongoerr"
)

func init() {
	register("aggregate", &spec{run: runAggregate, apiV1: true, help: "run an aggregation pipeline"})
}

// aggregateParams are the fields of an aggregate command.
type aggregateParams struct {
	ns        string
	stages    []bson.Raw
	haveCur   bool
	batchSize int64
	explain   bool
}

// parseAggregate parses an aggregate command's fields.
func parseAggregate(r *Request) (*aggregateParams, error) {
	first := r.Body.Index(0).Value()
	name, ok := first.StringValueOK()
	if !ok {
		return nil, mongoerr.New(mongoerr.NotImplemented, "collection-less aggregations ({aggregate: 1}) are not supported yet")
	}
	if err := validCollName(r.DB, name); err != nil {
		return nil, err
	}
	p := &aggregateParams{ns: r.DB + "." + name, batchSize: defaultBatchSize}
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
		case "allowDiskUse", "bypassDocumentValidation":
			_, err = wantBool("aggregate", k, v)
		case "collation":
			err = checkCollation(v)
		case "explain":
			p.explain, err = wantBool("aggregate", k, v)
		case "hint", "let":
			return mongoerr.Newf(mongoerr.NotImplemented, "aggregate option '%s' is not supported yet", k)
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

// aggregatePlan is how an aggregate runs: a stats source stage, or the
// leading stages as a query followed by an optional final stage.
type aggregatePlan struct {
	stats bool   // the pipeline starts with $collStats or $indexStats
	q     *query // the leading $match/$sort/$skip/$limit
	tail  func([]bson.Raw) ([]bson.Raw, error)
}

// plan splits p's pipeline into the query its leading stages form and the
// stage after them, compiled against the collection as it is now.
func (p *aggregateParams) plan(r *Request) (*aggregatePlan, error) {
	stages := p.stages
	if len(stages) > 0 && isStatsStage(stages[0]) {
		return &aggregatePlan{stats: true}, nil
	}
	q := &query{coll: r.Env.Store.Collection(p.ns)}
	var filter, sortSpec bson.Raw
	i := 0
	// Leading stages become one query, in the order MongoDB allows them to
	// be pushed down: $match, then $sort, then $skip, then $limit.
	phase := 0
loop:
	for ; i < len(stages); i++ {
		st := stages[i]
		elems, _ := st.Elements()
		if len(elems) != 1 {
			return nil, mongoerr.New(mongoerr.Code(40323), "A pipeline stage specification object must contain exactly one field.")
		}
		v := elems[0].Value()
		switch elems[0].Key() {
		case "$match":
			if phase > 0 {
				break loop
			}
			d, ok := v.DocumentOK()
			if !ok {
				return nil, mongoerr.New(mongoerr.Code(15959), "the match filter must be an expression in an object")
			}
			filter, phase = d, 1
		case "$sort":
			if phase > 1 {
				break loop
			}
			d, ok := v.DocumentOK()
			if !ok {
				return nil, mongoerr.New(mongoerr.Code(15973), "the $sort key specification must be an object")
			}
			sortSpec, phase = d, 2
		case "$skip":
			if phase > 2 {
				break loop
			}
			n, ok := asInt(v)
			if !ok || n < 0 {
				return nil, mongoerr.New(mongoerr.Code(15956), "invalid argument to $skip stage: Cannot represent as a 64-bit integer")
			}
			q.skip, phase = n, 3
		case "$limit":
			if phase > 3 {
				break loop
			}
			n, ok := asInt(v)
			if !ok || n <= 0 {
				return nil, mongoerr.New(mongoerr.Code(15958), "the limit must be positive")
			}
			q.limit, phase = n, 4
		default:
			break loop
		}
	}
	if err := q.setFilter(filter, r.matchEnv(nil)); err != nil {
		return nil, err
	}
	if err := q.setSort(sortSpec); err != nil {
		return nil, err
	}
	ap := &aggregatePlan{q: q}
	rest := stages[i:]
	switch {
	case len(rest) == 0:
	case len(rest) == 1:
		t, err := countStage(rest[0])
		if err != nil {
			return nil, err
		}
		ap.tail = t
	default:
		return nil, unsupportedStage(rest[0])
	}
	return ap, nil
}

// runAggregate runs the subset of the aggregation framework that drivers
// use for countDocuments: leading $match, $sort, $skip and $limit stages
// (executed as a query) followed by $count or a $group on a constant _id
// with $sum of a constant. Every other stage answers NotImplemented until
// the aggregation engine exists.
// https://www.mongodb.com/docs/manual/reference/command/aggregate/
func runAggregate(ctx context.Context, r *Request) (bson.D, error) {
	p, err := parseAggregate(r)
	if err != nil {
		return nil, err
	}
	if p.explain {
		return nil, mongoerr.New(mongoerr.NotImplemented, "explain of aggregate is not supported yet")
	}
	if !p.haveCur {
		return nil, mongoerr.New(mongoerr.FailedToParse, "The 'cursor' option is required, except for aggregate with the explain argument")
	}
	ns, batchSize := p.ns, p.batchSize
	ap, err := p.plan(r)
	if err != nil {
		return nil, err
	}
	if ap.stats {
		src, err := r.statsSource(ns, p.stages)
		if err != nil {
			return nil, err
		}
		return openCursor(ctx, r, ns, src, batchSize, false)
	}
	src, err := r.findSource(ctx, ap.q, nil)
	if err != nil {
		return nil, err
	}
	if ap.tail != nil {
		var docs []bson.Raw
		for {
			d, err := src.Next(ctx)
			if err != nil {
				src.Close()
				return nil, err
			}
			if d == nil {
				break
			}
			docs = append(docs, d)
		}
		src.Close()
		out, err := ap.tail(docs)
		if err != nil {
			return nil, err
		}
		src = &sliceSource{docs: out}
	}
	return openCursor(ctx, r, ns, src, batchSize, false)
}

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

// countStage compiles a final $count or constant-key $group with $sum
// accumulators of constants.
func countStage(st bson.Raw) (func([]bson.Raw) ([]bson.Raw, error), error) {
	e := st.Index(0)
	switch e.Key() {
	case "$count":
		field, ok := e.Value().StringValueOK()
		if !ok || field == "" || strings.HasPrefix(field, "$") || strings.Contains(field, ".") {
			return nil, mongoerr.New(mongoerr.Code(40156), "the count field must be a non-empty string that does not start with $ and does not contain '.'")
		}
		return func(docs []bson.Raw) ([]bson.Raw, error) {
			if len(docs) == 0 {
				return nil, nil
			}
			b, err := bson.Marshal(bson.D{{Key: field, Value: int32OrLong(int64(len(docs)))}})
			return []bson.Raw{b}, err
		}, nil
	case "$group":
		spec, ok := e.Value().DocumentOK()
		if !ok {
			return nil, mongoerr.New(mongoerr.Code(15947), "a group's fields must be specified in an object")
		}
		elems, _ := spec.Elements()
		var id bson.RawValue
		type acc struct {
			name string
			by   float64
			isF  bool
			n    int64
		}
		var accs []acc
		for _, f := range elems {
			if f.Key() == "_id" {
				id = f.Value()
				if s, ok := id.StringValueOK(); ok && strings.HasPrefix(s, "$") {
					return nil, mongoerr.New(mongoerr.NotImplemented, "$group by a field is not supported yet")
				}
				if id.Type == bson.TypeEmbeddedDocument || id.Type == bson.TypeArray {
					return nil, mongoerr.New(mongoerr.NotImplemented, "$group by an expression is not supported yet")
				}
				continue
			}
			d, ok := f.Value().DocumentOK()
			if !ok {
				return nil, mongoerr.Newf(mongoerr.Code(40234), "The field '%s' must be an accumulator object", f.Key())
			}
			op := d.Index(0)
			if op.Key() != "$sum" || !isNumber(op.Value()) {
				return nil, mongoerr.New(mongoerr.NotImplemented, "$group accumulators other than $sum of a constant are not supported yet")
			}
			a := acc{name: f.Key()}
			if n, ok := asInt(op.Value()); ok && op.Value().Type != bson.TypeDouble {
				a.n = n
			} else {
				a.by, _ = asFloat(op.Value())
				a.isF = true
			}
			accs = append(accs, a)
		}
		if id.Type == 0 {
			return nil, mongoerr.New(mongoerr.Code(15955), "a group specification must include an _id")
		}
		return func(docs []bson.Raw) ([]bson.Raw, error) {
			if len(docs) == 0 {
				return nil, nil
			}
			out := bson.D{{Key: "_id", Value: id}}
			for _, a := range accs {
				if a.isF {
					out = append(out, bson.E{Key: a.name, Value: a.by * float64(len(docs))})
				} else {
					out = append(out, bson.E{Key: a.name, Value: int32OrLong(a.n * int64(len(docs)))})
				}
			}
			b, err := bson.Marshal(out)
			return []bson.Raw{b}, err
		}, nil
	}
	return nil, unsupportedStage(st)
}
