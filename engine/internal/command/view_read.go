package command

import (
	"context"
	"slices"
	"strings"

	"go.mongodb.org/mongo-driver/v2/bson"

	"github.com/formworkdb/formwork/engine/internal/agg"
	"github.com/formworkdb/formwork/engine/internal/bsonkit"
	"github.com/formworkdb/formwork/engine/internal/expr"
)

// viewPipeline runs stages over the view ns (the host prepends the view's
// own pipeline) with the command's evaluated let; hint, when set, goes to
// the query on the collection under the view.
func (r *Request) viewPipeline(ctx context.Context, ns string, stages []bson.Raw, let bson.Raw, ca collationArg, hint bson.RawValue) (agg.Source, error) {
	db, coll := splitNS(ns)
	vc, err := r.viewCollation(ns, ca)
	if err != nil {
		return nil, err
	}
	pl, err := agg.Parse(stages, agg.Options{
		DB: db, Coll: coll, Let: literalLet(let), AllowDiskUse: r.Env.params.Bool("allowDiskUseByDefault"),
		TempDir: r.Env.tempDir(), Limits: r.Env.aggLimits(), Now: r.start, ClusterTime: r.Env.clock.current(),
		Collation: vc,
	})
	if err != nil {
		return nil, err
	}
	q := pl.Query()
	q.Hint = hint
	return (&aggHost{r: r}).runQuery(ctx, pl, ns, q)
}

// splitNS splits "db.coll".
func splitNS(ns string) (string, string) {
	db, coll, _ := strings.Cut(ns, ".")
	return db, coll
}

// literalLet wraps each value of an evaluated let in {$literal: …}, so
// that a pipeline's let evaluates it to itself.
func literalLet(let bson.Raw) bson.Raw {
	if len(let) <= 5 {
		return nil
	}
	out := expr.NewDocBuilder()
	elems, _ := let.Elements()
	for _, e := range elems {
		b := expr.NewDocBuilder()
		b.Append("$literal", e.Value())
		out.Append(e.Key(), expr.Doc(b.Doc()))
	}
	return out.Doc()
}

// stage builds a one-stage document {name: v}.
func stage(name string, v bson.RawValue) bson.Raw {
	b := expr.NewDocBuilder()
	b.Append(name, v)
	return b.Doc()
}

// findOnView runs a find on a view as mongod does, as an aggregate:
// the view's pipeline, then $match, $sort, $skip, $limit and $project.
// https://www.mongodb.com/docs/v7.0/core/views/#behavior
func (r *Request) findOnView(ctx context.Context, p *findParams) (bson.D, error) {
	src, err := r.viewPipeline(ctx, p.ns, p.viewStages(), p.let, p.collation, p.hint)
	if err != nil {
		return nil, err
	}
	batchSize := p.batchSize
	if batchSize == 0 {
		c := r.Env.Cursors.add(p.ns, r.Generic.LSID, src, nil)
		return cursorReply(c.ID, p.ns, "firstBatch", nil), nil
	}
	if p.limit > 0 && batchSize > p.limit {
		batchSize = p.limit
	}
	return openCursor(ctx, r, p.ns, src, batchSize, p.singleBatch)
}

// viewStages returns the stages a find on a view runs after the view's
// pipeline.
func (p *findParams) viewStages() []bson.Raw {
	var stages []bson.Raw
	if len(p.filter) > 5 {
		stages = append(stages, stage("$match", expr.Doc(p.filter)))
	}
	if len(p.sortSpec) > 5 {
		stages = append(stages, stage("$sort", expr.Doc(p.sortSpec)))
	}
	if p.skip > 0 {
		stages = append(stages, stage("$skip", expr.Int64(p.skip)))
	}
	if p.limit > 0 {
		stages = append(stages, stage("$limit", expr.Int64(p.limit)))
	}
	if len(p.projSpec) > 5 {
		stages = append(stages, stage("$project", expr.Doc(p.projSpec)))
	}
	return stages
}

// explainOnView returns, for a find, count or distinct on a view, the
// aggregate mongod explains instead (ok false when r's target is not a
// view).
func explainOnView(r *Request) (*aggregateParams, bool, error) {
	var (
		ns     string
		stages []bson.Raw
		hint   bson.RawValue
	)
	switch r.Name {
	case "find":
		p, err := parseFind(r)
		if err != nil {
			return nil, false, err
		}
		ns, stages, hint = p.ns, p.viewStages(), p.hint
	case "count":
		p, err := parseCount(r)
		if err != nil {
			return nil, false, err
		}
		ns, hint = p.ns, p.hint
		if len(p.filter) > 5 {
			stages = append(stages, stage("$match", expr.Doc(p.filter)))
		}
		stages = append(stages, stage("$count", expr.String("count")))
	case "distinct":
		p, err := parseDistinct(r)
		if err != nil {
			return nil, false, err
		}
		ns, hint = p.ns, p.hint
		if len(p.filter) > 5 {
			stages = append(stages, stage("$match", expr.Doc(p.filter)))
		}
	default:
		return nil, false, nil
	}
	if r.Env.view(ns) == nil {
		return nil, false, nil
	}
	db, coll := splitNS(ns)
	return &aggregateParams{db: db, coll: coll, stages: stages, haveCur: true, batchSize: defaultBatchSize, hint: hint}, true, nil
}

// countOnView counts the documents of a view matching p.
func (r *Request) countOnView(ctx context.Context, p *countParams) (bson.D, error) {
	var stages []bson.Raw
	if len(p.filter) > 5 {
		stages = append(stages, stage("$match", expr.Doc(p.filter)))
	}
	if p.skip > 0 {
		stages = append(stages, stage("$skip", expr.Int64(p.skip)))
	}
	if p.limit > 0 {
		stages = append(stages, stage("$limit", expr.Int64(p.limit)))
	}
	src, err := r.viewPipeline(ctx, p.ns, stages, nil, p.collation, p.hint)
	if err != nil {
		return nil, err
	}
	defer src.Close()
	var n int64
	for {
		d, err := src.Next(ctx)
		if err != nil {
			return nil, err
		}
		if d == nil {
			break
		}
		n++
	}
	return bson.D{{Key: "n", Value: int32OrLong(n)}}, nil
}

// distinctOnView returns the distinct values of p.key among a view's
// documents matching p.
func (r *Request) distinctOnView(ctx context.Context, p *distinctParams) (bson.D, error) {
	var stages []bson.Raw
	if len(p.filter) > 5 {
		stages = append(stages, stage("$match", expr.Doc(p.filter)))
	}
	src, err := r.viewPipeline(ctx, p.ns, stages, nil, p.collation, p.hint)
	if err != nil {
		return nil, err
	}
	defer src.Close()
	var vals []bson.RawValue
	path := strings.Split(p.key, ".")
	for {
		d, err := src.Next(ctx)
		if err != nil {
			return nil, err
		}
		if d == nil {
			break
		}
		collectDistinct(bson.RawValue{Type: bson.TypeEmbeddedDocument, Value: d}, path, &vals)
	}
	slices.SortStableFunc(vals, bsonkit.Compare)
	out := bson.A{}
	for i, v := range vals {
		if i > 0 && bsonkit.Compare(vals[i-1], v) == 0 {
			continue
		}
		out = append(out, v)
	}
	return bson.D{{Key: "values", Value: out}}, nil
}
