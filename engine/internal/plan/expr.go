package plan

import (
	"sort"
	"strconv"
	"strings"

	"go.mongodb.org/mongo-driver/v2/bson"

	"github.com/formworkdb/formwork/engine/internal/bsonkit"
	"github.com/formworkdb/formwork/engine/internal/match"
)

// kind is the type of a parsed filter node. The order is mongod's
// MatchExpression::MatchType order, which sorts the children of $and in
// parsedQuery and filters.
type kind int

const (
	kAnd kind = iota
	kOr
	kElemObj
	kElemVal
	kSize
	kEq
	kLte
	kLt
	kGt
	kGte
	kRegex
	kMod
	kExists
	kIn
	kBits
	kNot
	kNor
	kType
	kOther
)

// expr is one node of a filter as the planner sees it, converted from
// match's compiled tree (fromMatch), never parsed from the filter again.
// The match package evaluates filters; expr exists to derive index bounds,
// to split a filter into the part an index answers and the rest, and to
// print filters the way mongod's explain does.
type expr struct {
	kind     kind
	path     string // full dotted path of a leaf, elemMatch or $not node
	val      bson.RawValue
	vals     []bson.RawValue // kIn equalities, sorted and distinct
	regexes  []bson.RawValue // kIn regexes
	types    []bson.RawValue // kType arguments as given
	op       string          // operator name of kOther, kBits, kMod, kSize
	children []*expr
	// group identifies the $elemMatch object a leaf sits under (0: none);
	// groupPath is that $elemMatch's path.
	group     int
	groupPath string
	// src is the match node that evaluates this expression (nil for an
	// $and the planner assembled).
	src *match.Node
}

// parseFilter compiles a filter with match and returns the planner's
// tree of it; a filter match rejects yields an empty tree. The query path
// does not use it: it converts the query's own compiled filter (fromMatch).
func parseFilter(filter bson.Raw) *expr {
	f, err := match.Compile(filter)
	if err != nil {
		return &expr{kind: kAnd}
	}
	return fromMatch(f)
}

// fromMatch returns the planner's tree of a compiled filter: the same
// predicates, normalised (flattened, sorted, $in split into values and
// regexes), each leaf keeping the match node that evaluates it.
func fromMatch(f *match.Filter) *expr {
	c := &converter{}
	return simplify(c.node(f.View(), "", 0, ""))
}

// converter turns match's view of a filter into an expr tree, numbering
// the $elemMatch objects.
type converter struct{ groups int }

var viewKinds = map[match.Kind]kind{
	match.KindAnd: kAnd, match.KindOr: kOr, match.KindNor: kNor,
	match.KindEq: kEq, match.KindLt: kLt, match.KindLte: kLte, match.KindGt: kGt, match.KindGte: kGte,
	match.KindRegex: kRegex, match.KindExists: kExists, match.KindSize: kSize, match.KindMod: kMod, match.KindBits: kBits,
}

// node converts v, whose paths are relative to prefix (an $elemMatch
// element), under $elemMatch group group (0: none) at groupPath.
func (c *converter) node(v *match.Node, prefix string, group int, groupPath string) *expr {
	e := &expr{path: join(prefix, v.Path), val: v.Value, op: v.Op, group: group, groupPath: groupPath, src: v}
	switch v.Kind {
	case match.KindAnd, match.KindOr, match.KindNor:
		e.kind, e.path, e.group, e.groupPath = viewKinds[v.Kind], "", 0, ""
		for _, ch := range v.Children {
			e.children = append(e.children, c.node(ch, prefix, group, groupPath))
		}
	case match.KindTrue:
		return &expr{kind: kAnd}
	case match.KindFalse:
		return &expr{kind: kOr}
	case match.KindNot:
		e.kind = kNot
		e.children = []*expr{simplify(c.node(v.Children[0], prefix, group, groupPath))}
	case match.KindIn:
		e.kind, e.val = kIn, bson.RawValue{}
		for _, x := range bsonkit.Values(v.Value.Value) {
			if x.Type == bson.TypeRegex {
				e.regexes = append(e.regexes, x)
				continue
			}
			e.vals = append(e.vals, x)
		}
		sort.SliceStable(e.vals, func(i, j int) bool { return bsonkit.Compare(e.vals[i], e.vals[j]) < 0 })
		uniq := e.vals[:0]
		for i, x := range e.vals {
			if i == 0 || bsonkit.Compare(x, uniq[len(uniq)-1]) != 0 {
				uniq = append(uniq, x)
			}
		}
		e.vals = uniq
	case match.KindType:
		e.kind = kType
		if v.Value.Type == bson.TypeArray {
			e.types = bsonkit.Values(v.Value.Value)
		} else {
			e.types = []bson.RawValue{v.Value}
		}
	case match.KindElemMatchValue:
		// $elemMatch over values: {$gt: 1, $lt: 5} applied to each element.
		e.kind = kElemVal
		for _, ch := range v.Children {
			e.children = append(e.children, c.node(ch, e.path, 0, ""))
		}
	case match.KindElemMatchObject:
		c.groups++
		g := c.groups
		e.kind = kElemObj
		e.children = []*expr{simplify(c.node(v.Children[0], e.path, g, e.path))}
	case match.KindExpr:
		e.kind, e.path, e.op = kOther, "", "$expr"
	case match.KindExprEq:
		// mongod's $_internalExprEq: equality bounds, printed as itself.
		e.kind = kEq
	default:
		k, ok := viewKinds[v.Kind]
		if !ok {
			k = kOther
		}
		e.kind = k
	}
	return e
}

// join appends a relative path to prefix; "" is the prefix itself (the
// element an $elemMatch on values tests).
func join(prefix, k string) string {
	switch {
	case prefix == "":
		return k
	case k == "":
		return prefix
	}
	return prefix + "." + k
}

// isOperatorDoc reports whether v is {$op: ...} rather than a document
// literal.
func isOperatorDoc(v bson.RawValue) bool {
	d, ok := v.DocumentOK()
	if !ok {
		return false
	}
	e, err := d.IndexErr(0)
	return err == nil && strings.HasPrefix(e.Key(), "$")
}

// simplify flattens nested $and, drops single-child $and/$or wrappers,
// turns a one-value $in into $eq, and sorts $and/$or children in mongod's
// canonical order.
func simplify(e *expr) *expr {
	for i, c := range e.children {
		e.children[i] = simplify(c)
	}
	switch e.kind {
	case kAnd:
		var flat []*expr
		for _, c := range e.children {
			if c.kind == kAnd {
				flat = append(flat, c.children...)
			} else {
				flat = append(flat, c)
			}
		}
		e.children = flat
		sortChildren(e.children)
		if len(e.children) == 1 {
			return e.children[0]
		}
	case kOr:
		var flat []*expr
		for _, c := range e.children {
			if c.kind == kOr && len(c.children) > 0 {
				flat = append(flat, c.children...)
			} else {
				flat = append(flat, c)
			}
		}
		e.children = flat
		sortChildren(e.children)
		if len(e.children) == 1 {
			return e.children[0]
		}
	case kIn:
		if len(e.vals) == 1 && len(e.regexes) == 0 {
			return &expr{kind: kEq, path: e.path, val: e.vals[0], group: e.group, groupPath: e.groupPath, src: e.src}
		}
	}
	return e
}

func sortChildren(cs []*expr) {
	sort.SliceStable(cs, func(i, j int) bool {
		a, b := cs[i], cs[j]
		if ra, rb := a.rank(), b.rank(); ra != rb {
			return ra < rb
		}
		return a.path < b.path
	})
}

// internalExprEq is the operator mongod gives the equality it derives
// from an $expr (RewriteExpr).
const internalExprEq = "$_internalExprEq"

// rank is e's position in mongod's MatchType order: $_internalExprEq
// sorts after $expr.
func (e *expr) rank() kind {
	if e.op == internalExprEq {
		return kOther + 1
	}
	return e.kind
}

// leaves returns the conjuncts of e: its children when e is an $and, else e.
func (e *expr) conjuncts() []*expr {
	if e == nil {
		return nil
	}
	if e.kind == kAnd {
		return e.children
	}
	return []*expr{e}
}

// opName returns the operator mongod prints for a comparison kind.
func opName(k kind) string {
	switch k {
	case kEq:
		return "$eq"
	case kLte:
		return "$lte"
	case kLt:
		return "$lt"
	case kGt:
		return "$gt"
	case kGte:
		return "$gte"
	case kIn:
		return "$in"
	case kExists:
		return "$exists"
	case kType:
		return "$type"
	case kRegex:
		return "$regex"
	}
	return ""
}

// serialize renders e as mongod's MatchExpression::serialize does; paths
// are made relative to base (the enclosing $elemMatch path).
func (e *expr) serialize(base string) bson.D {
	rel := func(p string) string {
		if base != "" && strings.HasPrefix(p, base+".") {
			return p[len(base)+1:]
		}
		return p
	}
	switch e.kind {
	case kAnd, kOr, kNor:
		name := map[kind]string{kAnd: "$and", kOr: "$or", kNor: "$nor"}[e.kind]
		if len(e.children) == 0 {
			if e.kind == kOr {
				return bson.D{{Key: "$alwaysFalse", Value: int32(1)}}
			}
			return bson.D{}
		}
		arr := bson.A{}
		for _, c := range e.children {
			arr = append(arr, c.serialize(base))
		}
		return bson.D{{Key: name, Value: arr}}
	case kElemObj:
		return bson.D{{Key: rel(e.path), Value: bson.D{{Key: "$elemMatch", Value: e.children[0].serialize(e.path)}}}}
	case kElemVal:
		var ops bson.D
		for _, c := range e.children {
			ops = append(ops, c.opPart()...)
		}
		return bson.D{{Key: rel(e.path), Value: bson.D{{Key: "$elemMatch", Value: ops}}}}
	case kNot:
		c := e.children[0]
		if c.kind == kAnd || c.kind == kOr || c.path == "" {
			return bson.D{{Key: "$nor", Value: bson.A{c.serialize(base)}}}
		}
		return bson.D{{Key: rel(e.path), Value: bson.D{{Key: "$not", Value: c.opPart()}}}}
	case kOther:
		if e.path == "" {
			return bson.D{{Key: e.op, Value: e.val}}
		}
	}
	return bson.D{{Key: rel(e.path), Value: e.opPart()}}
}

// opPart renders a leaf's operator document {$op: value}.
func (e *expr) opPart() bson.D {
	switch e.kind {
	case kEq, kLte, kLt, kGt, kGte:
		if e.op == internalExprEq {
			return bson.D{{Key: e.op, Value: e.val}}
		}
		return bson.D{{Key: opName(e.kind), Value: e.val}}
	case kRegex:
		pat, opts := regexParts(e.val)
		d := bson.D{{Key: "$regex", Value: pat}}
		if opts != "" {
			d = append(d, bson.E{Key: "$options", Value: opts})
		}
		return d
	case kExists:
		return bson.D{{Key: "$exists", Value: true}}
	case kIn:
		arr := bson.A{}
		for _, v := range mergeIn(e) {
			arr = append(arr, v)
		}
		return bson.D{{Key: "$in", Value: arr}}
	case kType:
		arr := bson.A{}
		for _, t := range e.types {
			if s, ok := t.StringValueOK(); ok {
				if s == "number" {
					arr = append(arr, "number")
					continue
				}
				if bt, ok := bsonkit.TypeByName(s); ok {
					arr = append(arr, int32(bt))
					continue
				}
			}
			if n, ok := bsonkit.Float64(t); ok {
				arr = append(arr, int32(n))
			}
		}
		return bson.D{{Key: "$type", Value: arr}}
	case kNot:
		return bson.D{{Key: "$not", Value: e.children[0].opPart()}}
	case kElemVal:
		var ops bson.D
		for _, c := range e.children {
			ops = append(ops, c.opPart()...)
		}
		return bson.D{{Key: "$elemMatch", Value: ops}}
	}
	return bson.D{{Key: e.op, Value: e.val}}
}

func mergeIn(e *expr) []bson.RawValue {
	out := append([]bson.RawValue(nil), e.vals...)
	return append(out, e.regexes...)
}

// regexValue builds a BSON regex value.
func regexValue(pattern, options string) bson.RawValue {
	b := append([]byte(pattern), 0)
	b = append(append(b, options...), 0)
	return bson.RawValue{Type: bson.TypeRegex, Value: b}
}

func regexParts(v bson.RawValue) (string, string) {
	if v.Type == bson.TypeRegex {
		return v.Regex()
	}
	s, _ := v.StringValueOK()
	return s, ""
}

// shape appends the query shape of e (operators and paths, not values) to
// b; it keys the plan cache as mongod's queryHash does.
func (e *expr) shape(b *strings.Builder) {
	b.WriteString(strconv.Itoa(int(e.kind)))
	b.WriteString(e.path)
	if e.group != 0 {
		b.WriteString("@" + e.groupPath)
	}
	switch e.kind {
	case kEq, kLt, kLte, kGt, kGte:
		b.WriteString(e.op + ":" + strconv.Itoa(bsonkit.CanonicalType(e.val.Type)))
		if e.val.Type == bson.TypeNull || e.val.Type == bson.TypeArray {
			b.WriteString("!")
		}
	case kRegex:
		pat, opts := regexParts(e.val)
		b.WriteString("/" + pat + "/" + opts)
	case kIn:
		b.WriteString(":" + strconv.Itoa(len(e.vals)) + "/" + strconv.Itoa(len(e.regexes)))
	case kOther, kBits, kMod, kSize:
		b.WriteString(e.op)
	}
	b.WriteByte('(')
	for _, c := range e.children {
		c.shape(b)
		b.WriteByte(',')
	}
	b.WriteByte(')')
}

// truthy is mongod's BSONElement::trueValue.
func truthy(v bson.RawValue) bool {
	switch v.Type {
	case bson.TypeBoolean:
		return v.Boolean()
	case bson.TypeNull, bson.TypeUndefined:
		return false
	}
	if bsonkit.IsNumber(v.Type) {
		f, _ := bsonkit.Float64(v)
		return f != 0
	}
	return true
}
