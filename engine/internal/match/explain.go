package match

import (
	"sort"

	"go.mongodb.org/mongo-driver/v2/bson"

	"github.com/formworkdb/formwork/engine/internal/bsonkit"
	"github.com/formworkdb/formwork/engine/internal/mongoerr"
)

// Explain returns the errInfo.details MongoDB 5.0+ reports when doc fails
// a collection validator that is this filter: for each failing clause its
// operatorName, specifiedAs, reason and the values it considered;
// $and/$or/$nor list their clauses (clausesNotSatisfied), $jsonSchema
// reports its schemaRulesNotSatisfied. doc must be a document f rejected.
//
// Divergence: an equality reports specifiedAs {path: value} whether the
// filter wrote {path: value} or {path: {$eq: value}} (mongod keeps the
// spelling), and a $not of a single equality reads as $ne.
// https://www.mongodb.com/docs/v7.0/core/schema-validation/view-validation-rules/
func (f *Filter) Explain(doc bson.Raw) bson.D {
	var st *evalState
	if f.env != nil {
		st = f.env.get()
		defer f.env.put(st)
	}
	x := &explainer{doc: doc, st: st}
	if d := x.node(f.root, false); d != nil {
		return d
	}
	return bson.D{{Key: "operatorName", Value: "$and"}, {Key: "clausesNotSatisfied", Value: bson.A{}}}
}

type explainer struct {
	doc bson.Raw
	st  *evalState
}

func (x *explainer) matches(n node) bool {
	if x.st != nil {
		x.st.err = nil
	}
	ok, _ := n.match(x.doc, x.st)
	return ok
}

// clauses explains the children of a logical operator: those that failed
// (or, inverted, matched).
func (x *explainer) clauses(op string, children []node, inverted bool) bson.D {
	key := "clausesNotSatisfied"
	if inverted {
		key = "clausesSatisfied"
	}
	out := bson.A{}
	for i, c := range children {
		if x.matches(c) != inverted {
			continue
		}
		if d := x.node(c, inverted); d != nil {
			out = append(out, bson.D{{Key: "index", Value: int32(i)}, {Key: "details", Value: d}})
		}
	}
	return bson.D{{Key: "operatorName", Value: op}, {Key: key, Value: out}}
}

// node explains n, which failed (inverted: matched) on the document.
func (x *explainer) node(n node, inverted bool) bson.D {
	switch t := n.(type) {
	case *andNode:
		if !inverted && len(t.children) > 1 {
			var real []node
			for _, c := range t.children {
				if l, ok := c.(*leafNode); !ok || l.kind != KindExprEq {
					real = append(real, c)
				}
			}
			if len(real) == 1 {
				return x.node(real[0], inverted)
			}
		}
		return x.clauses("$and", t.children, inverted)
	case *orNode:
		return x.clauses("$or", t.children, inverted)
	case *norNode:
		return x.clauses("$nor", t.children, !inverted)
	case *notNode:
		return x.not(t, inverted)
	case *constNode:
		name, reason := "$alwaysFalse", "expression always evaluates to false"
		if t.value {
			name, reason = "$alwaysTrue", "expression always evaluates to true"
		}
		return bson.D{{Key: "operatorName", Value: name}, {Key: "specifiedAs", Value: bson.D{{Key: name, Value: int32(1)}}}, {Key: "reason", Value: reason}}
	case *schemaNode:
		if inverted {
			return bson.D{{Key: "operatorName", Value: "$jsonSchema"}, {Key: "reason", Value: "schema matched"}}
		}
		return t.s.Explain(x.doc)
	case *exprNode:
		return x.expr(t, inverted)
	case *leafNode:
		if t.kind == KindExprEq {
			return nil
		}
		return x.leaf(t.path, t.kind, t.op, t.arg, "", inverted)
	case *arrayNode:
		return x.leaf(t.path, t.kind, t.op, t.arg, "", inverted)
	}
	return nil
}

// not explains $ne, $nin, {$exists: false} and $not.
func (x *explainer) not(t *notNode, inverted bool) bson.D {
	if l, ok := t.child.(*leafNode); ok {
		switch l.kind {
		case KindEq:
			return x.leaf(l.path, l.kind, l.op, l.arg, "$ne", !inverted)
		case KindIn:
			return x.leaf(l.path, l.kind, l.op, l.arg, "$nin", !inverted)
		case KindExists:
			return x.leaf(l.path, l.kind, l.op, l.arg, "$exists", !inverted)
		}
	}
	d := bson.D{{Key: "operatorName", Value: "$not"}}
	if c := x.node(t.child, !inverted); c != nil {
		d = append(d, bson.E{Key: "details", Value: c})
	}
	return d
}

// expr explains {$expr: ...} with the value the expression produced.
func (x *explainer) expr(t *exprNode, inverted bool) bson.D {
	d := bson.D{{Key: "operatorName", Value: "$expr"}, {Key: "specifiedAs", Value: bson.D{{Key: "$expr", Value: t.arg}}}}
	if x.st == nil {
		return d
	}
	x.st.c.SetRoot(x.doc)
	v, err := t.e.Eval(x.st.c)
	if err != nil {
		me := mongoerr.As(err)
		return append(d, bson.E{Key: "reason", Value: "failed to evaluate aggregation expression"},
			bson.E{Key: "details", Value: bson.D{{Key: "code", Value: int32(me.Code)}, {Key: "codeName", Value: me.Code.Name()}, {Key: "errmsg", Value: me.Msg}}})
	}
	reason := "expression did not match"
	if inverted {
		reason = "expression did match"
	}
	d = append(d, bson.E{Key: "reason", Value: reason})
	if v.Type != bsonkit.TypeMissing {
		d = append(d, bson.E{Key: "expressionResult", Value: v})
	}
	return d
}

// leafReasons are the reasons of the leaf operators, normal and inverted.
var leafReasons = map[Kind][2]string{
	KindEq: {"comparison failed", "comparison succeeded"}, KindLt: {"comparison failed", "comparison succeeded"},
	KindLte: {"comparison failed", "comparison succeeded"}, KindGt: {"comparison failed", "comparison succeeded"},
	KindGte:             {"comparison failed", "comparison succeeded"},
	KindIn:              {"no matching value found in array", "matching value found in array"},
	KindRegex:           {"regular expression did not match", "regular expression did match"},
	KindExists:          {"path does not exist", "path does exist"},
	KindType:            {"type did not match", "type did match"},
	KindSize:            {"array length was not equal to given size", "array length was equal to given size"},
	KindMod:             {"$mod did not evaluate to expected remainder", "$mod did evaluate to expected remainder"},
	KindBits:            {"bitwise operator failed to match", "bitwise operator matched successfully"},
	KindElemMatchObject: {"array did not satisfy the child predicate", "array did satisfy the child predicate"},
	KindElemMatchValue:  {"array did not satisfy the child predicate", "array did satisfy the child predicate"},
}

var leafOps = map[Kind]string{
	KindEq: "$eq", KindLt: "$lt", KindLte: "$lte", KindGt: "$gt", KindGte: "$gte", KindIn: "$in",
	KindRegex: "$regex", KindExists: "$exists", KindType: "$type", KindSize: "$size", KindMod: "$mod",
	KindElemMatchObject: "$elemMatch", KindElemMatchValue: "$elemMatch",
}

// leaf explains one predicate on a path; name overrides the operator name
// of a negated predicate ($ne, $nin, $exists false).
func (x *explainer) leaf(path string, kind Kind, op string, arg bson.RawValue, name string, inverted bool) bson.D {
	opName := leafOps[kind]
	if kind == KindBits {
		opName = op
	}
	specOp := opName
	if name != "" {
		opName, specOp = name, name
	}
	var spec bson.D
	switch {
	case kind == KindEq && name == "":
		spec = bson.D{{Key: path, Value: arg}}
	case kind == KindExists:
		spec = bson.D{{Key: path, Value: bson.D{{Key: "$exists", Value: !inverted}}}}
	default:
		spec = bson.D{{Key: path, Value: bson.D{{Key: specOp, Value: arg}}}}
	}
	d := bson.D{{Key: "operatorName", Value: opName}, {Key: "specifiedAs", Value: spec}}
	vals, exists := x.values(path, kind == KindSize || kind == KindElemMatchObject || kind == KindElemMatchValue)
	reasons := leafReasons[kind]
	reason := reasons[0]
	if inverted {
		reason = reasons[1]
	}
	if kind == KindExists {
		return append(d, bson.E{Key: "reason", Value: reason})
	}
	if !exists {
		return append(d, bson.E{Key: "reason", Value: "field was missing"})
	}
	d = append(d, bson.E{Key: "reason", Value: reason})
	if len(vals) == 1 {
		d = append(d, bson.E{Key: "consideredValue", Value: vals[0]})
	} else {
		arr := bson.A{}
		for _, v := range vals {
			arr = append(arr, v)
		}
		d = append(d, bson.E{Key: "consideredValues", Value: arr})
	}
	if kind == KindType && len(vals) > 0 {
		set := map[string]bool{}
		for _, v := range vals {
			set[bsonkit.TypeName(v.Type)] = true
		}
		var names []string
		for n := range set {
			names = append(names, n)
		}
		sort.Strings(names)
		if len(names) == 1 {
			d = append(d, bson.E{Key: "consideredType", Value: names[0]})
		} else {
			d = append(d, bson.E{Key: "consideredTypes", Value: names})
		}
	}
	return d
}

// values returns the values path reaches, leaf arrays expanded into their
// elements (not, with whole, kept whole), and whether the path exists.
func (x *explainer) values(path string, whole bool) ([]bson.RawValue, bool) {
	var out []bson.RawValue
	exists := false
	bsonkit.Walk(x.doc, bsonkit.SplitPath(path), !whole, func(v bson.RawValue, pos int) bool {
		if v.Type == bsonkit.TypeMissing {
			return false
		}
		exists = true
		if !whole && v.Type == bson.TypeArray && pos < 0 {
			return false // the leaf array itself: its elements follow
		}
		out = append(out, v)
		return len(out) >= maxConsidered
	})
	return out, exists
}

// maxConsidered is how many values an error lists (mongod's
// maxConsideredValues default).
const maxConsidered = 10
