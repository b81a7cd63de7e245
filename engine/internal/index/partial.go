package index

import (
	"bytes"
	"math"
	"strconv"
	"strings"

	"go.mongodb.org/mongo-driver/v2/bson"

	"github.com/formworkdb/formwork/engine/internal/keystring"
	"github.com/formworkdb/formwork/engine/internal/mongoerr"
	"github.com/formworkdb/formwork/engine/internal/regex"
)

// QueryFeatureNotAllowed is mongod's code 224; mongoerr lacks the constant.
const queryFeatureNotAllowed = mongoerr.Code(224)

// maxPartialDepth is mongod's internalPartialFilterExpressionMaxDepth.
const maxPartialDepth = 4

// filterOp is a node of a parsed partialFilterExpression.
type filterOp int

const (
	opAnd filterOp = iota
	opOr
	opEq
	opLt
	opLte
	opGt
	opGte
	opExists
	opType
	opIn
	// opUnsupported is a valid query operator that partial indexes reject;
	// debug holds mongod's debugString of it.
	opUnsupported
)

// filterNode is the parsed form of a partialFilterExpression: the subset of
// the query language that mongod 7.0 accepts in partial indexes ($and, $or,
// equality, $lt/$lte/$gt/$gte, $exists: true, $type, $in), evaluated here
// so that index key generation does not depend on the match package.
type filterNode struct {
	op       filterOp
	children []*filterNode
	path     string
	parts    []string
	value    bson.RawValue   // opEq and comparisons
	values   []bson.RawValue // opIn (non-regex)
	regexes  []*regex.Regexp
	types    []bson.Type // opType; 0 stands for "number"
	exists   bool
	debug    string
}

// parseFilter parses a partialFilterExpression. Unknown or malformed
// operators return mongod's parse errors (BadValue, QueryFeatureNotAllowed);
// operators that exist but are not allowed in a partial index parse to
// opUnsupported and are rejected by checkPartialSupported.
func parseFilter(doc bson.Raw) (*filterNode, error) {
	return parseFilterDoc(doc, 0)
}

func parseFilterDoc(doc bson.Raw, depth int) (*filterNode, error) {
	if depth > 100 {
		return nil, mongoerr.New(mongoerr.BadValue, "exceeded depth limit of 100 when parsing partialFilterExpression")
	}
	and := &filterNode{op: opAnd}
	for _, e := range mustElems(doc) {
		k, v := e.Key(), e.Value()
		if strings.HasPrefix(k, "$") {
			n, err := parseTopLevel(k, v, depth)
			if err != nil {
				return nil, err
			}
			if n != nil {
				and.children = append(and.children, n)
			}
			continue
		}
		ns, err := parsePathValue(k, v)
		if err != nil {
			return nil, err
		}
		and.children = append(and.children, ns...)
	}
	if len(and.children) == 1 {
		return and.children[0], nil
	}
	return and, nil
}

func parseTopLevel(k string, v bson.RawValue, depth int) (*filterNode, error) {
	switch k {
	case "$and", "$or", "$nor":
		arr, ok := v.ArrayOK()
		vals, _ := arr.Values()
		if !ok || len(vals) == 0 {
			return nil, mongoerr.Newf(mongoerr.BadValue, "%s argument must be a non-empty array", k)
		}
		n := &filterNode{op: opAnd}
		if k == "$or" {
			n.op = opOr
		}
		for _, c := range vals {
			d, ok := c.DocumentOK()
			if !ok {
				return nil, mongoerr.Newf(mongoerr.BadValue, "%s argument's entries must be objects", k)
			}
			cn, err := parseFilterDoc(d, depth+1)
			if err != nil {
				return nil, err
			}
			n.children = append(n.children, cn)
		}
		if k == "$nor" {
			return &filterNode{op: opUnsupported, debug: "$nor\n" + indentDebug(n.children)}, nil
		}
		return n, nil
	case "$comment":
		return nil, nil
	case "$expr", "$jsonSchema", "$sampleRate":
		return nil, mongoerr.Newf(queryFeatureNotAllowed, "%s is not allowed in this context", k)
	case "$where", "$text":
		return nil, mongoerr.Newf(mongoerr.BadValue, "%s is not allowed in this context", k)
	case "$alwaysTrue", "$alwaysFalse":
		return &filterNode{op: opUnsupported, debug: k + "\n"}, nil
	}
	return nil, mongoerr.Newf(mongoerr.BadValue, "unknown top level operator: %s. If you have a field name that starts with a '$' symbol, consider using $getField or $setField.", k)
}

// parsePathValue parses {path: value}: an equality, a regex, or an
// operator document.
func parsePathValue(path string, v bson.RawValue) ([]*filterNode, error) {
	parts := strings.Split(path, ".")
	leaf := func(op filterOp) *filterNode { return &filterNode{op: op, path: path, parts: parts} }
	if v.Type == bson.TypeRegex {
		p, o := v.Regex()
		return []*filterNode{{op: opUnsupported, debug: path + " regex /" + p + "/" + o + "\n"}}, nil
	}
	d, isDoc := v.DocumentOK()
	if !isDoc || !isOperatorDoc(d) {
		n := leaf(opEq)
		n.value = v
		return []*filterNode{n}, nil
	}
	var out []*filterNode
	for _, e := range mustElems(d) {
		op, arg := e.Key(), e.Value()
		n := leaf(opEq)
		switch op {
		case "$eq":
			n.value = arg
		case "$lt", "$lte", "$gt", "$gte":
			if arg.Type == bson.TypeRegex {
				return nil, mongoerr.Newf(mongoerr.BadValue, "Can't have RegEx as arg to predicate over field '%s'.", path)
			}
			n.op = map[string]filterOp{"$lt": opLt, "$lte": opLte, "$gt": opGt, "$gte": opGte}[op]
			n.value = arg
		case "$exists":
			n.op = opExists
			n.exists = truthyAny(arg)
			if !n.exists {
				n = &filterNode{op: opUnsupported, debug: "$not\n    " + path + " exists\n"}
			}
		case "$type":
			n.op = opType
			types, err := parseTypes(arg)
			if err != nil {
				return nil, err
			}
			n.types = types
		case "$in", "$nin":
			arr, ok := arg.ArrayOK()
			if !ok {
				return nil, mongoerr.Newf(mongoerr.BadValue, "%s needs an array", op)
			}
			vals, _ := arr.Values()
			n.op = opIn
			for _, x := range vals {
				if x.Type == bson.TypeRegex {
					p, o := x.Regex()
					re, err := compileRegex(p, o)
					if err != nil {
						return nil, err
					}
					n.regexes = append(n.regexes, re)
					continue
				}
				if xd, ok := x.DocumentOK(); ok && isOperatorDoc(xd) {
					return nil, mongoerr.New(mongoerr.BadValue, "cannot nest $ under $in")
				}
				n.values = append(n.values, x)
			}
			if op == "$nin" {
				n = &filterNode{op: opUnsupported, debug: "$not\n    " + path + " $in " + formatValue(arg) + "\n"}
			}
		case "$ne":
			n = &filterNode{op: opUnsupported, debug: "$not\n    " + path + " $eq " + formatValue(arg) + "\n"}
		case "$not":
			n = &filterNode{op: opUnsupported, debug: "$not\n    " + path + " " + formatValue(arg) + "\n"}
		case "$regex", "$options":
			n = &filterNode{op: opUnsupported, debug: path + " regex " + formatValue(arg) + "\n"}
		case "$size":
			n = &filterNode{op: opUnsupported, debug: path + " $size : " + formatValue(arg) + "\n"}
		case "$mod":
			n = &filterNode{op: opUnsupported, debug: path + " mod " + formatValue(arg) + "\n"}
		case "$all":
			arr, ok := arg.ArrayOK()
			if !ok {
				return nil, mongoerr.New(mongoerr.BadValue, "$all needs an array")
			}
			vals, _ := arr.Values()
			if len(vals) == 0 {
				n = &filterNode{op: opUnsupported, debug: "$alwaysFalse\n"}
				break
			}
			// $all of plain values is an $and of equalities.
			for i, x := range vals {
				c := leaf(opEq)
				c.value = x
				if i < len(vals)-1 {
					out = append(out, c)
				} else {
					n = c
				}
			}
		case "$elemMatch", "$bitsAllSet", "$bitsAllClear", "$bitsAnySet", "$bitsAnyClear",
			"$geoWithin", "$geoIntersects", "$near", "$nearSphere", "$within":
			n = &filterNode{op: opUnsupported, debug: path + " " + op + " " + formatValue(arg) + "\n"}
		default:
			return nil, mongoerr.Newf(mongoerr.BadValue, "unknown operator: %s", op)
		}
		out = append(out, n)
	}
	return out, nil
}

// isOperatorDoc reports whether d's first field starts with '$' and is not
// a DBRef field.
func isOperatorDoc(d bson.Raw) bool {
	elems := mustElems(d)
	if len(elems) == 0 {
		return false
	}
	k := elems[0].Key()
	return strings.HasPrefix(k, "$") && k != "$ref" && k != "$id" && k != "$db"
}

func truthyAny(v bson.RawValue) bool {
	switch v.Type {
	case bson.TypeBoolean:
		return v.Boolean()
	case bson.TypeNull, bson.TypeUndefined:
		return false
	case bson.TypeInt32, bson.TypeInt64, bson.TypeDouble, bson.TypeDecimal128:
		n, _ := number(v)
		return n != 0
	}
	return true
}

var typeAliases = map[string]bson.Type{
	"double": bson.TypeDouble, "string": bson.TypeString, "object": bson.TypeEmbeddedDocument,
	"array": bson.TypeArray, "binData": bson.TypeBinary, "undefined": bson.TypeUndefined,
	"objectId": bson.TypeObjectID, "bool": bson.TypeBoolean, "date": bson.TypeDateTime,
	"null": bson.TypeNull, "regex": bson.TypeRegex, "dbPointer": bson.TypeDBPointer,
	"javascript": bson.TypeJavaScript, "symbol": bson.TypeSymbol,
	"javascriptWithScope": bson.TypeCodeWithScope, "int": bson.TypeInt32,
	"timestamp": bson.TypeTimestamp, "long": bson.TypeInt64, "decimal": bson.TypeDecimal128,
	"minKey": bson.TypeMinKey, "maxKey": bson.TypeMaxKey, "number": 0,
}

func parseTypes(arg bson.RawValue) ([]bson.Type, error) {
	one := func(x bson.RawValue) (bson.Type, error) {
		if s, ok := x.StringValueOK(); ok {
			t, ok := typeAliases[s]
			if !ok {
				return 0, mongoerr.Newf(mongoerr.BadValue, "Unknown type name alias: %s", s)
			}
			return t, nil
		}
		n, ok := number(x)
		if !ok {
			return 0, mongoerr.Newf(mongoerr.TypeMismatch, "type must be represented as a number or a string")
		}
		if n != math.Trunc(n) {
			return 0, mongoerr.Newf(mongoerr.BadValue, "Invalid numerical type code: %s", formatValue(x))
		}
		code := int64(n)
		switch {
		case code == -1:
			return bson.TypeMinKey, nil
		case code == 127:
			return bson.TypeMaxKey, nil
		case code >= 1 && code <= 19:
			return bson.Type(code), nil
		}
		return 0, mongoerr.Newf(mongoerr.BadValue, "Invalid numerical type code: %s", formatValue(x))
	}
	if arr, ok := arg.ArrayOK(); ok {
		vals, _ := arr.Values()
		var out []bson.Type
		for _, x := range vals {
			t, err := one(x)
			if err != nil {
				return nil, err
			}
			out = append(out, t)
		}
		return out, nil
	}
	t, err := one(arg)
	if err != nil {
		return nil, err
	}
	return []bson.Type{t}, nil
}

// compileRegex compiles a BSON regex with MongoDB's PCRE semantics.
func compileRegex(pattern, options string) (*regex.Regexp, error) {
	return regex.Compile("", pattern, options)
}

func indentDebug(children []*filterNode) string {
	var b strings.Builder
	for _, c := range children {
		for _, line := range strings.SplitAfter(c.debugString(), "\n") {
			if line != "" {
				b.WriteString("    " + line)
			}
		}
	}
	return b.String()
}

// debugString approximates mongod's MatchExpression::debugString.
func (n *filterNode) debugString() string {
	switch n.op {
	case opAnd:
		return "$and\n" + indentDebug(n.children)
	case opOr:
		return "$or\n" + indentDebug(n.children)
	case opEq:
		return n.path + " $eq " + formatValue(n.value) + "\n"
	case opLt, opLte, opGt, opGte:
		return n.path + " " + [...]string{opLt: "$lt", opLte: "$lte", opGt: "$gt", opGte: "$gte"}[n.op] + " " + formatValue(n.value) + "\n"
	case opExists:
		return n.path + " exists\n"
	case opType:
		return n.path + " type\n"
	case opIn:
		return n.path + " $in\n"
	}
	return n.debug
}

// checkPartialSupported is IndexCatalogImpl's checkValidFilterExpressions
// for mongod 7.0.
func checkPartialSupported(n *filterNode, level int) error {
	if level > maxPartialDepth {
		return mongoerr.Newf(mongoerr.CannotCreateIndex, "partialFilterExpression depth may not exceed %d", maxPartialDepth)
	}
	switch n.op {
	case opAnd, opOr:
		for _, c := range n.children {
			if err := checkPartialSupported(c, level+1); err != nil {
				return err
			}
		}
		return nil
	case opUnsupported:
		return mongoerr.New(mongoerr.CannotCreateIndex, "Expression not supported in partial index: "+n.debug)
	}
	return nil
}

// match evaluates the filter on doc with MongoDB's query semantics for the
// supported operators.
func (n *filterNode) match(doc bson.Raw) bool {
	switch n.op {
	case opAnd:
		for _, c := range n.children {
			if !c.match(doc) {
				return false
			}
		}
		return true
	case opOr:
		for _, c := range n.children {
			if c.match(doc) {
				return true
			}
		}
		return false
	case opUnsupported:
		return false
	}
	vals, missing := pathValues(doc, n.parts)
	switch n.op {
	case opExists:
		return len(vals) > 0
	case opEq:
		return matchesEq(vals, missing, n.value)
	case opLt, opLte, opGt, opGte:
		if n.value.Type == bson.TypeNull && missing && (n.op == opLte || n.op == opGte) {
			return true
		}
		for _, v := range vals {
			if compareOp(n.op, v, n.value) {
				return true
			}
		}
		return false
	case opType:
		for _, v := range vals {
			for _, t := range n.types {
				if t == v.Type || t == 0 && isNumberType(v.Type) {
					return true
				}
			}
		}
		return false
	case opIn:
		for _, x := range n.values {
			if matchesEq(vals, missing, x) {
				return true
			}
		}
		for _, re := range n.regexes {
			for _, v := range vals {
				if s, ok := stringOf(v); ok && matchString(re, s) {
					return true
				}
			}
		}
		return false
	}
	return false
}

// matchString reports a regex match; a match past the time limit does not
// match, as in the query language.
func matchString(re *regex.Regexp, s string) bool {
	ok, _ := re.MatchString(s)
	return ok
}

func matchesEq(vals []bson.RawValue, missing bool, want bson.RawValue) bool {
	if want.Type == bson.TypeNull && missing {
		return true
	}
	w := keystring.AppendValue(nil, want, false)
	for _, v := range vals {
		if bytes.Equal(keystring.AppendValue(nil, v, false), w) {
			return true
		}
	}
	return false
}

// compareOp applies a comparison within one canonical type bracket, as
// MongoDB does (MinKey and MaxKey compare against every type).
func compareOp(op filterOp, v, arg bson.RawValue) bool {
	if arg.Type != bson.TypeMinKey && arg.Type != bson.TypeMaxKey {
		lo, hi := keystring.TypeRange(arg.Type, false)
		e := keystring.AppendValue(nil, v, false)
		if bytes.Compare(e, lo) < 0 || bytes.Compare(e, hi) >= 0 {
			return false
		}
	}
	c := bytes.Compare(keystring.AppendValue(nil, v, false), keystring.AppendValue(nil, arg, false))
	switch op {
	case opLt:
		return c < 0
	case opLte:
		return c <= 0
	case opGt:
		return c > 0
	}
	return c >= 0
}

func isNumberType(t bson.Type) bool {
	return t == bson.TypeInt32 || t == bson.TypeInt64 || t == bson.TypeDouble || t == bson.TypeDecimal128
}

func stringOf(v bson.RawValue) (string, bool) {
	if v.Type == bson.TypeSymbol {
		return v.Symbol(), true
	}
	return v.StringValueOK()
}

// pathValues returns the values a query predicate on parts sees in doc:
// the value at the path, traversing arrays of documents, and the elements
// of a terminal array; missing reports whether some branch of the path is
// absent (which {path: null} matches).
func pathValues(doc bson.Raw, parts []string) (vals []bson.RawValue, missing bool) {
	var walk func(v bson.RawValue, i int, depth int)
	walk = func(v bson.RawValue, i int, depth int) {
		if depth > 200 {
			return
		}
		if i == len(parts) {
			vals = append(vals, v)
			if arr, ok := v.ArrayOK(); ok {
				elems, _ := arr.Values()
				vals = append(vals, elems...)
			}
			return
		}
		switch v.Type {
		case bson.TypeEmbeddedDocument:
			c, err := bson.Raw(v.Value).LookupErr(parts[i])
			if err != nil {
				missing = true
				return
			}
			walk(c, i+1, depth+1)
		case bson.TypeArray:
			elems, _ := bson.RawArray(v.Value).Values()
			if idx, err := strconv.Atoi(parts[i]); err == nil && idx >= 0 && idx < len(elems) {
				walk(elems[idx], i+1, depth+1)
			}
			for _, e := range elems {
				if e.Type == bson.TypeEmbeddedDocument {
					walk(e, i, depth+1)
				} else if e.Type != bson.TypeArray {
					missing = true
				}
			}
			if len(elems) == 0 {
				missing = true
			}
		default:
			missing = true
		}
	}
	walk(bson.RawValue{Type: bson.TypeEmbeddedDocument, Value: doc}, 0, 0)
	return vals, missing
}
