package agg

import (
	"context"

	"go.mongodb.org/mongo-driver/v2/bson"

	"github.com/formworkdb/formwork/engine/internal/mongoerr"
)

func init() { register("$unionWith", 0, parseUnionWith) }

// stageUnionWith is {$unionWith: "coll"} or {$unionWith: {coll,
// pipeline}}: the input documents, then those of the other collection
// through the pipeline (whose leading part becomes its Query).
// https://www.mongodb.com/docs/v7.0/reference/operator/aggregation/unionWith/
type stageUnionWith struct {
	spec  bson.RawValue
	coll  string
	sub   *plan
	local *plan // sub without pushdown, for let values the Query cannot carry
}

// parseUnionWith parses $unionWith: FailedToParse for a spec that is
// neither string nor document, the IDL codes (40414 missing coll, 40415
// unknown field, TypeMismatch) for a bad document, 31441 for stages not
// allowed in the sub-pipeline.
func parseUnionWith(pc *parseCtx, spec bson.RawValue) (stage, error) {
	s := &stageUnionWith{spec: spec}
	var raws []bson.Raw
	switch spec.Type {
	case bson.TypeString:
		s.coll = spec.StringValue()
	case bson.TypeEmbeddedDocument:
		for _, el := range mustElems(spec.Document()) {
			v := el.Value()
			switch el.Key() {
			case "coll":
				if v.Type != bson.TypeString {
					return nil, mongoerr.Newf(mongoerr.TypeMismatch, "BSON field '$unionWith.coll' is the wrong type '%s', expected type 'string'", typeName(v))
				}
				s.coll = v.StringValue()
			case "pipeline":
				if v.Type != bson.TypeArray {
					return nil, mongoerr.Newf(mongoerr.TypeMismatch, "BSON field '$unionWith.pipeline' is the wrong type '%s', expected type 'array'", typeName(v))
				}
				p, err := pipelineArg(v, int(mongoerr.TypeMismatch), "$unionWith.pipeline")
				if err != nil {
					return nil, err
				}
				raws = p
			default:
				return nil, mongoerr.Newf(mongoerr.UnknownBSONField, "BSON field '$unionWith.%s' is an unknown field.", el.Key())
			}
		}
	default:
		return nil, mongoerr.Newf(mongoerr.FailedToParse, "the $unionWith stage specification must be an object or string, but found %s", typeName(spec))
	}
	sub, err := pc.child(inUnionWith)
	if err != nil {
		return nil, err
	}
	ss, err := parseStages(sub, raws)
	if err != nil {
		return nil, err
	}
	ss = optimize(ss)
	pl := split(ss, true)
	if s.coll == "" && !pl.source {
		return nil, mongoerr.New(mongoerr.Code(40414), "BSON field '$unionWith.coll' is missing but a required field")
	}
	s.sub = &pl
	lp := split(ss, false)
	s.local = &lp
	return s, nil
}

func (s *stageUnionWith) name() string { return "$unionWith" }

func (s *stageUnionWith) explain() bson.D {
	d := bson.D{}
	if s.coll != "" {
		d = append(d, bson.E{Key: "coll", Value: s.coll})
	}
	if doc, ok := s.spec.DocumentOK(); ok {
		if p, err := doc.LookupErr("pipeline"); err == nil {
			d = append(d, bson.E{Key: "pipeline", Value: p})
		}
	}
	if len(d) == 1 || len(d) == 0 {
		d = append(d, bson.E{Key: "pipeline", Value: bson.A{}})
	}
	return bson.D{{Key: "$unionWith", Value: d}}
}

func (s *stageUnionWith) open(_ context.Context, rc *runCtx, in Source) (Source, error) {
	var other Source
	first := true
	return &funcSource{next: func(ctx context.Context) (bson.Raw, error) {
		if first {
			d, err := in.Next(ctx)
			if err != nil || d != nil {
				return d, err
			}
			first = false
			var src Source
			sp := s.sub
			if len(sp.query.Filter) > 0 && hasExpr(sp.query.Filter, 0) && rc.letMissing() {
				sp = s.local
			}
			if !sp.source {
				q := sp.query
				if len(q.Filter) > 0 {
					q.Let = rc.letDoc()
				}
				q.Collation = rc.opts.Collation
				if src, err = rc.host.Open(ctx, nsOf(rc.opts.DB, s.coll), q); err != nil {
					return nil, err
				}
			}
			sub := *rc
			sub.stats = nil
			sub.depth++
			if other, err = sp.run(ctx, &sub, src); err != nil {
				return nil, err
			}
		}
		return other.Next(ctx)
	}, close: func() {
		in.Close()
		if other != nil {
			other.Close()
		}
	}}, nil
}
