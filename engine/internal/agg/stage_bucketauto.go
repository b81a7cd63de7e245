package agg

import (
	"context"
	"math"

	"go.mongodb.org/mongo-driver/v2/bson"

	"github.com/formworkdb/formwork/engine/internal/bsonkit"
	"github.com/formworkdb/formwork/engine/internal/expr"
	"github.com/formworkdb/formwork/engine/internal/mongoerr"
)

func init() { register("$bucketAuto", 0, parseBucketAuto) }

// stageBucketAuto is {$bucketAuto: {groupBy, buckets, output,
// granularity}}: the documents sorted by groupBy and cut into about
// equal buckets, equal values kept together, the last bucket taking the
// rest; each output is {_id: {min, max}, …accumulators}.
// https://www.mongodb.com/docs/v7.0/reference/operator/aggregation/bucketAuto/
type stageBucketAuto struct {
	spec    bson.Raw
	groupBy expr.Expr
	n       int
	round   *rounder
	fields  []string
	accs    []*accumSpec
	dep     expr.Deps
}

// parseBucketAuto parses $bucketAuto: 40240 not a document, 40245 an
// unknown option, 40239 a bad groupBy, 40241 a non-numeric buckets,
// 40242 not a 32-bit integer, 40243 not positive, 40244 output not a
// document, 40261 a non-string granularity, 40246 missing groupBy or
// buckets.
func parseBucketAuto(pc *parseCtx, spec bson.RawValue) (stage, error) {
	doc, ok := spec.DocumentOK()
	if !ok {
		return nil, mongoerr.Newf(mongoerr.Code(40240), "The argument to $bucketAuto must be an object, but found type: %s.", typeName(spec))
	}
	s := &stageBucketAuto{spec: doc}
	var output bson.Raw
	haveN := false
	for _, el := range mustElems(doc) {
		v := el.Value()
		switch el.Key() {
		case "groupBy":
			if !(v.Type == bson.TypeString && len(v.StringValue()) > 0 && v.StringValue()[0] == '$') && !isExprDoc(v) {
				return nil, mongoerr.Newf(mongoerr.Code(40239), "The $bucketAuto 'groupBy' field must be defined as a $-prefixed path or an expression object, but found: %s.", showValue(v))
			}
			e, err := pc.parseExpr(v, &s.dep)
			if err != nil {
				return nil, err
			}
			s.groupBy = e
		case "buckets":
			if !isNumeric(v) {
				return nil, mongoerr.Newf(mongoerr.Code(40241), "The $bucketAuto 'buckets' field must be a numeric value, but found type: %s.", typeName(v))
			}
			f, _ := decimalToFloat(v)
			if f != math.Trunc(f) || f > math.MaxInt32 || f < math.MinInt32 {
				return nil, mongoerr.Newf(mongoerr.Code(40242), "The $bucketAuto 'buckets' field must be representable as a 32-bit integer, but found %s", showValue(expr.Double(f)))
			}
			if f <= 0 {
				return nil, mongoerr.Newf(mongoerr.Code(40243), "The $bucketAuto 'buckets' field must be greater than 0, but found: %d.", int64(f))
			}
			s.n, haveN = int(f), true
		case "output":
			od, ok := v.DocumentOK()
			if !ok {
				return nil, mongoerr.Newf(mongoerr.Code(40244), "The $bucketAuto 'output' field must be an object, but found type: %s.", typeName(v))
			}
			output = od
		case "granularity":
			if v.Type != bson.TypeString {
				return nil, mongoerr.Newf(mongoerr.Code(40261), "The $bucketAuto 'granularity' field must be a string, but found type: %s.", typeName(v))
			}
			r, err := newRounder(v.StringValue())
			if err != nil {
				return nil, err
			}
			s.round = r
		default:
			return nil, mongoerr.Newf(mongoerr.Code(40245), "Unrecognized option to $bucketAuto: %s.", el.Key())
		}
	}
	if s.groupBy == nil || !haveN {
		return nil, mongoerr.New(mongoerr.Code(40246), "$bucketAuto requires 'groupBy' and 'buckets' to be specified")
	}
	if output == nil {
		b := expr.NewDocBuilder()
		cb := expr.NewDocBuilder()
		cb.Append("$sum", expr.Int32(1))
		b.Append("count", expr.Doc(cb.Doc()))
		output = b.Doc()
	}
	for _, el := range mustElems(output) {
		a, err := parseAccumField(pc, el.Key(), el.Value())
		if err != nil {
			return nil, err
		}
		s.fields = append(s.fields, el.Key())
		s.accs = append(s.accs, a)
		s.dep.Paths = append(s.dep.Paths, a.deps.Paths...)
		s.dep.Whole = s.dep.Whole || a.deps.Whole
	}
	return s, nil
}

func (s *stageBucketAuto) name() string    { return "$bucketAuto" }
func (s *stageBucketAuto) explain() bson.D { return bson.D{{Key: "$bucketAuto", Value: s.spec}} }

func (s *stageBucketAuto) deps(d *depSet) bool {
	d.addExpr(&s.dep)
	return true
}

// bucket is one $bucketAuto bucket being built.
type bucket struct {
	min, max bson.RawValue
	accs     []accumulator
}

func (s *stageBucketAuto) open(_ context.Context, rc *runCtx, in Source) (Source, error) {
	var out Source
	st := rc.st
	return &funcSource{next: func(ctx context.Context) (bson.Raw, error) {
		if out == nil {
			docs, err := s.run(ctx, rc, in, st)
			if err != nil {
				return nil, err
			}
			out = NewSliceSource(docs)
		}
		return out.Next(ctx)
	}, close: in.Close}, nil
}

// keyed pairs a document with its groupBy value, wrapped as {k, d} so
// the sorter can spill it.
func keyedDoc(k bson.RawValue, d bson.Raw) bson.Raw {
	b := expr.NewDocBuilder()
	b.Append("k", k)
	b.Append("d", expr.Doc(d))
	return b.Doc()
}

func (s *stageBucketAuto) run(ctx context.Context, rc *runCtx, in Source, st *stageStats) ([]bson.Raw, error) {
	c := rc.exprCtx()
	srt := newSorter(rc, func(a, b bson.Raw) bool {
		return bsonkit.CompareWith(a.Lookup("k"), b.Lookup("k"), c.Collation) < 0
	}, limit(rc.opts.Limits.BucketAuto), "$bucketAuto")
	srt.st = st
	defer srt.close()
	n := 0
	for {
		d, err := in.Next(ctx)
		if err != nil {
			return nil, err
		}
		if d == nil {
			break
		}
		c.SetRoot(d)
		k, err := s.groupBy.Eval(c)
		if err != nil {
			return nil, err
		}
		if k.Type == 0 {
			k = expr.Null()
		}
		if err := srt.add(keyedDoc(k, d)); err != nil {
			return nil, err
		}
		n++
	}
	if n == 0 {
		return nil, nil
	}
	sorted, err := srt.finish()
	if err != nil {
		return nil, err
	}
	approx := int(math.Round(float64(n) / float64(s.n)))
	if approx < 1 {
		approx = 1
	}
	nc := rc.exprCtx()
	newBucket := func(k bson.RawValue) (*bucket, error) {
		b := &bucket{min: k, max: k, accs: make([]accumulator, len(s.accs))}
		for i, a := range s.accs {
			acc, err := a.make(nc)
			if err != nil {
				return nil, err
			}
			b.accs[i] = acc
		}
		return b, nil
	}
	add := func(b *bucket, kd bson.Raw) error {
		k := kd.Lookup("k")
		b.max = k
		c.SetRoot(kd.Lookup("d").Document())
		for _, a := range b.accs {
			if err := a.process(c); err != nil {
				return err
			}
		}
		return nil
	}
	var buckets []*bucket
	next, err := sorted.Next(ctx)
	if err != nil {
		return nil, err
	}
	advance := func(b *bucket) error {
		if err := add(b, next); err != nil {
			return err
		}
		next, err = sorted.Next(ctx)
		return err
	}
	for i := 0; i < s.n && next != nil; i++ {
		b, err := newBucket(next.Lookup("k"))
		if err != nil {
			return nil, err
		}
		if err := advance(b); err != nil {
			return nil, err
		}
		if i == s.n-1 {
			for next != nil {
				if err := advance(b); err != nil {
					return nil, err
				}
			}
		} else {
			for j := 1; j < approx && next != nil; j++ {
				if err := advance(b); err != nil {
					return nil, err
				}
			}
			if s.round != nil {
				up, err := s.round.roundUp(b.max)
				if err != nil {
					return nil, err
				}
				for next != nil && bsonkit.Compare(up, next.Lookup("k")) > 0 {
					if err := advance(b); err != nil {
						return nil, err
					}
				}
				if next != nil {
					b.max = up
				}
			} else {
				for next != nil && bsonkit.CompareWith(b.max, next.Lookup("k"), c.Collation) == 0 {
					if err := advance(b); err != nil {
						return nil, err
					}
				}
			}
		}
		if len(buckets) > 0 {
			prev := buckets[len(buckets)-1]
			if s.round != nil {
				if f, _ := decimalToFloat(prev.max); f == 0 {
					if prev.max, err = s.round.roundDown(b.min); err != nil {
						return nil, err
					}
				}
				b.min = prev.max
			} else {
				prev.max = b.min
			}
		}
		buckets = append(buckets, b)
	}
	if len(buckets) > 0 && s.round != nil {
		first, last := buckets[0], buckets[len(buckets)-1]
		if first.min, err = s.round.roundDown(first.min); err != nil {
			return nil, err
		}
		if last.max, err = s.round.roundUp(last.max); err != nil {
			return nil, err
		}
	}
	out := make([]bson.Raw, 0, len(buckets))
	for _, b := range buckets {
		id := expr.NewDocBuilder()
		id.Append("min", b.min)
		id.Append("max", b.max)
		db := expr.NewDocBuilder()
		db.Append("_id", expr.Doc(id.Doc()))
		for i, a := range b.accs {
			v, err := a.result()
			if err != nil {
				return nil, err
			}
			db.Append(s.fields[i], v)
		}
		out = append(out, db.Doc())
	}
	return out, nil
}
