package expr

import (
	"strings"

	"go.mongodb.org/mongo-driver/v2/bson"

	"github.com/formworkdb/formwork/engine/internal/bsonkit"
)

// Object operators: $mergeObjects, $getField, $setField, $unsetField,
// $objectToArray and $arrayToObject.
//
// Reference: https://www.mongodb.com/docs/v7.0/reference/operator/aggregation/#object-expression-operators
func init() {
	register("$mergeObjects", opNary(mergeObjects))
	register("$getField", parseGetField)
	register("$setField", parseSetField)
	register("$unsetField", parseSetField)
	register("$objectToArray", opValues(1, objectToArray))
	register("$arrayToObject", opValues(1, arrayToObject))
}

// fieldList is a document under construction whose fields can be replaced
// in place, as mongod's MutableDocument.setField does.
type fieldList struct {
	keys []string
	vals []bson.RawValue
	pos  map[string]int
	size int
}

// newFieldList returns an empty fieldList.
func newFieldList() *fieldList { return &fieldList{pos: map[string]int{}} }

// set replaces k's value where k is, or appends k; a missing v removes k.
func (f *fieldList) set(k string, v bson.RawValue) {
	if i, ok := f.pos[k]; ok {
		f.size -= len(f.vals[i].Value)
		f.vals[i] = v
	} else {
		f.pos[k] = len(f.keys)
		f.keys = append(f.keys, k)
		f.vals = append(f.vals, v)
		f.size += len(k) + 2
	}
	f.size += len(v.Value)
}

// doc builds the document; missing values are left out.
func (f *fieldList) doc() (bson.RawValue, error) {
	if f.size > MaxBSONSize {
		return bson.RawValue{}, errTooLarge()
	}
	b := NewDocBuilder()
	for i, k := range f.keys {
		b.Append(k, f.vals[i])
	}
	if b.Size() > MaxBSONSize {
		return bson.RawValue{}, errTooLarge()
	}
	return Doc(b.Doc()), nil
}

// mergeObjects merges documents left to right; later fields win, in the
// position of their first occurrence. Null and missing operands are
// skipped. A single operand that is an array merges its elements.
func mergeObjects(c *Ctx, args []Expr) (bson.RawValue, error) {
	vals, err := EvalAll(c, args)
	if err != nil {
		return bson.RawValue{}, err
	}
	if len(vals) == 1 && vals[0].Type == bson.TypeArray {
		// One array operand: its elements are the documents to merge, as
		// for every operator mongod builds from an accumulator.
		vals = Values(vals[0])
	}
	f := newFieldList()
	for _, v := range vals {
		if IsNullish(v) {
			continue
		}
		if v.Type != bson.TypeEmbeddedDocument {
			return bson.RawValue{}, exprErr(40400, "$mergeObjects requires object inputs, but input %s is of type %s", v.String(), typeName(v))
		}
		bsonkit.ForEach(v.Value, func(k string, fv bson.RawValue) bool {
			f.set(k, fv)
			return true
		})
		if f.size > MaxBSONSize {
			return bson.RawValue{}, errTooLarge()
		}
	}
	return f.doc()
}

// constFieldName checks the 'field' argument of $getField and $setField
// as mongod does before optimizing: raw must not be a field path
// (pathCode), must be a constant, a literal or {$const: …} (constCode),
// and must be a string (typeCode).
func constFieldName(raw bson.RawValue, name string, pathCode, constCode, typeCode int32) (string, error) {
	if raw.Type == bson.TypeString && strings.HasPrefix(raw.StringValue(), "$") {
		fp := raw.StringValue()
		return "", exprErr(pathCode, "'%s' is a field path reference which is not allowed in this context. Did you mean {$literal: '%s'}?", fp, fp)
	}
	v := raw
	switch raw.Type {
	case bson.TypeArray:
		return "", exprErr(constCode, "%s requires 'field' to evaluate to a constant, but got a non-constant argument", name)
	case bson.TypeEmbeddedDocument:
		elems, _ := raw.Document().Elements()
		if len(elems) != 1 || (elems[0].Key() != "$const" && elems[0].Key() != "$literal") {
			return "", exprErr(constCode, "%s requires 'field' to evaluate to a constant, but got a non-constant argument", name)
		}
		v = elems[0].Value()
	}
	if v.Type != bson.TypeString {
		return "", exprErr(typeCode, "%s requires 'field' to evaluate to type String, but got %s", name, typeName(v))
	}
	return v.StringValue(), nil
}

// getFieldExpr reads one field, named by a constant that may contain '.'
// or start with '$', from its input.
type getFieldExpr struct {
	field string
	input Expr
}

func (e *getFieldExpr) Eval(c *Ctx) (bson.RawValue, error) {
	in, err := e.input.Eval(c)
	if err != nil {
		return bson.RawValue{}, err
	}
	switch {
	case in.Type == 0:
		return bson.RawValue{}, nil
	case IsNullish(in):
		return Null(), nil
	case in.Type != bson.TypeEmbeddedDocument:
		return bson.RawValue{}, nil
	}
	v, _ := bsonkit.Field(in.Value, e.field)
	return v, nil
}

// currentExpr is $$CURRENT, the input $getField reads by default; it
// records that the expression needs the whole document.
func currentExpr(p *Parser) (Expr, error) {
	return p.parsePath("$$CURRENT")
}

// parseGetField parses {field, input}, or a field alone with $$CURRENT as
// the input.
func parseGetField(p *Parser, name string, arg bson.RawValue) (Expr, error) {
	var fieldE, inputE Expr
	var fieldRaw bson.RawValue
	if arg.Type == bson.TypeEmbeddedDocument {
		elems, err := objectArgs(arg, 0, "")
		if err != nil {
			return nil, err
		}
		for _, el := range elems {
			k := el.Key()
			switch {
			case fieldE == nil && inputE == nil && strings.HasPrefix(k, "$"):
				fieldRaw = arg
				if fieldE, err = p.Parse(arg); err != nil {
					return nil, err
				}
				if inputE, err = currentExpr(p); err != nil {
					return nil, err
				}
			case k == "field":
				fieldRaw = el.Value()
				fieldE, err = p.Parse(fieldRaw)
			case k == "input":
				inputE, err = p.Parse(el.Value())
			default:
				return nil, exprErr(3041701, "$getField found an unknown argument: %s", k)
			}
			if err != nil {
				return nil, err
			}
			if strings.HasPrefix(k, "$") && fieldE != nil && inputE != nil {
				break
			}
		}
	} else {
		var err error
		fieldRaw = arg
		if fieldE, err = p.Parse(arg); err != nil {
			return nil, err
		}
		if inputE, err = currentExpr(p); err != nil {
			return nil, err
		}
	}
	if fieldE == nil {
		return nil, exprErr(3041702, "$getField requires 'field' to be specified")
	}
	if inputE == nil {
		return nil, exprErr(3041703, "$getField requires 'input' to be specified")
	}
	field, err := constFieldName(fieldRaw, "$getField", 5654600, 5654601, 5654602)
	if err != nil {
		return nil, err
	}
	return &getFieldExpr{field: field, input: inputE}, nil
}

// setFieldExpr sets (or, with a missing value, removes) one field of its
// input document.
type setFieldExpr struct {
	field        string
	input, value Expr
}

func (e *setFieldExpr) Eval(c *Ctx) (bson.RawValue, error) {
	in, err := e.input.Eval(c)
	if err != nil {
		return bson.RawValue{}, err
	}
	if IsNullish(in) {
		return Null(), nil
	}
	if in.Type != bson.TypeEmbeddedDocument {
		return bson.RawValue{}, exprErr(4161105, "$setField requires 'input' to evaluate to type Object")
	}
	v, err := e.value.Eval(c)
	if err != nil {
		return bson.RawValue{}, err
	}
	f := newFieldList()
	bsonkit.ForEach(in.Value, func(k string, fv bson.RawValue) bool {
		f.set(k, fv)
		return true
	})
	f.set(e.field, v)
	return f.doc()
}

// parseSetField parses {field, input, value} ($setField) or {field,
// input} ($unsetField).
func parseSetField(p *Parser, name string, arg bson.RawValue) (Expr, error) {
	unset := name == "$unsetField"
	elems, err := objectArgs(arg, 4161100, name+" only supports an object as its argument")
	if err != nil {
		return nil, err
	}
	var fieldE, inputE, valueE Expr
	var fieldRaw bson.RawValue
	for _, el := range elems {
		switch k := el.Key(); {
		case k == "field":
			fieldRaw = el.Value()
			fieldE, err = p.Parse(fieldRaw)
		case k == "input":
			inputE, err = p.Parse(el.Value())
		case k == "value" && !unset:
			valueE, err = p.Parse(el.Value())
		default:
			return nil, exprErr(4161101, "%s found an unknown argument: %s", name, k)
		}
		if err != nil {
			return nil, err
		}
	}
	if unset {
		valueE = Const(Missing)
	}
	switch {
	case fieldE == nil:
		return nil, exprErr(4161102, "%s requires 'field' to be specified", name)
	case valueE == nil:
		return nil, exprErr(4161103, "%s requires 'value' to be specified", name)
	case inputE == nil:
		return nil, exprErr(4161109, "%s requires 'input' to be specified", name)
	}
	field, err := constFieldName(fieldRaw, name, 4161108, 4161106, 4161107)
	if err != nil {
		return nil, err
	}
	return &setFieldExpr{field: field, input: inputE, value: valueE}, nil
}

// objectToArray turns {a: 1} into [{k: "a", v: 1}].
func objectToArray(v []bson.RawValue) (bson.RawValue, error) {
	in := v[0]
	if IsNullish(in) {
		return Null(), nil
	}
	if in.Type != bson.TypeEmbeddedDocument {
		return bson.RawValue{}, exprErr(40390, "$objectToArray requires a document input, found: %s", typeName(in))
	}
	b := NewArrayBuilder(8)
	bsonkit.ForEach(in.Value, func(k string, fv bson.RawValue) bool {
		d := NewDocBuilder()
		d.Append("k", String(k))
		d.Append("v", fv)
		b.Append(Doc(d.Doc()))
		return b.Size() <= MaxBSONSize
	})
	if b.Size() > MaxBSONSize {
		return bson.RawValue{}, errTooLarge()
	}
	return b.Value(), nil
}

// arrayToObject turns [[k, v], …] or [{k, v}, …] into a document; a
// repeated key keeps its first position and its last value.
func arrayToObject(v []bson.RawValue) (bson.RawValue, error) {
	in := v[0]
	if IsNullish(in) {
		return Null(), nil
	}
	if in.Type != bson.TypeArray {
		return bson.RawValue{}, exprErr(40386, "$arrayToObject requires an array input, found: %s", typeName(in))
	}
	elems := Values(in)
	f := newFieldList()
	if len(elems) == 0 {
		return f.doc()
	}
	pairs := elems[0].Type == bson.TypeArray
	if !pairs && elems[0].Type != bson.TypeEmbeddedDocument {
		return bson.RawValue{}, exprErr(40398, "Unrecognised input type format for $arrayToObject: %s", typeName(elems[0]))
	}
	for _, el := range elems {
		var key, val bson.RawValue
		if pairs {
			if el.Type != bson.TypeArray {
				return bson.RawValue{}, exprErr(40396, "$arrayToObject requires a consistent input format. Elements mustall be arrays or all be objects. Array was detected, now found: %s", typeName(el))
			}
			kv := Values(el)
			if len(kv) != 2 {
				return bson.RawValue{}, exprErr(40397, "$arrayToObject requires an array of size 2 arrays,found array of size: %d", len(kv))
			}
			if kv[0].Type != bson.TypeString {
				return bson.RawValue{}, exprErr(40395, "$arrayToObject requires an array of key-value pairs, where the key must be of type string. Found key type: %s", typeName(kv[0]))
			}
			key, val = kv[0], kv[1]
			if strings.IndexByte(key.StringValue(), 0) >= 0 {
				return bson.RawValue{}, exprErr(4940400, "Key field cannot contain an embedded null byte")
			}
		} else {
			if el.Type != bson.TypeEmbeddedDocument {
				return bson.RawValue{}, exprErr(40391, "$arrayToObject requires a consistent input format. Elements mustall be arrays or all be objects. Object was detected, now found: %s", typeName(el))
			}
			if n := bsonkit.Len(el.Value); n != 2 {
				return bson.RawValue{}, exprErr(40392, "$arrayToObject requires an object keys of 'k' and 'v'. Found incorrect number of keys:%d", n)
			}
			var kok, vok bool
			key, kok = bsonkit.Field(el.Value, "k")
			val, vok = bsonkit.Field(el.Value, "v")
			if !kok || !vok {
				return bson.RawValue{}, exprErr(40393, "$arrayToObject requires an object with keys 'k' and 'v'. Missing either or both keys from: %s", valueString(el))
			}
			if key.Type != bson.TypeString {
				return bson.RawValue{}, exprErr(40394, "$arrayToObject requires an object with keys 'k' and 'v', where the value of 'k' must be of type string. Found type: %s", typeName(key))
			}
			if strings.IndexByte(key.StringValue(), 0) >= 0 {
				return bson.RawValue{}, exprErr(4940401, "Key field cannot contain an embedded null byte")
			}
		}
		f.set(key.StringValue(), val)
		if f.size > MaxBSONSize {
			return bson.RawValue{}, errTooLarge()
		}
	}
	return f.doc()
}
