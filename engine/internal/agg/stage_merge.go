package agg

import (
	"context"
	"strings"

	"go.mongodb.org/mongo-driver/v2/bson"

	"github.com/formworkdb/formwork/engine/internal/expr"
	"github.com/formworkdb/formwork/engine/internal/mongoerr"
)

func init() {
	register("$merge", flagLast|flagNoFacet|flagNoLookup|flagWrites, parseMerge)
}

// $merge modes.
const (
	mergeReplace = "replace"
	mergeKeep    = "keepExisting"
	mergeMerge   = "merge"
	mergeFail    = "fail"
	mergePipe    = "pipeline"
	mergeInsert  = "insert"
	mergeDiscard = "discard"
)

// stageMerge is $merge: each document is written into the target
// collection, matched on the "on" fields (which need a unique index,
// 51183) and combined as whenMatched and whenNotMatched say; it returns
// no documents. A duplicate key surfaces as 11000.
// https://www.mongodb.com/docs/v7.0/reference/operator/aggregation/merge/
type stageMerge struct {
	spec           bson.RawValue
	ns             string
	on             []string
	onSet          bool
	whenMatched    string
	whenNotMatched string
	pipeline       bson.RawValue // whenMatched pipeline, as an array
	let            *letDefs
	letNames       []string
}

// parseMerge parses $merge: the IDL codes for a bad document (40414 no
// into, 40415 an unknown field, BadValue for an unknown mode), 51186 a
// bad "on", 51187 an empty "on", 31465 a duplicate "on" field, 51181 an
// unsupported mode combination, 51199 let without a pipeline, and the
// update-pipeline codes for whenMatched.
func parseMerge(pc *parseCtx, spec bson.RawValue) (stage, error) {
	s := &stageMerge{spec: spec, whenMatched: mergeMerge, whenNotMatched: mergeInsert}
	switch spec.Type {
	case bson.TypeString:
		ns, err := parseTarget(pc, "$merge", "$merge.into", spec, nil)
		if err != nil {
			return nil, err
		}
		s.ns = ns
	case bson.TypeEmbeddedDocument:
		var into bson.RawValue
		var let bson.Raw
		for _, el := range mustElems(spec.Document()) {
			v := el.Value()
			switch el.Key() {
			case "into":
				into = v
			case "on":
				if err := s.parseOn(v); err != nil {
					return nil, err
				}
			case "let":
				d, ok := v.DocumentOK()
				if !ok {
					return nil, mongoerr.Newf(mongoerr.TypeMismatch, "BSON field '$merge.let' is the wrong type '%s', expected type 'object'", typeName(v))
				}
				let = d
			case "whenMatched":
				switch v.Type {
				case bson.TypeString:
					switch m := v.StringValue(); m {
					case mergeReplace, mergeKeep, mergeMerge, mergeFail:
						s.whenMatched = m
					default:
						return nil, mongoerr.Newf(mongoerr.BadValue, "Enumeration value '%s' for field '$merge.whenMatched' is not a valid value.", m)
					}
				case bson.TypeArray:
					s.whenMatched, s.pipeline = mergePipe, v
				default:
					return nil, mongoerr.Newf(mongoerr.Code(51191), "$merge 'whenMatched' field must be either a string or an array, but found %s", typeName(v))
				}
			case "whenNotMatched":
				if v.Type != bson.TypeString {
					return nil, mongoerr.Newf(mongoerr.TypeMismatch, "BSON field '$merge.whenNotMatched' is the wrong type '%s', expected type 'string'", typeName(v))
				}
				switch m := v.StringValue(); m {
				case mergeInsert, mergeDiscard, mergeFail:
					s.whenNotMatched = m
				default:
					return nil, mongoerr.Newf(mongoerr.BadValue, "Enumeration value '%s' for field '$merge.whenNotMatched' is not a valid value.", m)
				}
			default:
				return nil, mongoerr.Newf(mongoerr.UnknownBSONField, "BSON field '$merge.%s' is an unknown field.", el.Key())
			}
		}
		if into.Type == 0 {
			return nil, mongoerr.New(mongoerr.Code(40414), "BSON field '$merge.into' is missing but a required field")
		}
		ns, err := parseTarget(pc, "$merge", "$merge.into", into, nil)
		if err != nil {
			return nil, err
		}
		s.ns = ns
		if s.whenMatched == mergeFail && s.whenNotMatched != mergeInsert {
			return nil, mongoerr.Newf(mongoerr.Code(51181), "Combination of $merge modes 'whenMatched: %s' and 'whenNotMatched: %s' is not supported", s.whenMatched, s.whenNotMatched)
		}
		if let != nil && s.whenMatched != mergePipe {
			return nil, mongoerr.New(mongoerr.Code(51199), "Cannot use 'let' variables with 'whenMatched' mode other than pipeline")
		}
		if err := s.parsePipeline(pc, let); err != nil {
			return nil, err
		}
	default:
		return nil, mongoerr.Newf(mongoerr.TypeMismatch, "$merge requires a string or object argument, but found %s", typeName(spec))
	}
	if _, coll := splitNS(s.ns); strings.HasPrefix(coll, "system.") {
		return nil, mongoerr.Newf(mongoerr.InvalidNamespace, "Cannot $merge into special collection: '%s'", coll)
	}
	if !s.onSet {
		s.on = []string{"_id"}
	}
	return s, nil
}

func (s *stageMerge) parseOn(v bson.RawValue) error {
	s.onSet = true
	switch v.Type {
	case bson.TypeString:
		s.on = []string{v.StringValue()}
	case bson.TypeArray:
		vals := expr.Values(v)
		if len(vals) == 0 {
			return mongoerr.New(mongoerr.Code(51187), "If explicitly specifying $merge 'on', must include at least one field")
		}
		seen := map[string]bool{}
		for _, ev := range vals {
			if ev.Type != bson.TypeString {
				return mongoerr.Newf(mongoerr.Code(51134), "$merge 'on' array elements must be strings, but found %s", typeName(ev))
			}
			f := ev.StringValue()
			if seen[f] {
				return mongoerr.Newf(mongoerr.Code(31465), "Found a duplicate field '%s'", f)
			}
			seen[f] = true
			s.on = append(s.on, f)
		}
	default:
		return mongoerr.Newf(mongoerr.Code(51186), "$merge 'on' field  must be either a string or an array of strings, but found %s", typeName(v))
	}
	for _, f := range s.on {
		if err := validatePath(f); err != nil {
			return err
		}
	}
	return nil
}

// parsePipeline validates the whenMatched pipeline as an update pipeline
// and parses the let variables, which may read the source document;
// $$new is the source document unless let defines it.
func (s *stageMerge) parsePipeline(pc *parseCtx, let bson.Raw) error {
	if s.whenMatched != mergePipe {
		return nil
	}
	var stages []bson.Raw
	for _, v := range expr.Values(s.pipeline) {
		d, ok := v.DocumentOK()
		if !ok {
			return mongoerr.Newf(mongoerr.TypeMismatch, "Each element of the 'whenMatched' pipeline must be an object")
		}
		stages = append(stages, d)
	}
	b := expr.NewDocBuilder()
	hasNew := false
	for _, el := range mustElems(let) {
		b.Append(el.Key(), el.Value())
		hasNew = hasNew || el.Key() == "new"
	}
	if !hasNew {
		b.Append("new", expr.String("$$ROOT"))
	}
	letDoc := b.Doc()
	sub, err := pc.child(inUpdate)
	if err != nil {
		return err
	}
	if s.let, err = parseLetDefs(pc, sub, letDoc); err != nil {
		return err
	}
	// Validate the pipeline with the let names bound to placeholders.
	vb := expr.NewDocBuilder()
	for _, n := range s.let.names {
		vb.Append(n, expr.Null())
	}
	if _, err := ParseUpdatePipeline(stages, vb.Doc()); err != nil {
		return err
	}
	return nil
}

func (s *stageMerge) name() string   { return "$merge" }
func (s *stageMerge) target() string { return s.ns }

func (s *stageMerge) explain() bson.D {
	db, coll := splitNS(s.ns)
	d := bson.D{{Key: "into", Value: bson.D{{Key: "db", Value: db}, {Key: "coll", Value: coll}}}, {Key: "on", Value: s.onValue()}}
	if s.let != nil {
		d = append(d, bson.E{Key: "let", Value: s.let.spec})
	}
	if s.whenMatched == mergePipe {
		d = append(d, bson.E{Key: "whenMatched", Value: s.pipeline})
	} else {
		d = append(d, bson.E{Key: "whenMatched", Value: s.whenMatched})
	}
	d = append(d, bson.E{Key: "whenNotMatched", Value: s.whenNotMatched})
	return bson.D{{Key: "$merge", Value: d}}
}

func (s *stageMerge) onValue() any {
	if len(s.on) == 1 {
		return s.on[0]
	}
	a := bson.A{}
	for _, f := range s.on {
		a = append(a, f)
	}
	return a
}

// onFilter builds the target query of a source document from its "on"
// fields: 51132 for a missing or nullish one, 51185 for an array.
func (s *stageMerge) onFilter(d bson.Raw) (bson.Raw, error) {
	b := expr.NewDocBuilder()
	for _, f := range s.on {
		parts := strings.Split(f, ".")
		v := expr.Doc(d)
		for _, p := range parts {
			doc, ok := v.DocumentOK()
			if !ok {
				v = bson.RawValue{}
				break
			}
			v = doc.Lookup(p)
			if v.Type == bson.TypeArray {
				return nil, mongoerr.Newf(mongoerr.Code(51185), "$merge write error: 'on' field '%s' is an array", f)
			}
		}
		if expr.IsNullish(v) {
			return nil, mongoerr.Newf(mongoerr.Code(51132), "$merge write error: 'on' field '%s' cannot be missing, null, undefined or an array", f)
		}
		b.Append(f, v)
	}
	return b.Doc(), nil
}

// write merges one source document into the target.
func (s *stageMerge) write(ctx context.Context, rc *runCtx, c *expr.Ctx, d bson.Raw) error {
	d = withObjectID(d)
	q, err := s.onFilter(d)
	if err != nil {
		return err
	}
	qv := expr.Doc(q)
	notMatched := func() error {
		switch s.whenNotMatched {
		case mergeInsert:
			return rc.host.Insert(ctx, s.ns, []bson.Raw{d})
		case mergeFail:
			return mongoerr.New(mongoerr.Code(13113), "$merge could not find a matching document in the target collection for at least one document in the source collection")
		}
		return nil
	}
	var u bson.RawValue
	var let bson.Raw
	switch s.whenMatched {
	case mergeFail:
		return rc.host.Insert(ctx, s.ns, []bson.Raw{d})
	case mergeKeep:
		if s.whenNotMatched != mergeInsert {
			// keepExisting never changes a matched document.
			if s.whenNotMatched == mergeFail {
				src, err := rc.host.Open(ctx, s.ns, Query{Filter: q, Limit: 1})
				if err != nil {
					return err
				}
				docs, err := drain(ctx, src)
				if err != nil {
					return err
				}
				if len(docs) == 0 {
					return notMatched()
				}
			}
			return nil
		}
		u = expr.Doc(wrapOp("$setOnInsert", d))
		_, _, err := rc.host.Update(ctx, s.ns, qv, u, nil, true, false)
		return err
	case mergeReplace:
		u = expr.Doc(d)
	case mergeMerge:
		u = expr.Doc(wrapOp("$set", d))
	case mergePipe:
		u = s.pipeline
		n, err := s.let.bind(c, d)
		if err != nil {
			return err
		}
		b := expr.NewDocBuilder()
		for i, name := range s.let.names {
			// The host parses let as expressions: constants go in $literal.
			v := n.Get(s.let.slots[i])
			if v.Type == 0 {
				v = expr.Null()
			}
			b.Append(name, expr.Doc(wrapOp2("$literal", v)))
		}
		let = b.Doc()
	}
	matched, _, err := rc.host.Update(ctx, s.ns, qv, u, let, false, false)
	if err != nil {
		return err
	}
	if matched == 0 {
		return notMatched()
	}
	return nil
}

// wrapOp returns {op: d}.
func wrapOp(op string, d bson.Raw) bson.Raw {
	b := expr.NewDocBuilder()
	b.Append(op, expr.Doc(d))
	return b.Doc()
}

// wrapOp2 returns {op: v}.
func wrapOp2(op string, v bson.RawValue) bson.Raw {
	b := expr.NewDocBuilder()
	b.Append(op, v)
	return b.Doc()
}

// withObjectID gives a document without _id a new ObjectId, as $merge
// does before writing.
func withObjectID(d bson.Raw) bson.Raw {
	if _, err := d.LookupErr("_id"); err == nil {
		return d
	}
	b := expr.NewDocBuilder()
	b.Append("_id", expr.ObjectID(bson.NewObjectID()))
	for _, el := range mustElems(d) {
		b.Append(el.Key(), el.Value())
	}
	return b.Doc()
}

func (s *stageMerge) open(_ context.Context, rc *runCtx, in Source) (Source, error) {
	done := false
	c := rc.exprCtx()
	return &funcSource{next: func(ctx context.Context) (bson.Raw, error) {
		if done {
			return nil, nil
		}
		done = true
		if !(len(s.on) == 1 && s.on[0] == "_id") {
			ok, err := rc.host.UniqueIndexOn(ctx, s.ns, s.on)
			if err != nil {
				return nil, err
			}
			if !ok {
				return nil, mongoerr.New(mongoerr.Code(51183), "Cannot find index to verify that join fields will be unique")
			}
		}
		for {
			d, err := in.Next(ctx)
			if err != nil || d == nil {
				return nil, err
			}
			if err := s.write(ctx, rc, c, d); err != nil {
				return nil, err
			}
		}
	}, close: in.Close}, nil
}
