package expr

import (
	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/x/bsonx/bsoncore"
)

// constExpr is a literal value.
type constExpr struct{ v bson.RawValue }

// Const returns an expression that always evaluates to v.
func Const(v bson.RawValue) Expr { return &constExpr{v: v} }

func (e *constExpr) Eval(*Ctx) (bson.RawValue, error) { return e.v, nil }

// IsConst reports whether e is a constant and returns its value. Optimisers
// use it to fold and to recognise constant group keys.
func IsConst(e Expr) (bson.RawValue, bool) {
	if c, ok := e.(*constExpr); ok {
		return c.v, true
	}
	return bson.RawValue{}, false
}

// arrayExpr is an array literal whose elements are expressions; a missing
// element becomes null.
type arrayExpr struct{ elems []Expr }

func (e *arrayExpr) Eval(c *Ctx) (bson.RawValue, error) {
	b := NewArrayBuilder(len(e.elems))
	for _, el := range e.elems {
		v, err := el.Eval(c)
		if err != nil {
			return bson.RawValue{}, err
		}
		if v.Type == 0 {
			v = Null()
		}
		b.Append(v)
	}
	return b.Value(), nil
}

// objectExpr is an object literal {k: expr, …}; a field whose value is
// missing is left out.
type objectExpr struct {
	keys []string
	vals []Expr
}

func (e *objectExpr) Eval(c *Ctx) (bson.RawValue, error) {
	idx, dst := bsoncore.AppendDocumentStart(nil)
	for i, k := range e.keys {
		v, err := e.vals[i].Eval(c)
		if err != nil {
			return bson.RawValue{}, err
		}
		if v.Type == 0 {
			continue
		}
		dst = bsoncore.AppendValueElement(dst, k, bsoncore.Value{Type: bsoncore.Type(v.Type), Data: v.Value})
	}
	dst, _ = bsoncore.AppendDocumentEnd(dst, idx)
	if len(dst) > MaxBSONSize {
		return bson.RawValue{}, errTooLarge()
	}
	return Doc(bson.Raw(dst)), nil
}

// ObjectFields returns the field names and expressions of an object
// expression, for stages such as $addFields that merge fields into the
// document instead of building a new one.
func ObjectFields(e Expr) ([]string, []Expr, bool) {
	o, ok := e.(*objectExpr)
	if !ok {
		return nil, nil, false
	}
	return o.keys, o.vals, true
}

// pathExpr reads a variable and follows a field path inside it.
type pathExpr struct {
	slot  int
	parts []string // nil: the whole variable
}

func (e *pathExpr) Eval(c *Ctx) (bson.RawValue, error) {
	v := c.Get(e.slot)
	if e.parts == nil {
		return v, nil
	}
	if len(e.parts) == 1 && v.Type == bson.TypeEmbeddedDocument {
		// The common "$field": one lookup, no allocation.
		f, _ := lookupField(v.Value, e.parts[0])
		return f, nil
	}
	return walkPath(v, e.parts), nil
}

// FieldPath reports whether e is a plain "$a.b" path on $$CURRENT and
// returns the dotted path.
func FieldPath(e Expr) (string, bool) {
	p, ok := e.(*pathExpr)
	if !ok || p.slot != SlotCurrent || p.parts == nil {
		return "", false
	}
	s := p.parts[0]
	for _, part := range p.parts[1:] {
		s += "." + part
	}
	return s, true
}

// walkPath follows parts through documents; at an array it collects the
// path's value in each element that is a document, as MongoDB's
// ExpressionFieldPath does (numeric components are field names, never
// array positions).
func walkPath(v bson.RawValue, parts []string) bson.RawValue {
	for i, part := range parts {
		switch v.Type {
		case bson.TypeEmbeddedDocument:
			f, ok := lookupField(v.Value, part)
			if !ok {
				return bson.RawValue{}
			}
			v = f
		case bson.TypeArray:
			return walkArray(v, parts[i:])
		default:
			return bson.RawValue{}
		}
	}
	return v
}

func walkArray(arr bson.RawValue, parts []string) bson.RawValue {
	vals, _ := arr.Array().Values()
	b := NewArrayBuilder(len(vals))
	for _, el := range vals {
		if el.Type != bson.TypeEmbeddedDocument {
			continue
		}
		if r := walkPath(el, parts); r.Type != 0 {
			b.Append(r)
		}
	}
	return b.Value()
}

// nowExpr is $$NOW: the command's start time, the same for every document.
type nowExpr struct{ parts []string }

func (e *nowExpr) Eval(c *Ctx) (bson.RawValue, error) {
	if e.parts != nil {
		return bson.RawValue{}, nil
	}
	return Date(c.Now.UnixMilli()), nil
}

// clusterTimeExpr is $$CLUSTER_TIME.
type clusterTimeExpr struct{ parts []string }

func (e *clusterTimeExpr) Eval(c *Ctx) (bson.RawValue, error) {
	if e.parts != nil {
		return bson.RawValue{}, nil
	}
	return Timestamp(c.ClusterTime), nil
}
