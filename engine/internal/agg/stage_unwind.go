package agg

import (
	"context"
	"strings"

	"go.mongodb.org/mongo-driver/v2/bson"

	"github.com/formworkdb/formwork/engine/internal/expr"
	"github.com/formworkdb/formwork/engine/internal/mongoerr"
)

func init() { register("$unwind", 0, parseUnwind) }

// stageUnwind is {$unwind: "$path"} or {$unwind: {path, includeArrayIndex,
// preserveNullAndEmptyArrays}}: one output document per element of the
// array at path.
// https://www.mongodb.com/docs/v7.0/reference/operator/aggregation/unwind/
type stageUnwind struct {
	path     string // without "$"
	parts    []string
	index    string // includeArrayIndex; "" = none
	preserve bool
}

// parseUnwind parses $unwind with mongod's codes: 15981 for a spec that
// is neither string nor document, 28812 no path, 28808 a non-string
// path, 28818 a path without '$', 28809 a non-boolean
// preserveNullAndEmptyArrays, 28810/28822 a bad includeArrayIndex, 28811
// an unknown option.
func parseUnwind(_ *parseCtx, spec bson.RawValue) (stage, error) {
	s := &stageUnwind{}
	var path string
	switch spec.Type {
	case bson.TypeString:
		path = spec.StringValue()
	case bson.TypeEmbeddedDocument:
		havePath := false
		for _, el := range mustElems(spec.Document()) {
			v := el.Value()
			switch el.Key() {
			case "path":
				if v.Type != bson.TypeString {
					return nil, mongoerr.Newf(mongoerr.Code(28808), "expected a string as the path for $unwind stage, got %s", typeName(v))
				}
				path, havePath = v.StringValue(), true
			case "preserveNullAndEmptyArrays":
				if v.Type != bson.TypeBoolean {
					return nil, mongoerr.Newf(mongoerr.Code(28809), "expected a boolean for the preserveNullAndEmptyArrays option to $unwind stage, got %s", typeName(v))
				}
				s.preserve = v.Boolean()
			case "includeArrayIndex":
				if v.Type != bson.TypeString || v.StringValue() == "" {
					return nil, mongoerr.Newf(mongoerr.Code(28810), "expected a non-empty string for the includeArrayIndex  option to $unwind stage, got %s", typeName(v))
				}
				if strings.HasPrefix(v.StringValue(), "$") {
					return nil, mongoerr.Newf(mongoerr.Code(28822), "includeArrayIndex option to $unwind stage should not be prefixed with a '$': %s", v.StringValue())
				}
				s.index = v.StringValue()
			default:
				return nil, mongoerr.Newf(mongoerr.Code(28811), "unrecognized option to $unwind stage: %s", el.Key())
			}
		}
		if !havePath {
			return nil, mongoerr.New(mongoerr.Code(28812), "no path specified to $unwind stage")
		}
	default:
		return nil, mongoerr.Newf(mongoerr.Code(15981), "expected either a string or an object as specification for $unwind stage, got %s", typeName(spec))
	}
	if !strings.HasPrefix(path, "$") {
		return nil, mongoerr.Newf(mongoerr.Code(28818), "path option to $unwind stage should be prefixed with a '$': %s", path)
	}
	s.path = path[1:]
	if s.path == "" {
		return nil, mongoerr.New(mongoerr.Code(40352), "FieldPath cannot be constructed with empty string")
	}
	s.parts = strings.Split(s.path, ".")
	for _, p := range s.parts {
		if err := expr.ValidateFieldName(p); err != nil {
			return nil, err
		}
	}
	if s.index != "" {
		for _, p := range strings.Split(s.index, ".") {
			if err := expr.ValidateFieldName(p); err != nil {
				return nil, err
			}
		}
	}
	return s, nil
}

func (s *stageUnwind) name() string { return "$unwind" }

func (s *stageUnwind) spec() bson.D {
	d := bson.D{{Key: "path", Value: "$" + s.path}}
	if s.preserve {
		d = append(d, bson.E{Key: "preserveNullAndEmptyArrays", Value: true})
	}
	if s.index != "" {
		d = append(d, bson.E{Key: "includeArrayIndex", Value: s.index})
	}
	return d
}

func (s *stageUnwind) explain() bson.D { return bson.D{{Key: "$unwind", Value: s.spec()}} }

func (s *stageUnwind) deps(d *depSet) bool {
	d.whole = true
	return false
}

// unwindDoc returns the documents $unwind makes of d.
func (s *stageUnwind) unwindDoc(d bson.Raw) []bson.Raw {
	// mongod's $unwind does not traverse arrays along the path.
	v := lookupNoArray(d, s.parts)
	switch {
	case v.Type == bson.TypeArray:
		vals := expr.Values(v)
		if len(vals) == 0 {
			if !s.preserve {
				return nil
			}
			return []bson.Raw{s.emit(d, bson.RawValue{}, true, expr.Null())}
		}
		out := make([]bson.Raw, 0, len(vals))
		for i, el := range vals {
			out = append(out, s.emit(d, el, false, expr.Int64(int64(i))))
		}
		return out
	case v.Type == 0 || v.Type == bson.TypeNull || v.Type == bson.TypeUndefined:
		if !s.preserve {
			return nil
		}
		return []bson.Raw{s.emit(d, v, false, expr.Null())}
	default:
		return []bson.Raw{s.emit(d, v, false, expr.Null())}
	}
}

// lookupNoArray follows parts through documents only.
func lookupNoArray(d bson.Raw, parts []string) bson.RawValue {
	v := expr.Doc(d)
	for _, p := range parts {
		doc, ok := v.DocumentOK()
		if !ok {
			return bson.RawValue{}
		}
		f, err := doc.LookupErr(p)
		if err != nil {
			return bson.RawValue{}
		}
		v = f
	}
	return v
}

// emit builds one output document: the path set to el (removed when
// remove), and the index field.
func (s *stageUnwind) emit(d bson.Raw, el bson.RawValue, remove bool, idx bson.RawValue) bson.Raw {
	out := d
	if remove {
		out = setPath(out, s.parts, bson.RawValue{})
	} else if el.Type != 0 {
		out = setPath(out, s.parts, el)
	}
	if s.index != "" {
		out = setPath(out, strings.Split(s.index, "."), idx)
	}
	return out
}

// setPath returns d with the dotted path set to v (missing v removes
// it), creating documents along the way and replacing non-documents.
func setPath(d bson.Raw, parts []string, v bson.RawValue) bson.Raw {
	b := expr.NewDocBuilder()
	found := false
	for _, el := range mustElems(d) {
		if el.Key() != parts[0] {
			b.Append(el.Key(), el.Value())
			continue
		}
		found = true
		if len(parts) == 1 {
			b.Append(parts[0], v)
			continue
		}
		sub, ok := el.Value().DocumentOK()
		if !ok {
			sub = emptyDoc
		}
		b.Append(parts[0], expr.Doc(setPath(sub, parts[1:], v)))
	}
	if !found && (v.Type != 0 || len(parts) > 1) {
		if len(parts) == 1 {
			b.Append(parts[0], v)
		} else {
			b.Append(parts[0], expr.Doc(setPath(emptyDoc, parts[1:], v)))
		}
	}
	return b.Doc()
}

func (s *stageUnwind) open(_ context.Context, _ *runCtx, in Source) (Source, error) {
	var pending []bson.Raw
	return &funcSource{next: func(ctx context.Context) (bson.Raw, error) {
		for len(pending) == 0 {
			d, err := in.Next(ctx)
			if err != nil || d == nil {
				return nil, err
			}
			pending = s.unwindDoc(d)
		}
		d := pending[0]
		pending = pending[1:]
		return d, nil
	}, close: in.Close}, nil
}
