package plan

import (
	"sort"
	"strconv"
	"strings"

	"go.mongodb.org/mongo-driver/v2/bson"

	"github.com/formworkdb/formwork/engine/internal/bsonkit"
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

// expr is one node of a filter as the planner sees it. The match package
// evaluates filters; expr exists to derive index bounds, to split a filter
// into the part an index answers and the rest, and to print filters the way
// mongod's explain does.
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
}

// parser turns a filter document into an expr tree.
type parser struct{ groups int }

// parseFilter parses a filter that match.Compile accepted.
func parseFilter(filter bson.Raw) *expr {
	p := &parser{}
	return simplify(p.doc(filter, "", 0, ""))
}

func (p *parser) doc(d bson.Raw, prefix string, group int, groupPath string) *expr {
	and := &expr{kind: kAnd}
	bsonkit.ForEach(d, func(k string, v bson.RawValue) bool {
		switch k {
		case "$and", "$or", "$nor":
			n := &expr{kind: kAnd}
			if k == "$or" {
				n.kind = kOr
			} else if k == "$nor" {
				n.kind = kNor
			}
			for _, c := range bsonkit.Values(v.Value) {
				if cd, ok := c.DocumentOK(); ok {
					n.children = append(n.children, p.doc(cd, prefix, group, groupPath))
				}
			}
			and.children = append(and.children, n)
		case "$comment":
		case "$alwaysTrue":
			and.children = append(and.children, &expr{kind: kAnd})
		case "$alwaysFalse":
			and.children = append(and.children, &expr{kind: kOr})
		default:
			if strings.HasPrefix(k, "$") {
				and.children = append(and.children, &expr{kind: kOther, op: k, val: v})
				return true
			}
			and.children = append(and.children, p.field(join(prefix, k), v, group, groupPath)...)
		}
		return true
	})
	return and
}

func join(prefix, k string) string {
	if prefix == "" {
		return k
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

func (p *parser) field(path string, v bson.RawValue, group int, groupPath string) []*expr {
	leaf := func(k kind, val bson.RawValue) *expr {
		return &expr{kind: k, path: path, val: val, group: group, groupPath: groupPath}
	}
	if v.Type == bson.TypeRegex {
		return []*expr{leaf(kRegex, v)}
	}
	if !isOperatorDoc(v) {
		return []*expr{leaf(kEq, v)}
	}
	var out []*expr
	d := v.Document()
	var regex, options bson.RawValue
	hasRegex := false
	bsonkit.ForEach(d, func(op string, a bson.RawValue) bool {
		switch op {
		case "$eq":
			out = append(out, leaf(kEq, a))
		case "$ne":
			out = append(out, &expr{kind: kNot, path: path, group: group, groupPath: groupPath, children: []*expr{leaf(kEq, a)}})
		case "$gt":
			out = append(out, leaf(kGt, a))
		case "$gte":
			out = append(out, leaf(kGte, a))
		case "$lt":
			out = append(out, leaf(kLt, a))
		case "$lte":
			out = append(out, leaf(kLte, a))
		case "$in":
			out = append(out, p.in(path, a, group, groupPath))
		case "$nin":
			out = append(out, &expr{kind: kNot, path: path, group: group, groupPath: groupPath, children: []*expr{p.in(path, a, group, groupPath)}})
		case "$exists":
			e := leaf(kExists, a)
			if !truthy(a) {
				e = &expr{kind: kNot, path: path, group: group, groupPath: groupPath, children: []*expr{e}}
			}
			out = append(out, e)
		case "$type":
			e := leaf(kType, a)
			if a.Type == bson.TypeArray {
				e.types = bsonkit.Values(a.Value)
			} else {
				e.types = []bson.RawValue{a}
			}
			out = append(out, e)
		case "$regex":
			regex, hasRegex = a, true
		case "$options":
			options = a
		case "$not":
			var child *expr
			if a.Type == bson.TypeRegex {
				child = leaf(kRegex, a)
			} else if ad, ok := a.DocumentOK(); ok {
				cs := p.field(path, bson.RawValue{Type: bson.TypeEmbeddedDocument, Value: ad}, group, groupPath)
				child = &expr{kind: kAnd, children: cs}
			}
			if child != nil {
				out = append(out, &expr{kind: kNot, path: path, group: group, groupPath: groupPath, children: []*expr{simplify(child)}})
			}
		case "$elemMatch":
			out = append(out, p.elemMatch(path, a, group, groupPath))
		case "$size":
			e := leaf(kSize, a)
			e.op = op
			out = append(out, e)
		case "$mod":
			e := leaf(kMod, a)
			e.op = op
			out = append(out, e)
		case "$bitsAllSet", "$bitsAnySet", "$bitsAllClear", "$bitsAnyClear":
			e := leaf(kBits, a)
			e.op = op
			out = append(out, e)
		case "$all":
			arr := bsonkit.Values(a.Value)
			if len(arr) == 0 {
				out = append(out, &expr{kind: kOr})
			}
			for _, x := range arr {
				if isOperatorDoc(x) {
					if xd, ok := x.DocumentOK(); ok {
						if em, err := xd.LookupErr("$elemMatch"); err == nil {
							out = append(out, p.elemMatch(path, em, group, groupPath))
							continue
						}
					}
				}
				if x.Type == bson.TypeRegex {
					out = append(out, leaf(kRegex, x))
				} else {
					out = append(out, leaf(kEq, x))
				}
			}
		default:
			e := leaf(kOther, a)
			e.op = op
			out = append(out, e)
		}
		return true
	})
	if hasRegex {
		e := leaf(kRegex, regex)
		if regex.Type == bson.TypeString {
			opts, _ := options.StringValueOK()
			e.val = regexValue(regex.StringValue(), opts)
		} else if regex.Type == bson.TypeRegex && options.Type == bson.TypeString {
			pat, _ := regex.Regex()
			e.val = regexValue(pat, options.StringValue())
		}
		out = append(out, e)
	}
	return out
}

func (p *parser) in(path string, a bson.RawValue, group int, groupPath string) *expr {
	e := &expr{kind: kIn, path: path, group: group, groupPath: groupPath}
	for _, x := range bsonkit.Values(a.Value) {
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
	return e
}

func (p *parser) elemMatch(path string, a bson.RawValue, group int, groupPath string) *expr {
	d, _ := a.DocumentOK()
	if isOperatorDoc(a) {
		// $elemMatch over values: {$gt: 1, $lt: 5} applied to each element.
		n := &expr{kind: kElemVal, path: path, group: group, groupPath: groupPath}
		n.children = p.field(path, a, 0, "")
		return n
	}
	p.groups++
	n := &expr{kind: kElemObj, path: path, group: group, groupPath: groupPath}
	n.children = []*expr{simplify(p.doc(d, path, p.groups, path))}
	return n
}

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
			return &expr{kind: kEq, path: e.path, val: e.vals[0], group: e.group, groupPath: e.groupPath}
		}
	}
	return e
}

func sortChildren(cs []*expr) {
	sort.SliceStable(cs, func(i, j int) bool {
		a, b := cs[i], cs[j]
		if a.kind != b.kind {
			return a.kind < b.kind
		}
		return a.path < b.path
	})
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
		b.WriteString(":" + strconv.Itoa(bsonkit.CanonicalType(e.val.Type)))
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
