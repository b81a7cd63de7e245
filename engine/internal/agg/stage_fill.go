package agg

import (
	"context"
	"strconv"

	"go.mongodb.org/mongo-driver/v2/bson"

	"github.com/formworkdb/formwork/engine/internal/bsonkit"
	"github.com/formworkdb/formwork/engine/internal/expr"
	"github.com/formworkdb/formwork/engine/internal/mongoerr"
)

func init() { register("$fill", 0, parseFill) }

// stageFill is {$fill: {sortBy, partitionBy | partitionByFields, output}}.
// As in mongod it is a $setWindowFields of $locf and $linearFill for the
// fields filled by method, followed by an $addFields of {$ifNull: [field,
// value]} for the fields filled with a value.
// https://www.mongodb.com/docs/v7.0/reference/operator/aggregation/fill/
type stageFill struct {
	spec   bson.Raw
	stages []stage
}

// parseFill parses the stage as FillSpec and document_source_fill do:
// 6050200–6050204 for the output and partition rules, the IDL codes for
// unknown, missing and mistyped fields.
func parseFill(pc *parseCtx, spec bson.RawValue) (stage, error) {
	const name = "$fill"
	if spec.Type != bson.TypeEmbeddedDocument {
		return nil, failedToParse("The $fill stage specification must be an object, found %s", typeNameOf(spec))
	}
	doc := spec.Document()
	var sortBy, partitionBy, partitionByFields, output *bson.RawValue
	for _, el := range mustElems(doc) {
		v := el.Value()
		var dst **bson.RawValue
		switch el.Key() {
		case "sortBy":
			if v.Type != bson.TypeEmbeddedDocument {
				return nil, idlType(name, "sortBy", v, "object")
			}
			dst = &sortBy
		case "partitionBy":
			if v.Type != bson.TypeEmbeddedDocument && v.Type != bson.TypeString {
				return nil, mongoerr.Newf(mongoerr.TypeMismatch, "BSON field '$fill.partitionBy' is the wrong type '%s', expected types '[string, object]'", typeNameOf(v))
			}
			dst = &partitionBy
		case "partitionByFields":
			if v.Type != bson.TypeArray {
				return nil, idlType(name, "partitionByFields", v, "array")
			}
			for i, f := range bsonkit.Values(v.Value) {
				if f.Type != bson.TypeString {
					return nil, idlType(name, "partitionByFields."+strconv.Itoa(i), f, "string")
				}
			}
			dst = &partitionByFields
		case "output":
			if v.Type != bson.TypeEmbeddedDocument {
				return nil, idlType(name, "output", v, "object")
			}
			dst = &output
		default:
			return nil, idlUnknown(name, el.Key())
		}
		if *dst != nil {
			return nil, idlDuplicate(name, el.Key())
		}
		*dst = &v
	}
	if output == nil {
		return nil, idlMissing(name, "output")
	}
	outs := mustElems(output.Document())
	if len(outs) == 0 {
		return nil, mongoerr.New(mongoerr.Code(6050203), "The output field in '$fill' must contain an object with at least one element")
	}
	swfOut := expr.NewDocBuilder()
	addSpec := expr.NewDocBuilder()
	needSWF, needAdd := false, false
	for _, el := range outs {
		field := el.Key()
		if el.Value().Type != bson.TypeEmbeddedDocument {
			return nil, mongoerr.New(mongoerr.Code(6050200), "Each fill output specification must be an object with exactly one field")
		}
		var method, value *bson.RawValue
		for _, f := range mustElems(el.Value().Document()) {
			v := f.Value()
			switch f.Key() {
			case "method":
				if v.Type != bson.TypeString {
					return nil, idlType(name, "method", v, "string")
				}
				method = &v
			case "value":
				value = &v
			default:
				return nil, idlUnknown(name, f.Key())
			}
		}
		if method != nil {
			if value != nil {
				return nil, mongoerr.New(mongoerr.Code(6050201), "Each fill output specification must have exactly one of 'method' or 'value' fields, not both")
			}
			fn := ""
			switch method.StringValue() {
			case "locf":
				fn = "$locf"
			case "linear":
				fn = "$linearFill"
			default:
				return nil, mongoerr.New(mongoerr.Code(6050202), "Method must be either locf or linear")
			}
			b := expr.NewDocBuilder()
			b.Append(fn, expr.String("$"+field))
			swfOut.Append(field, expr.Doc(b.Doc()))
			needSWF = true
		}
		if value != nil {
			b := expr.NewArrayBuilder(2)
			b.Append(expr.String("$" + field))
			b.Append(*value)
			ifNull := expr.NewDocBuilder()
			ifNull.Append("$ifNull", b.Value())
			addSpec.Append(field, expr.Doc(ifNull.Doc()))
			needAdd = true
		}
	}
	swf := expr.NewDocBuilder()
	if sortBy != nil {
		swf.Append("sortBy", *sortBy)
	}
	if partitionBy != nil {
		if partitionByFields != nil {
			return nil, mongoerr.New(mongoerr.Code(6050204), "Maximum one of 'partitionBy' and 'partitionByFields can be specified in '$fill'")
		}
		swf.Append("partitionBy", *partitionBy)
	}
	if partitionByFields != nil {
		p := expr.NewDocBuilder()
		for _, f := range bsonkit.Values(partitionByFields.Value) {
			p.Append(f.StringValue(), expr.String("$"+f.StringValue()))
		}
		swf.Append("partitionBy", expr.Doc(p.Doc()))
	}
	swf.Append("output", expr.Doc(swfOut.Doc()))
	s := &stageFill{spec: doc}
	if needSWF {
		st, err := parseSetWindowFields(pc, expr.Doc(swf.Doc()))
		if err != nil {
			return nil, err
		}
		s.stages = append(s.stages, st)
	}
	if needAdd {
		st, err := parseProjectStage(pc, "$addFields", expr.Doc(addSpec.Doc()))
		if err != nil {
			return nil, err
		}
		s.stages = append(s.stages, st)
	}
	return s, nil
}

func (s *stageFill) name() string { return "$fill" }

func (s *stageFill) explain() bson.D {
	return bson.D{{Key: "$fill", Value: s.spec}}
}

func (s *stageFill) deps(d *depSet) bool {
	d.whole = true
	return false
}

// expand returns the stages $fill stands for: those of its
// $setWindowFields, then its $addFields.
func (s *stageFill) expand() []stage {
	var out []stage
	for _, st := range s.stages {
		if ex, ok := st.(expander); ok {
			out = append(out, ex.expand()...)
		} else {
			out = append(out, st)
		}
	}
	return out
}

func (s *stageFill) open(ctx context.Context, rc *runCtx, in Source) (Source, error) {
	return openChain(ctx, rc, in, s.expand())
}
