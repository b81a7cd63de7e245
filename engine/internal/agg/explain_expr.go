package agg

import (
	"strings"

	"go.mongodb.org/mongo-driver/v2/bson"

	"github.com/formworkdb/formwork/engine/internal/expr"
)

// explainExpr returns the expression v as mongod 7.0's explain prints a
// parsed expression, as far as that is a rewrite of the syntax: a literal
// becomes {$const: v} ($literal too), an array of constants one constant
// array, and operators and object literals keep their shape with their
// operands rewritten. Field paths and variables stay strings. Unlike
// mongod it folds no operator applied to constants.
func explainExpr(v bson.RawValue, depth int) bson.RawValue {
	if depth > expr.MaxDepth {
		return v
	}
	switch v.Type {
	case bson.TypeString:
		if strings.HasPrefix(v.StringValue(), "$") {
			return v
		}
	case bson.TypeArray:
		vals, _ := v.Array().Values()
		b := expr.NewArrayBuilder(len(vals))
		allConst := true
		for _, x := range vals {
			e := explainExpr(x, depth+1)
			if _, ok := constOf(e); !ok {
				allConst = false
			}
			b.Append(e)
		}
		if allConst {
			return constDoc(v)
		}
		return b.Value()
	case bson.TypeEmbeddedDocument:
		elems, err := v.Document().Elements()
		if err != nil || len(elems) == 0 {
			break
		}
		if k := elems[0].Key(); strings.HasPrefix(k, "$") {
			if k == "$literal" || k == "$const" {
				return constDoc(elems[0].Value())
			}
			b := expr.NewDocBuilder()
			b.Append(k, explainOperand(elems[0].Value(), depth+1))
			return expr.Doc(b.Doc())
		}
		b := expr.NewDocBuilder()
		for _, el := range elems {
			b.Append(el.Key(), explainExpr(el.Value(), depth+1))
		}
		return expr.Doc(b.Doc())
	}
	return constDoc(v)
}

// explainOperand rewrites an operator's operand: an argument list
// element by element, named arguments field by field, a single operand as
// an expression.
func explainOperand(v bson.RawValue, depth int) bson.RawValue {
	switch v.Type {
	case bson.TypeArray:
		vals, _ := v.Array().Values()
		b := expr.NewArrayBuilder(len(vals))
		for _, x := range vals {
			b.Append(explainExpr(x, depth+1))
		}
		return b.Value()
	case bson.TypeEmbeddedDocument:
		elems, err := v.Document().Elements()
		if err != nil || len(elems) == 0 || strings.HasPrefix(elems[0].Key(), "$") {
			break
		}
		b := expr.NewDocBuilder()
		for _, el := range elems {
			b.Append(el.Key(), explainNamed(el.Key(), el.Value(), depth+1))
		}
		return expr.Doc(b.Doc())
	}
	return explainExpr(v, depth)
}

// explainNamed rewrites one named argument: $switch's branches list holds
// {case, then} documents whose values are expressions.
func explainNamed(key string, v bson.RawValue, depth int) bson.RawValue {
	switch key {
	case "as", "sortBy":
		// A variable name, a sort specification: not expressions.
		return v
	}
	if key == "branches" && v.Type == bson.TypeArray {
		vals, _ := v.Array().Values()
		b := expr.NewArrayBuilder(len(vals))
		for _, x := range vals {
			b.Append(explainOperand(x, depth+1))
		}
		return b.Value()
	}
	return explainExpr(v, depth)
}

// constDoc returns {$const: v}.
func constDoc(v bson.RawValue) bson.RawValue {
	b := expr.NewDocBuilder()
	b.Append("$const", v)
	return expr.Doc(b.Doc())
}

// constOf returns the value of a {$const: v} document.
func constOf(v bson.RawValue) (bson.RawValue, bool) {
	d, ok := v.DocumentOK()
	if !ok {
		return bson.RawValue{}, false
	}
	elems, err := d.Elements()
	if err != nil || len(elems) != 1 || elems[0].Key() != "$const" {
		return bson.RawValue{}, false
	}
	return elems[0].Value(), true
}

// explainGroupSpec returns a $group specification with its _id and
// accumulator arguments as explain prints them.
func explainGroupSpec(spec bson.Raw) bson.Raw {
	elems, err := spec.Elements()
	if err != nil {
		return spec
	}
	b := expr.NewDocBuilder()
	for _, el := range elems {
		if el.Key() == "_id" {
			b.Append("_id", explainExpr(el.Value(), 0))
			continue
		}
		acc, ok := el.Value().DocumentOK()
		ae, err := acc.Elements()
		if !ok || err != nil || len(ae) != 1 {
			b.Append(el.Key(), el.Value())
			continue
		}
		arg := ae[0].Value()
		if d, ok := arg.DocumentOK(); ok {
			if de, err := d.Elements(); err == nil && len(de) > 0 && !strings.HasPrefix(de[0].Key(), "$") {
				// Named arguments ($topN, $accumulator, …) print as given.
				b.Append(el.Key(), el.Value())
				continue
			}
		}
		ab := expr.NewDocBuilder()
		ab.Append(ae[0].Key(), explainExpr(arg, 1))
		b.Append(el.Key(), expr.Doc(ab.Doc()))
	}
	return b.Doc()
}
