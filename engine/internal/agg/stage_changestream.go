package agg

import (
	"context"

	"go.mongodb.org/mongo-driver/v2/bson"

	"github.com/formworkdb/formwork/engine/internal/expr"
	"github.com/formworkdb/formwork/engine/internal/mongoerr"
)

// changeStreamStages are the stages a $changeStream pipeline may hold
// after $changeStream: those that transform or drop single events.
var changeStreamStages = map[string]bool{
	"$match": true, "$project": true, "$addFields": true, "$set": true,
	"$unset": true, "$replaceRoot": true, "$replaceWith": true, "$redact": true,
}

// ParseChangeStream parses the stages that follow $changeStream. Each must
// be one of the stages mongod allows there (IllegalOperation otherwise).
// The pipeline runs over one event at a time (RunEvent): nothing is
// pushed down to a query.
// https://www.mongodb.com/docs/v7.0/changeStreams/#modify-change-stream-output
func ParseChangeStream(stages []bson.Raw, opts Options) (*Pipeline, error) {
	for _, raw := range stages {
		e, err := raw.IndexErr(0)
		if err != nil {
			continue // parseStages reports it
		}
		name := e.Key()
		if name == "$changeStream" {
			return nil, mongoerr.Newf(mongoerr.Code(40602), "%s is only valid as the first stage in a pipeline", name)
		}
		if _, known := stageDefs[name]; known && !changeStreamStages[name] {
			return nil, mongoerr.Newf(mongoerr.IllegalOperation, "%s is not permitted in a $changeStream pipeline", name)
		}
	}
	p := &Pipeline{opts: opts}
	sc := expr.NewScope()
	sc.SetCollation(opts.Collation)
	pc := &parseCtx{opts: &p.opts, scope: sc, where: inTop}
	ss, err := parseStages(pc, stages)
	if err != nil {
		return nil, err
	}
	p.plan = split(ss, false)
	return p, nil
}

// RunEvent runs the pipeline over one change event and returns what comes
// out: the transformed event, or nil when a stage dropped it.
func (p *Pipeline) RunEvent(ctx context.Context, host Host, event bson.Raw) (bson.Raw, error) {
	src, err := p.Run(ctx, host, NewSliceSource([]bson.Raw{event}))
	if err != nil {
		return nil, err
	}
	defer src.Close()
	return src.Next(ctx)
}

func init() {
	// The command layer runs a leading $changeStream itself; here the
	// stage exists so that other positions get mongod's position errors.
	register("$changeStream", flagFirst|flagNoFacet|flagNoLookup, func(pc *parseCtx, spec bson.RawValue) (stage, error) {
		return nil, mongoerr.New(mongoerr.Code(40602), "$changeStream is only valid as the first stage in a pipeline")
	})
}
