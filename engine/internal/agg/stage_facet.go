package agg

import (
	"context"

	"go.mongodb.org/mongo-driver/v2/bson"

	"github.com/formworkdb/formwork/engine/internal/expr"
	"github.com/formworkdb/formwork/engine/internal/mongoerr"
)

func init() { register("$facet", flagNoFacet, parseFacet) }

// stageFacet is {$facet: {name: [stages], …}}: one document whose fields
// are the results of each sub-pipeline over the same buffered input.
// https://www.mongodb.com/docs/v7.0/reference/operator/aggregation/facet/
type stageFacet struct {
	spec  bson.Raw
	names []string
	subs  []*plan
}

// parseFacet parses $facet: 40169 for a non-document or empty spec,
// 40170 a non-array facet, 40171 a non-document stage, the FieldPath
// codes for a bad facet name, 40600 for stages not allowed inside.
func parseFacet(pc *parseCtx, spec bson.RawValue) (stage, error) {
	doc, ok := spec.DocumentOK()
	if !ok || len(mustElems(doc)) == 0 {
		return nil, mongoerr.Newf(mongoerr.Code(40169), "the $facet specification must be a non-empty object, but found: %s", showValue(spec))
	}
	s := &stageFacet{spec: doc}
	for _, el := range mustElems(doc) {
		name := el.Key()
		if err := expr.ValidateFieldName(name); err != nil {
			return nil, err
		}
		v := el.Value()
		if v.Type != bson.TypeArray {
			return nil, mongoerr.Newf(mongoerr.Code(40170), "arguments to $facet must be arrays, %s is type %s", name, typeName(v))
		}
		var raws []bson.Raw
		for _, sv := range expr.Values(v) {
			d, ok := sv.DocumentOK()
			if !ok {
				return nil, mongoerr.Newf(mongoerr.Code(40171), "all elements of arrays in $facet spec must be non-empty objects, argument contained an element of type %s: %s", typeName(sv), showValue(sv))
			}
			raws = append(raws, d)
		}
		sub, err := pc.child(inFacet)
		if err != nil {
			return nil, err
		}
		ss, err := parseStages(sub, raws)
		if err != nil {
			return nil, err
		}
		pl := split(optimize(ss), false)
		s.names = append(s.names, name)
		s.subs = append(s.subs, &pl)
	}
	return s, nil
}

func (s *stageFacet) name() string    { return "$facet" }
func (s *stageFacet) explain() bson.D { return bson.D{{Key: "$facet", Value: s.spec}} }

func (s *stageFacet) open(_ context.Context, rc *runCtx, in Source) (Source, error) {
	done := false
	return &funcSource{next: func(ctx context.Context) (bson.Raw, error) {
		if done {
			return nil, nil
		}
		done = true
		var buf []bson.Raw
		var bytes int64
		for {
			d, err := in.Next(ctx)
			if err != nil {
				return nil, err
			}
			if d == nil {
				break
			}
			buf = append(buf, d)
			bytes += docSize(d)
			if bytes > 100*1024*1024 {
				return nil, mongoerr.New(mongoerr.ExceededMemoryLimit, "$facet exceeded the memory limit of 104857600 bytes")
			}
		}
		b := expr.NewDocBuilder()
		for i, sub := range s.subs {
			src, err := sub.run(ctx, rc.sub(), NewSliceSource(buf))
			if err != nil {
				return nil, err
			}
			docs, err := drain(ctx, src)
			if err != nil {
				return nil, err
			}
			ab := expr.NewArrayBuilder(len(docs))
			for _, d := range docs {
				ab.Append(expr.Doc(d))
				if ab.Size() > expr.MaxBSONSize {
					return nil, mongoerr.Newf(mongoerr.BSONObjectTooLarge, "document constructed by $facet is %d bytes, which exceeds the limit of %d bytes", ab.Size(), expr.MaxBSONSize)
				}
			}
			b.Append(s.names[i], ab.Value())
		}
		if err := checkSize(b); err != nil {
			return nil, err
		}
		return b.Doc(), nil
	}, close: in.Close}, nil
}
