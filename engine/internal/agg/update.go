package agg

import (
	"time"

	"context"

	"go.mongodb.org/mongo-driver/v2/bson"

	"github.com/formworkdb/formwork/engine/internal/expr"
	"github.com/formworkdb/formwork/engine/internal/mongoerr"
)

// updateStages are the stages a pipeline-style update may use.
var updateStages = map[string]bool{
	"$addFields": true, "$set": true, "$project": true, "$unset": true,
	"$replaceRoot": true, "$replaceWith": true,
}

// errUpdateStage is mongod's error for a stage not allowed in an update
// pipeline.
func errUpdateStage(name string) error {
	return mongoerr.Newf(mongoerr.InvalidOptions, "%s is not allowed to be used within an update", name)
}

// UpdatePipeline is a compiled pipeline-style update. It is immutable and
// safe for concurrent use.
type UpdatePipeline struct {
	stages []stage
	vars   []bson.RawValue
	names  []letVar
	opts   Options
}

// ParseUpdatePipeline compiles the pipeline of a pipeline-style update:
// only $addFields/$set, $project, $unset and $replaceRoot/$replaceWith
// (others fail with 72 InvalidOptions, as mongod). let binds variables
// (already-evaluated constants or expressions, as the update command's
// let; $$NOW and $$CLUSTER_TIME are those of Apply's time).
func ParseUpdatePipeline(stages []bson.Raw, let bson.Raw) (*UpdatePipeline, error) {
	u := &UpdatePipeline{opts: Options{Now: time.Now()}}
	sc := expr.NewScope()
	pc := &parseCtx{opts: &u.opts, scope: sc, where: inTop}
	vars, names, err := evalLet(let, pc, &u.opts)
	if err != nil {
		return nil, err
	}
	u.vars, u.names = vars, names
	pc.vars = names
	for _, raw := range stages {
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
		if !updateStages[name] {
			return nil, errUpdateStage(name)
		}
		st, err := def.parse(pc, elems[0].Value())
		if err != nil {
			return nil, err
		}
		u.stages = append(u.stages, st)
	}
	return u, nil
}

// Apply runs the update pipeline over one document and returns the new
// document. It never modifies doc.
func (u *UpdatePipeline) Apply(ctx context.Context, doc bson.Raw) (bson.Raw, error) {
	rc := &runCtx{opts: &u.opts, vars: u.vars, names: u.names, st: &stageStats{}}
	pl := plan{stages: u.stages}
	src, err := pl.run(ctx, rc, NewSliceSource([]bson.Raw{doc}))
	if err != nil {
		return nil, err
	}
	defer src.Close()
	out, err := src.Next(ctx)
	if err != nil {
		return nil, err
	}
	if out == nil {
		return doc, nil
	}
	return out, nil
}

// SetNow sets the time $$NOW reads and the cluster time for later Apply
// calls; call it before sharing the pipeline between goroutines.
func (u *UpdatePipeline) SetNow(now time.Time, ct bson.Timestamp) {
	u.opts.Now = now
	u.opts.ClusterTime = ct
}
