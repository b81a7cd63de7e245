package agg

import (
	"context"
	"strings"

	"go.mongodb.org/mongo-driver/v2/bson"

	"github.com/formworkdb/formwork/engine/internal/expr"
	"github.com/formworkdb/formwork/engine/internal/mongoerr"
)

func init() { register("$lookup", 0, parseLookup) }

// stageLookup is $lookup: for each input document, the documents of the
// foreign collection that match (localField/foreignField equality with
// array semantics, a sub-pipeline with let variables, or both) as an
// array in the "as" field. A following $unwind of "as" is absorbed.
// Each input document becomes one Query on the foreign collection, so
// the host uses its indexes.
// https://www.mongodb.com/docs/v7.0/reference/operator/aggregation/lookup/
type stageLookup struct {
	spec         bson.Raw
	from         string // "" when the pipeline starts with $documents
	as           string
	asParts      []string
	localField   string
	localParts   []string
	foreign      string
	let          *letDefs
	sub          *plan
	local        *plan // sub without pushdown, for let values the Query cannot carry
	hasPipeline  bool
	unwind       *stageUnwind
	hasLocalJoin bool
}

// parseLookup parses $lookup; malformed specifications fail with
// FailedToParse (9) as in mongod, sub-pipeline stages with their own
// codes and 51047 for stages not allowed inside $lookup.
func parseLookup(pc *parseCtx, spec bson.RawValue) (stage, error) {
	doc, ok := spec.DocumentOK()
	if !ok {
		return nil, mongoerr.Newf(mongoerr.FailedToParse, "the $lookup stage specification must be an object, but found %s", typeName(spec))
	}
	s := &stageLookup{spec: doc}
	var pipeline []bson.Raw
	var let bson.Raw
	haveLocal, haveForeign := false, false
	for _, el := range mustElems(doc) {
		v := el.Value()
		k := el.Key()
		switch k {
		case "from":
			switch v.Type {
			case bson.TypeString:
				s.from = v.StringValue()
			case bson.TypeEmbeddedDocument:
				db, _ := v.Document().Lookup("db").StringValueOK()
				coll, _ := v.Document().Lookup("coll").StringValueOK()
				return nil, mongoerr.Newf(mongoerr.FailedToParse, "$lookup with syntax {from: {db:<>, coll:<>},..} is not supported for db: %s and coll: %s", db, coll)
			default:
				return nil, mongoerr.Newf(mongoerr.FailedToParse, "$lookup 'from' field must be a string or an object, but found %s", typeName(v))
			}
			if s.from == "" {
				return nil, mongoerr.New(mongoerr.InvalidNamespace, "invalid $lookup namespace: "+pc.opts.DB+".")
			}
		case "as", "localField", "foreignField":
			if v.Type != bson.TypeString {
				return nil, mongoerr.Newf(mongoerr.FailedToParse, "$lookup argument '%s: %s' must be a string, is type %s", k, showValue(v), typeName(v))
			}
			str := v.StringValue()
			if err := validatePath(str); err != nil {
				return nil, err
			}
			switch k {
			case "as":
				s.as = str
			case "localField":
				s.localField, haveLocal = str, true
			case "foreignField":
				s.foreign, haveForeign = str, true
			}
		case "let":
			ld, ok := v.DocumentOK()
			if !ok {
				return nil, mongoerr.Newf(mongoerr.FailedToParse, "$lookup argument 'let: %s' must be an object, is type %s", showValue(v), typeName(v))
			}
			let = ld
		case "pipeline":
			p, err := pipelineArg(v, int(mongoerr.FailedToParse), "$lookup argument 'pipeline'")
			if err != nil {
				return nil, err
			}
			pipeline, s.hasPipeline = p, true
		default:
			return nil, mongoerr.Newf(mongoerr.FailedToParse, "unknown argument to $lookup: %s", k)
		}
	}
	if s.as == "" {
		return nil, mongoerr.New(mongoerr.FailedToParse, "must specify 'as' field for a $lookup")
	}
	if haveLocal != haveForeign {
		return nil, mongoerr.New(mongoerr.FailedToParse, "$lookup requires both or neither of 'localField' and 'foreignField' to be specified")
	}
	s.hasLocalJoin = haveLocal
	if !s.hasPipeline && !haveLocal {
		return nil, mongoerr.New(mongoerr.FailedToParse, "$lookup requires either 'pipeline' or both 'localField' and 'foreignField' to be specified")
	}
	if let != nil && !s.hasPipeline {
		return nil, mongoerr.New(mongoerr.FailedToParse, "$lookup with 'let' must also specify 'pipeline'")
	}
	s.asParts = strings.Split(s.as, ".")
	if haveLocal {
		s.localParts = strings.Split(s.localField, ".")
	}
	sub, err := pc.child(inLookup)
	if err != nil {
		return nil, err
	}
	if let != nil {
		if s.let, err = parseLetDefs(pc, sub, let); err != nil {
			return nil, err
		}
	}
	ss, err := parseStages(sub, pipeline)
	if err != nil {
		return nil, err
	}
	ss = optimize(ss)
	pl := split(ss, true)
	if s.from == "" && !pl.source {
		return nil, mongoerr.New(mongoerr.FailedToParse, "must specify 'from' field for a $lookup")
	}
	s.sub = &pl
	lp := split(ss, false)
	s.local = &lp
	return s, nil
}

// validatePath checks a dotted field path as FieldPath does.
func validatePath(p string) error {
	if p == "" {
		return mongoerr.New(mongoerr.Code(40352), "FieldPath cannot be constructed with empty string")
	}
	if p[0] == '$' {
		return mongoerr.Newf(mongoerr.Code(16410), "FieldPath field names may not start with '$'. Consider using $getField or $setField.")
	}
	for _, part := range strings.Split(p, ".") {
		if err := expr.ValidateFieldName(part); err != nil {
			return err
		}
	}
	return nil
}

func (s *stageLookup) name() string { return "$lookup" }

func (s *stageLookup) explain() bson.D {
	d := bson.D{}
	if s.from != "" {
		d = append(d, bson.E{Key: "from", Value: s.from})
	}
	d = append(d, bson.E{Key: "as", Value: s.as})
	if s.hasLocalJoin {
		d = append(d, bson.E{Key: "localField", Value: s.localField}, bson.E{Key: "foreignField", Value: s.foreign})
	}
	if s.let != nil {
		d = append(d, bson.E{Key: "let", Value: s.let.spec})
	}
	if s.hasPipeline {
		d = append(d, bson.E{Key: "pipeline", Value: s.spec.Lookup("pipeline")})
	}
	if s.unwind != nil {
		u := bson.D{{Key: "preserveNullAndEmptyArrays", Value: s.unwind.preserve}}
		if s.unwind.index != "" {
			u = append(u, bson.E{Key: "includeArrayIndex", Value: s.unwind.index})
		}
		d = append(d, bson.E{Key: "unwinding", Value: u})
	}
	return bson.D{{Key: "$lookup", Value: d}}
}

// localValues collects the values of the local field, arrays expanded
// along the path; none at all means null (mongod's
// makeMatchStageFromInput).
func localValues(doc bson.Raw, parts []string) []bson.RawValue {
	out := pathValues(doc, parts)
	if len(out) == 0 {
		out = []bson.RawValue{expr.Null()}
	}
	return out
}

// pathValues collects the values at a dotted path, traversing arrays
// along it and expanding an array at its end (mongod's
// visitAllValuesAtPath).
func pathValues(doc bson.Raw, parts []string) []bson.RawValue {
	var out []bson.RawValue
	var walk func(v bson.RawValue, i int)
	walk = func(v bson.RawValue, i int) {
		if i == len(parts) {
			if v.Type == bson.TypeArray {
				out = append(out, expr.Values(v)...)
			} else {
				out = append(out, v)
			}
			return
		}
		switch v.Type {
		case bson.TypeEmbeddedDocument:
			f, err := v.Document().LookupErr(parts[i])
			if err == nil {
				walk(f, i+1)
			}
		case bson.TypeArray:
			for _, el := range expr.Values(v) {
				if el.Type == bson.TypeEmbeddedDocument || el.Type == bson.TypeArray {
					walk(el, i)
				}
			}
		}
	}
	walk(expr.Doc(doc), 0)
	return out
}

// joinFilter builds the foreign filter of a localField/foreignField join:
// $eq for one value, $in for several, an $or of $eq when a regex is
// among them (a regex in $in would pattern-match).
func (s *stageLookup) joinFilter(doc bson.Raw) bson.Raw {
	vals := localValues(doc, s.localParts)
	if len(vals) == 1 {
		raw, _ := bson.Marshal(bson.D{{Key: s.foreign, Value: bson.D{{Key: "$eq", Value: vals[0]}}}})
		return raw
	}
	hasRegex := false
	for _, v := range vals {
		hasRegex = hasRegex || v.Type == bson.TypeRegex
	}
	if hasRegex {
		or := bson.A{}
		for _, v := range vals {
			or = append(or, bson.D{{Key: s.foreign, Value: bson.D{{Key: "$eq", Value: v}}}})
		}
		raw, _ := bson.Marshal(bson.D{{Key: "$or", Value: or}})
		return raw
	}
	in := bson.A{}
	for _, v := range vals {
		in = append(in, v)
	}
	raw, _ := bson.Marshal(bson.D{{Key: s.foreign, Value: bson.D{{Key: "$in", Value: in}}}})
	return raw
}

// matches runs the foreign side for one input document.
func (s *stageLookup) matches(ctx context.Context, rc *runCtx, c *expr.Ctx, doc bson.Raw) (Source, error) {
	subCtx, err := s.let.bind(c, doc)
	if err != nil {
		return nil, err
	}
	names := rc.names
	if s.let != nil {
		names = append(append([]letVar(nil), names...), letVarsOf(s.let)...)
	}
	src := rc.with(subCtx, names)
	sub := s.sub
	if len(sub.query.Filter) > 0 && src.letMissing() {
		sub = s.local
	}
	var in Source
	if !sub.source {
		q := sub.query
		if s.hasLocalJoin {
			q.Filter = andFilters(s.joinFilter(doc), q.Filter)
		}
		if len(q.Filter) > 0 {
			q.Let = src.letDoc()
		}
		q.Collation = rc.opts.Collation
		if in, err = rc.host.Open(ctx, nsOf(rc.opts.DB, s.from), q); err != nil {
			return nil, err
		}
	}
	out, err := sub.run(ctx, src, in)
	if err != nil {
		return nil, err
	}
	if s.hasLocalJoin && sub.source {
		// $documents as the foreign side: filter here.
		sc := expr.NewScope()
		sc.SetCollation(rc.opts.Collation)
		f, err := compileFilter(s.joinFilter(doc), sc, nil, rc.opts.Now)
		if err != nil {
			out.Close()
			return nil, err
		}
		fc := expr.NewCtx(nil)
		fc.Collation = rc.opts.Collation
		inner := out
		out = &funcSource{next: func(ctx context.Context) (bson.Raw, error) {
			for {
				d, err := inner.Next(ctx)
				if err != nil || d == nil {
					return nil, err
				}
				if ok, err := f.Match(fc, d); err != nil || ok {
					return d, err
				}
			}
		}, close: inner.Close}
	}
	return out, nil
}

func letVarsOf(l *letDefs) []letVar {
	out := make([]letVar, len(l.names))
	for i := range l.names {
		out[i] = letVar{name: l.names[i], slot: l.slots[i]}
	}
	return out
}

func (s *stageLookup) open(_ context.Context, rc *runCtx, in Source) (Source, error) {
	c := rc.exprCtx()
	var pending []bson.Raw
	return &funcSource{next: func(ctx context.Context) (bson.Raw, error) {
		for len(pending) == 0 {
			d, err := in.Next(ctx)
			if err != nil || d == nil {
				return nil, err
			}
			src, err := s.matches(ctx, rc, c, d)
			if err != nil {
				return nil, err
			}
			results, err := drain(ctx, src)
			if err != nil {
				return nil, err
			}
			if s.unwind == nil {
				total := 0
				for _, r := range results {
					total += len(r)
				}
				if total > expr.MaxBSONSize {
					return nil, mongoerr.Newf(mongoerr.Code(4568), "Total size of documents in %s matching pipeline's $lookup stage exceeds %d bytes", s.from, expr.MaxBSONSize)
				}
				vals := make([]bson.RawValue, len(results))
				for i, r := range results {
					vals[i] = expr.Doc(r)
				}
				out := setPath(d, s.asParts, expr.Array(vals))
				if len(out) > expr.MaxBSONSize {
					return nil, mongoerr.New(mongoerr.BSONObjectTooLarge, "BSONObj size is invalid: the $lookup result exceeds the maximum BSON size")
				}
				return out, nil
			}
			pending = s.unwindResults(d, results)
		}
		d := pending[0]
		pending = pending[1:]
		return d, nil
	}, close: in.Close}, nil
}

// unwindResults is the absorbed $unwind: one document per result.
func (s *stageLookup) unwindResults(d bson.Raw, results []bson.Raw) []bson.Raw {
	u := s.unwind
	if len(results) == 0 {
		if !u.preserve {
			return nil
		}
		out := setPath(d, s.asParts, bson.RawValue{})
		if u.index != "" {
			out = setPath(out, strings.Split(u.index, "."), expr.Null())
		}
		return []bson.Raw{out}
	}
	out := make([]bson.Raw, len(results))
	for i, r := range results {
		o := setPath(d, s.asParts, expr.Doc(r))
		if u.index != "" {
			o = setPath(o, strings.Split(u.index, "."), expr.Int64(int64(i)))
		}
		out[i] = o
	}
	return out
}
