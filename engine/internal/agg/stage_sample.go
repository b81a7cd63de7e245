package agg

import (
	"context"
	"math/rand/v2"

	"go.mongodb.org/mongo-driver/v2/bson"

	"github.com/formworkdb/formwork/engine/internal/mongoerr"
)

func init() { register("$sample", 0, parseSample) }

// stageSample is {$sample: {size: n}}: n documents chosen at random
// (reservoir sampling over the input; a leading $sample is handed to the
// host as Query.Sample). https://www.mongodb.com/docs/v7.0/reference/operator/aggregation/sample/
type stageSample struct{ size int64 }

// parseSample parses $sample: 28745 for a non-document, 28748 an unknown
// field, 28746 a non-numeric size, 28747 a negative size, 28749 no size.
func parseSample(_ *parseCtx, spec bson.RawValue) (stage, error) {
	doc, ok := spec.DocumentOK()
	if !ok {
		return nil, mongoerr.New(mongoerr.Code(28745), "the $sample stage specification must be an object")
	}
	s := &stageSample{size: -1}
	for _, el := range mustElems(doc) {
		if el.Key() != "size" {
			return nil, mongoerr.Newf(mongoerr.Code(28748), "unrecognized option to $sample: %s", el.Key())
		}
		v := el.Value()
		if !isNumeric(v) {
			return nil, mongoerr.New(mongoerr.Code(28746), "size argument to $sample must be a number")
		}
		f, _ := decimalToFloat(v)
		if f < 0 {
			return nil, mongoerr.New(mongoerr.Code(28747), "size argument to $sample must not be negative")
		}
		s.size = int64(f)
	}
	if s.size < 0 {
		return nil, mongoerr.New(mongoerr.Code(28749), "$sample stage must specify a size")
	}
	return s, nil
}

func (s *stageSample) name() string { return "$sample" }

func (s *stageSample) explain() bson.D {
	return bson.D{{Key: "$sample", Value: bson.D{{Key: "size", Value: s.size}}}}
}

func (s *stageSample) deps(d *depSet) bool { return false }

func (s *stageSample) open(_ context.Context, rc *runCtx, in Source) (Source, error) {
	var out Source
	return &funcSource{next: func(ctx context.Context) (bson.Raw, error) {
		if out == nil {
			var res []bson.Raw
			var bytes int64
			lim := limit(rc.opts.Limits.Sort)
			n := int64(0)
			for {
				d, err := in.Next(ctx)
				if err != nil {
					return nil, err
				}
				if d == nil {
					break
				}
				n++
				if int64(len(res)) < s.size {
					res = append(res, d)
					bytes += docSize(d)
					if bytes > lim {
						return nil, errMemory("$sample", lim)
					}
				} else if j := rand.Int64N(n); j < s.size {
					res[j] = d
				}
			}
			rand.Shuffle(len(res), func(i, j int) { res[i], res[j] = res[j], res[i] })
			out = NewSliceSource(res)
		}
		return out.Next(ctx)
	}, close: in.Close}, nil
}
