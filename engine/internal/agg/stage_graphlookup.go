package agg

import (
	"context"
	"math"
	"strings"

	"go.mongodb.org/mongo-driver/v2/bson"

	"github.com/formworkdb/formwork/engine/internal/expr"
	"github.com/formworkdb/formwork/engine/internal/match"
	"github.com/formworkdb/formwork/engine/internal/mongoerr"
)

func init() { register("$graphLookup", 0, parseGraphLookup) }

// stageGraphLookup is $graphLookup: a breadth-first search of the
// foreign collection from startWith along connectFromField →
// connectToField, one Query ({connectToField: {$in: frontier}}) per
// level, bounded by maxDepth and by the GraphLookup memory limit (40099).
// A following $unwind of "as" is absorbed. Results come in discovery
// order (mongod's order is unspecified).
// https://www.mongodb.com/docs/v7.0/reference/operator/aggregation/graphLookup/
type stageGraphLookup struct {
	spec       bson.Raw
	from       string
	as         string
	asParts    []string
	fromField  []string
	toField    string
	depthField []string
	maxDepth   int64 // -1: none
	restrict   bson.Raw
	startWith  expr.Expr
	unwind     *stageUnwind
}

// parseGraphLookup parses $graphLookup: 9 for a non-document, 40103 a
// non-string field, 40104 an unknown argument, 40105 a missing required
// field, 40100/40101/40102 a bad maxDepth, 40185 a non-document
// restrictSearchWithMatch (then the filter's own codes).
func parseGraphLookup(pc *parseCtx, spec bson.RawValue) (stage, error) {
	doc, ok := spec.DocumentOK()
	if !ok {
		return nil, mongoerr.Newf(mongoerr.FailedToParse, "the $graphLookup stage specification must be an object, but found %s", typeName(spec))
	}
	s := &stageGraphLookup{spec: doc, maxDepth: -1}
	var fromField string
	for _, el := range mustElems(doc) {
		v := el.Value()
		k := el.Key()
		switch k {
		case "startWith":
			e, err := pc.parseExpr(v, nil)
			if err != nil {
				return nil, err
			}
			s.startWith = e
			continue
		case "maxDepth":
			if !isNumeric(v) {
				return nil, mongoerr.Newf(mongoerr.Code(40100), "maxDepth must be numeric, found type: %s", typeName(v))
			}
			f, _ := decimalToFloat(v)
			n := int64(f)
			if f >= math.MaxInt64 {
				n = math.MaxInt64
			}
			if n < 0 || f < 0 {
				return nil, mongoerr.Newf(mongoerr.Code(40101), "maxDepth requires a nonnegative argument, found: %d", n)
			}
			if float64(n) != f {
				return nil, mongoerr.Newf(mongoerr.Code(40102), "maxDepth could not be represented as a long long: %d", n)
			}
			s.maxDepth = n
			continue
		case "restrictSearchWithMatch":
			rd, ok := v.DocumentOK()
			if !ok {
				return nil, mongoerr.Newf(mongoerr.Code(40185), "restrictSearchWithMatch must be an object, found %s", typeName(v))
			}
			if _, err := match.Compile(rd); err != nil {
				return nil, err
			}
			s.restrict = rd
			continue
		case "from", "as", "connectFromField", "connectToField", "depthField":
			if v.Type != bson.TypeString {
				if k == "from" && v.Type == bson.TypeEmbeddedDocument {
					db, _ := v.Document().Lookup("db").StringValueOK()
					coll, _ := v.Document().Lookup("coll").StringValueOK()
					return nil, mongoerr.Newf(mongoerr.FailedToParse, "$graphLookup with syntax {from: {db:<>, coll:<>},..} is not supported for db: %s and coll: %s", db, coll)
				}
				return nil, mongoerr.Newf(mongoerr.Code(40103), "expected string as argument for %s, found: %s", k, typeName(v))
			}
		default:
			return nil, mongoerr.Newf(mongoerr.Code(40104), "Unknown argument to $graphLookup: %s", k)
		}
		str := v.StringValue()
		if k != "from" && str != "" {
			if err := validatePath(str); err != nil {
				return nil, err
			}
		}
		switch k {
		case "from":
			s.from = str
		case "as":
			s.as = str
		case "connectFromField":
			fromField = str
		case "connectToField":
			s.toField = str
		case "depthField":
			s.depthField = strings.Split(str, ".")
		}
	}
	if s.from == "" || s.as == "" || s.startWith == nil || fromField == "" || s.toField == "" {
		return nil, mongoerr.New(mongoerr.Code(40105), "$graphLookup requires 'from', 'as', 'startWith', 'connectFromField', and 'connectToField' to be specified.")
	}
	s.asParts = strings.Split(s.as, ".")
	s.fromField = strings.Split(fromField, ".")
	return s, nil
}

func (s *stageGraphLookup) name() string { return "$graphLookup" }

func (s *stageGraphLookup) explain() bson.D {
	d := bson.D{}
	for _, el := range mustElems(s.spec) {
		d = append(d, bson.E{Key: el.Key(), Value: el.Value()})
	}
	if s.unwind != nil {
		u := bson.D{{Key: "preserveNullAndEmptyArrays", Value: s.unwind.preserve}}
		if s.unwind.index != "" {
			u = append(u, bson.E{Key: "includeArrayIndex", Value: s.unwind.index})
		}
		d = append(d, bson.E{Key: "unwinding", Value: u})
	}
	return bson.D{{Key: "$graphLookup", Value: d}}
}

// search runs the breadth-first search for one input document.
func (s *stageGraphLookup) search(ctx context.Context, rc *runCtx, c *expr.Ctx, doc bson.Raw) ([]bson.Raw, error) {
	lim := limit(rc.opts.Limits.GraphLookup)
	c.SetRoot(doc)
	start, err := s.startWith.Eval(c)
	if err != nil {
		return nil, err
	}
	frontier := map[string]bson.RawValue{}
	var bytes int64
	addFrontier := func(v bson.RawValue) {
		if v.Type == 0 {
			return
		}
		k := keyOfWith(v, rc.opts.Collation)
		if _, ok := frontier[k]; !ok {
			frontier[k] = v
			bytes += valueSize(v)
		}
	}
	if start.Type == bson.TypeArray {
		for _, v := range expr.Values(start) {
			addFrontier(v)
		}
	} else {
		addFrontier(start)
	}
	visited := map[string]bool{}
	var visitedBytes int64
	var results []bson.Raw
	ns := nsOf(rc.opts.DB, s.from)
	for depth := int64(0); len(frontier) > 0 && (s.maxDepth < 0 || depth <= s.maxDepth); depth++ {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		in := bson.A{}
		nullish := false
		for _, v := range frontier {
			in = append(in, v)
			nullish = nullish || v.Type == bson.TypeNull || v.Type == bson.TypeUndefined
		}
		cond := bson.D{{Key: s.toField, Value: bson.D{{Key: "$in", Value: in}}}}
		and := bson.A{}
		if s.restrict != nil {
			and = append(and, s.restrict)
		}
		and = append(and, cond)
		if nullish {
			and = append(and, bson.D{{Key: s.toField, Value: bson.D{{Key: "$exists", Value: true}}}})
		}
		filter, err := bson.Marshal(bson.D{{Key: "$and", Value: and}})
		if err != nil {
			return nil, err
		}
		src, err := rc.host.Open(ctx, ns, Query{Filter: filter, Collation: rc.opts.Collation})
		if err != nil {
			return nil, err
		}
		found, err := drain(ctx, src)
		if err != nil {
			return nil, err
		}
		frontier = map[string]bson.RawValue{}
		bytes = visitedBytes
		for _, d := range found {
			id, err := d.LookupErr("_id")
			if err != nil {
				return nil, mongoerr.Newf(mongoerr.Code(40271), "Documents in the '%s' namespace must contain an _id for de-duplication in $graphLookup", ns)
			}
			k := keyOf(id)
			if visited[k] {
				continue
			}
			visited[k] = true
			out := d
			if s.depthField != nil {
				out = setPath(d, s.depthField, expr.Int64(depth))
			}
			results = append(results, out)
			visitedBytes += int64(len(out)) + int64(len(k))
			bytes += int64(len(out)) + int64(len(k))
			for _, v := range pathValues(d, s.fromField) {
				addFrontier(v)
			}
			if bytes > lim {
				return nil, mongoerr.Newf(mongoerr.Code(40099), "$graphLookup reached maximum memory consumption of %d bytes", lim)
			}
		}
	}
	return results, nil
}

func (s *stageGraphLookup) open(_ context.Context, rc *runCtx, in Source) (Source, error) {
	c := rc.exprCtx()
	var pending []bson.Raw
	return &funcSource{next: func(ctx context.Context) (bson.Raw, error) {
		for len(pending) == 0 {
			d, err := in.Next(ctx)
			if err != nil || d == nil {
				return nil, err
			}
			results, err := s.search(ctx, rc, c, d)
			if err != nil {
				return nil, err
			}
			if s.unwind == nil {
				vals := make([]bson.RawValue, len(results))
				for i, r := range results {
					vals[i] = expr.Doc(r)
				}
				out := setPath(d, s.asParts, expr.Array(vals))
				if len(out) > expr.MaxBSONSize {
					return nil, mongoerr.New(mongoerr.BSONObjectTooLarge, "BSONObj size is invalid: the $graphLookup result exceeds the maximum BSON size")
				}
				return out, nil
			}
			l := &stageLookup{asParts: s.asParts, unwind: s.unwind}
			pending = l.unwindResults(d, results)
		}
		d := pending[0]
		pending = pending[1:]
		return d, nil
	}, close: in.Close}, nil
}
