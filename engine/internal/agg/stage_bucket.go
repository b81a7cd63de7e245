package agg

import (
	"context"
	"sort"

	"go.mongodb.org/mongo-driver/v2/bson"

	"github.com/formworkdb/formwork/engine/internal/bsonkit"
	"github.com/formworkdb/formwork/engine/internal/expr"
	"github.com/formworkdb/formwork/engine/internal/mongoerr"
)

func init() { register("$bucket", 0, parseBucket) }

// stageBucket is {$bucket: {groupBy, boundaries, default, output}}: a
// $group whose key is the lower boundary of the range [b[i], b[i+1])
// the groupBy value falls in (or the default), sorted by that key.
// https://www.mongodb.com/docs/v7.0/reference/operator/aggregation/bucket/
type stageBucket struct {
	spec       bson.Raw
	groupBy    expr.Expr
	groupByRaw bson.RawValue // as written, for explain
	output     bson.Raw      // the output specification (count by default)
	bounds     []bson.RawValue
	def        bson.RawValue // Type 0: no default
	fields     []string
	accs       []*accumSpec
	dep        expr.Deps
	groupStage *stageGroup
}

// parseBucket parses $bucket with mongod's codes: 40201 not a document,
// 40197 an unknown option, 40202 a bad groupBy, 40200 boundaries not an
// array, 40191 a non-constant boundary, 40192 fewer than two, 40193
// mixed types, 40194 unsorted, 40195 a non-constant default, 40199 a
// default inside the range, 40196 output not a document, 40198 missing
// groupBy or boundaries.
func parseBucket(pc *parseCtx, spec bson.RawValue) (stage, error) {
	doc, ok := spec.DocumentOK()
	if !ok {
		return nil, mongoerr.Newf(mongoerr.Code(40201), "Argument to $bucket stage must be an object, but found type: %s.", typeName(spec))
	}
	s := &stageBucket{spec: doc}
	var haveBounds bool
	var output bson.Raw
	for _, el := range mustElems(doc) {
		v := el.Value()
		switch el.Key() {
		case "groupBy":
			if !(v.Type == bson.TypeString && len(v.StringValue()) > 0 && v.StringValue()[0] == '$') && v.Type != bson.TypeEmbeddedDocument {
				return nil, mongoerr.Newf(mongoerr.Code(40202), "The $bucket 'groupBy' field must be defined as a $-prefixed path or an expression, but found: %s.", showValue(v))
			}
			e, err := pc.parseExpr(v, &s.dep)
			if err != nil {
				return nil, err
			}
			s.groupBy, s.groupByRaw = e, v
		case "boundaries":
			if v.Type != bson.TypeArray {
				return nil, mongoerr.Newf(mongoerr.Code(40200), "The $bucket 'boundaries' field must be an array, but found type: %s.", typeName(v))
			}
			for _, bv := range expr.Values(v) {
				e, err := pc.parseExpr(bv, nil)
				if err != nil {
					return nil, err
				}
				c, ok := expr.IsConst(e)
				if !ok {
					return nil, mongoerr.Newf(mongoerr.Code(40191), "The $bucket 'boundaries' field must be an array of constant values, but found value: %s.", showValue(bv))
				}
				s.bounds = append(s.bounds, c)
			}
			haveBounds = true
		case "default":
			e, err := pc.parseExpr(v, nil)
			if err != nil {
				return nil, err
			}
			c, ok := expr.IsConst(e)
			if !ok {
				return nil, mongoerr.Newf(mongoerr.Code(40195), "The $bucket 'default' field must be a constant expression, but found: %s.", showValue(v))
			}
			s.def = c
			if s.def.Type == 0 {
				s.def = expr.Null()
			}
		case "output":
			od, ok := v.DocumentOK()
			if !ok {
				return nil, mongoerr.Newf(mongoerr.Code(40196), "The $bucket 'output' field must be an object, but found type: %s.", typeName(v))
			}
			output = od
		default:
			return nil, mongoerr.Newf(mongoerr.Code(40197), "Unrecognized option to $bucket: %s.", el.Key())
		}
	}
	if s.groupBy == nil || !haveBounds {
		return nil, mongoerr.New(mongoerr.Code(40198), "$bucket requires 'groupBy' and 'boundaries' to be specified.")
	}
	if len(s.bounds) < 2 {
		return nil, mongoerr.Newf(mongoerr.Code(40192), "The $bucket 'boundaries' field must have at least 2 values, but found %d value(s).", len(s.bounds))
	}
	for i := 1; i < len(s.bounds); i++ {
		a, b := s.bounds[i-1], s.bounds[i]
		if bsonkit.CanonicalType(a.Type) != bsonkit.CanonicalType(b.Type) {
			return nil, mongoerr.Newf(mongoerr.Code(40193), "All values in the the 'boundaries' option to $bucket must have the same type. Found conflicting types %s and %s.", typeName(a), typeName(b))
		}
		if bsonkit.CompareWith(a, b, pc.opts.Collation) >= 0 {
			return nil, mongoerr.Newf(mongoerr.Code(40194), "The 'boundaries' option to $bucket must be sorted, but elements %d and %d are not in ascending order (%s is not less than %s).", i-1, i, showValue(a), showValue(b))
		}
	}
	if s.def.Type != 0 && bsonkit.CanonicalType(s.def.Type) == bsonkit.CanonicalType(s.bounds[0].Type) &&
		bsonkit.CompareWith(s.def, s.bounds[0], pc.opts.Collation) >= 0 && bsonkit.CompareWith(s.def, s.bounds[len(s.bounds)-1], pc.opts.Collation) < 0 {
		return nil, mongoerr.New(mongoerr.Code(40199), "The $bucket 'default' field must be less than the lowest boundary or greater than or equal to the highest boundary.")
	}
	if output == nil {
		b := expr.NewDocBuilder()
		cb := expr.NewDocBuilder()
		cb.Append("$sum", expr.Int32(1))
		b.Append("count", expr.Doc(cb.Doc()))
		output = b.Doc()
	}
	s.output = output
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
	s.groupStage = &stageGroup{spec: doc, id: &bucketKey{s: s}, fields: s.fields, accs: s.accs}
	return s, nil
}

func (s *stageBucket) name() string    { return "$bucket" }
func (s *stageBucket) explain() bson.D { return s.explainAll()[1] }

// explainAll shows $bucket as mongod desugars it: a $group whose _id is a
// $switch over the boundaries, then a $sort on _id.
func (s *stageBucket) explainAll() []bson.D {
	branches := expr.NewArrayBuilder(len(s.bounds) - 1)
	for i := 0; i+1 < len(s.bounds); i++ {
		gte := expr.NewDocBuilder()
		gte.Append("$gte", expr.Array([]bson.RawValue{s.groupByRaw, s.bounds[i]}))
		lt := expr.NewDocBuilder()
		lt.Append("$lt", expr.Array([]bson.RawValue{s.groupByRaw, s.bounds[i+1]}))
		and := expr.NewDocBuilder()
		and.Append("$and", expr.Array([]bson.RawValue{expr.Doc(gte.Doc()), expr.Doc(lt.Doc())}))
		br := expr.NewDocBuilder()
		br.Append("case", expr.Doc(and.Doc()))
		br.Append("then", s.bounds[i])
		branches.Append(expr.Doc(br.Doc()))
	}
	sw := expr.NewDocBuilder()
	sw.Append("branches", branches.Value())
	if s.def.Type != 0 {
		sw.Append("default", s.def)
	}
	id := expr.NewDocBuilder()
	id.Append("$switch", expr.Doc(sw.Doc()))
	g := expr.NewDocBuilder()
	g.Append("_id", expr.Doc(id.Doc()))
	for _, el := range mustElems(s.output) {
		g.Append(el.Key(), el.Value())
	}
	return []bson.D{
		{{Key: "$group", Value: explainGroupSpec(g.Doc())}},
		{{Key: "$sort", Value: bson.D{{Key: "sortKey", Value: bson.D{{Key: "_id", Value: 1}}}}}},
	}
}

func (s *stageBucket) deps(d *depSet) bool {
	d.addExpr(&s.dep)
	return true
}

// bucketKey evaluates a document's bucket: the lower boundary of its
// range, or the default; 40066 when neither applies.
type bucketKey struct{ s *stageBucket }

func (k *bucketKey) Eval(c *expr.Ctx) (bson.RawValue, error) {
	s := k.s
	v, err := s.groupBy.Eval(c)
	if err != nil {
		return v, err
	}
	if v.Type == 0 {
		v = expr.Null()
	}
	lo, hi := s.bounds[0], s.bounds[len(s.bounds)-1]
	if bsonkit.CanonicalType(v.Type) == bsonkit.CanonicalType(lo.Type) && bsonkit.CompareWith(v, lo, c.Collation) >= 0 && bsonkit.CompareWith(v, hi, c.Collation) < 0 {
		i := sort.Search(len(s.bounds), func(i int) bool { return bsonkit.CompareWith(s.bounds[i], v, c.Collation) > 0 })
		return s.bounds[i-1], nil
	}
	if s.def.Type == 0 {
		return bson.RawValue{}, mongoerr.New(mongoerr.Code(40066), "$switch could not find a matching branch for an input, and no default was specified.")
	}
	return s.def, nil
}

func (s *stageBucket) open(ctx context.Context, rc *runCtx, in Source) (Source, error) {
	g, err := s.groupStage.open(ctx, rc, in)
	if err != nil {
		return nil, err
	}
	docs, err := drain(ctx, g)
	if err != nil {
		return nil, err
	}
	sort.SliceStable(docs, func(i, j int) bool {
		return bsonkit.CompareWith(docs[i].Lookup("_id"), docs[j].Lookup("_id"), rc.opts.Collation) < 0
	})
	return NewSliceSource(docs), nil
}
