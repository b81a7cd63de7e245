package extref

import (
	"errors"
	"fmt"
	"math"
	"strconv"
	"strings"

	"go.mongodb.org/mongo-driver/v2/bson"
)

// maxFilterDepth bounds the nesting of a Frozen filter, as mongod bounds
// the nesting of any query (depth limit 100).
const maxFilterDepth = 100

// checkFilter checks that f is a well-formed MongoDB query filter: every
// top-level operator and every field operator is one mongod knows, with
// an argument of the shape it takes, at any depth. It checks the shape
// only (an $expr's expression is the server's to judge), so that a filter
// New accepts does not fail every later write that uses it.
func checkFilter(f bson.D) error {
	raw, err := bson.Marshal(f)
	if err != nil {
		return err
	}
	return checkQuery(raw, 0)
}

// checkQuery checks one filter document (the top level, or a clause of
// $and, $or, $nor, or a filter-form $elemMatch).
func checkQuery(doc bson.Raw, depth int) error {
	if depth > maxFilterDepth {
		return fmt.Errorf("nested more than %d levels", maxFilterDepth)
	}
	elems, err := doc.Elements()
	if err != nil {
		return err
	}
	for _, e := range elems {
		key, v := e.Key(), e.Value()
		if !strings.HasPrefix(key, "$") {
			if err := checkField(key, v, depth); err != nil {
				return err
			}
			continue
		}
		if err := checkTopLevel(key, v, depth); err != nil {
			return err
		}
	}
	return nil
}

// checkTopLevel checks a top-level operator and its argument.
func checkTopLevel(op string, v bson.RawValue, depth int) error {
	switch op {
	case "$and", "$or", "$nor":
		arr, ok := v.ArrayOK()
		if !ok {
			return fmt.Errorf("%s needs a non-empty array", op)
		}
		vals, err := arr.Values()
		if err != nil {
			return err
		}
		if len(vals) == 0 {
			return fmt.Errorf("%s needs a non-empty array", op)
		}
		for _, c := range vals {
			clause, ok := c.DocumentOK()
			if !ok {
				return fmt.Errorf("%s needs an array of documents, got a %v", op, c.Type)
			}
			if err := checkQuery(clause, depth+1); err != nil {
				return err
			}
		}
		return nil
	case "$expr", "$comment":
		return nil
	case "$where":
		if v.Type != bson.TypeString && v.Type != bson.TypeJavaScript && v.Type != bson.TypeCodeWithScope {
			return errors.New("$where needs a string or JavaScript code")
		}
		return nil
	case "$jsonSchema":
		if _, ok := v.DocumentOK(); !ok {
			return errors.New("$jsonSchema needs a document")
		}
		return nil
	case "$alwaysTrue", "$alwaysFalse":
		if n, ok := number(v); !ok || n != 1 {
			return fmt.Errorf("%s needs the number 1", op)
		}
		return nil
	case "$sampleRate":
		if n, ok := number(v); !ok || n < 0 || n > 1 {
			return errors.New("$sampleRate needs a number between 0 and 1")
		}
		return nil
	case "$text":
		return errors.New("$text cannot be used: a Frozen filter is negated under $nor, where $text is not allowed")
	}
	return fmt.Errorf("unknown top-level operator %s", op)
}

// checkField checks the condition on one field: a literal to compare
// with, or a document of field operators when its first key starts with
// '$' (as mongod decides; a DBRef's $ref/$id/$db is a literal).
func checkField(path string, v bson.RawValue, depth int) error {
	doc, ok := v.DocumentOK()
	if !ok || !operators(doc) {
		return nil
	}
	if err := checkOperators(doc, depth); err != nil {
		return fmt.Errorf("field %q: %w", path, err)
	}
	return nil
}

// operators reports whether doc is a document of field operators.
func operators(doc bson.Raw) bool {
	elems, err := doc.Elements()
	if err != nil || len(elems) == 0 {
		return false
	}
	k := elems[0].Key()
	return strings.HasPrefix(k, "$") && k != "$ref" && k != "$id" && k != "$db"
}

// checkOperators checks a document of field operators: every key an
// operator, each with an argument of its shape.
func checkOperators(doc bson.Raw, depth int) error {
	if depth > maxFilterDepth {
		return fmt.Errorf("nested more than %d levels", maxFilterDepth)
	}
	elems, err := doc.Elements()
	if err != nil {
		return err
	}
	hasRegex := false
	for _, e := range elems {
		if e.Key() == "$regex" {
			hasRegex = true
		}
	}
	for _, e := range elems {
		if err := checkOperator(e.Key(), e.Value(), hasRegex, depth); err != nil {
			return err
		}
	}
	return nil
}

// checkOperator checks one field operator and its argument.
func checkOperator(op string, v bson.RawValue, hasRegex bool, depth int) error {
	switch op {
	case "$eq", "$ne", "$gt", "$gte", "$lt", "$lte", "$exists":
		return nil
	case "$in", "$nin":
		return checkIn(op, v)
	case "$all":
		if _, ok := v.ArrayOK(); !ok {
			return errors.New("$all needs an array")
		}
		return nil
	case "$size":
		n, ok := number(v)
		switch {
		case !ok:
			return errors.New("$size needs a number")
		case n != math.Trunc(n):
			return errors.New("$size must be a whole number")
		case n < 0:
			return errors.New("$size may not be negative")
		}
		return nil
	case "$type":
		return checkType(v)
	case "$mod":
		return checkMod(v)
	case "$regex":
		if v.Type != bson.TypeString && v.Type != bson.TypeRegex {
			return errors.New("$regex has to be a string or a regex")
		}
		return nil
	case "$options":
		if v.Type != bson.TypeString {
			return errors.New("$options has to be a string")
		}
		if !hasRegex {
			return errors.New("$options needs a $regex")
		}
		return nil
	case "$elemMatch":
		doc, ok := v.DocumentOK()
		if !ok {
			return errors.New("$elemMatch needs a document")
		}
		if elemOperators(doc) {
			return checkOperators(doc, depth+1)
		}
		return checkQuery(doc, depth+1)
	case "$not":
		return checkNot(v, depth)
	case "$bitsAllSet", "$bitsAllClear", "$bitsAnySet", "$bitsAnyClear":
		return checkBits(op, v)
	case "$geoWithin", "$geoIntersects":
		if _, ok := v.DocumentOK(); !ok {
			return fmt.Errorf("%s needs a document", op)
		}
		return nil
	case "$near", "$nearSphere", "$geoNear":
		return fmt.Errorf("%s cannot be used: a Frozen filter is negated under $nor, where %s is not allowed", op, op)
	}
	return fmt.Errorf("unknown operator %s", op)
}

// elemMatchTopLevel lists the operators that make an $elemMatch document
// a filter on the elements' fields rather than operators on the elements.
var elemMatchTopLevel = map[string]bool{"$and": true, "$or": true, "$nor": true, "$expr": true, "$where": true, "$comment": true}

// elemOperators reports whether an $elemMatch document applies operators
// to the elements themselves ({$gt: 1}) rather than a filter to their
// fields ({qty: {$gt: 1}}).
func elemOperators(doc bson.Raw) bool {
	elems, err := doc.Elements()
	if err != nil || len(elems) == 0 {
		return false
	}
	return operators(doc) && !elemMatchTopLevel[elems[0].Key()]
}

// checkIn checks the array of $in or $nin: regexes and literals, no
// operator documents.
func checkIn(op string, v bson.RawValue) error {
	arr, ok := v.ArrayOK()
	if !ok {
		return fmt.Errorf("%s needs an array", op)
	}
	vals, err := arr.Values()
	if err != nil {
		return err
	}
	for _, x := range vals {
		if d, ok := x.DocumentOK(); ok && operators(d) {
			return fmt.Errorf("%s cannot hold an operator document", op)
		}
	}
	return nil
}

// checkNot checks $not's argument: a regex, or a non-empty document of
// operators.
func checkNot(v bson.RawValue, depth int) error {
	if v.Type == bson.TypeRegex {
		return nil
	}
	doc, ok := v.DocumentOK()
	if !ok {
		return errors.New("$not needs a regex or a document")
	}
	if elems, err := doc.Elements(); err != nil || len(elems) == 0 {
		return errors.New("$not cannot be empty")
	}
	if !operators(doc) {
		return errors.New("$not needs a document of operators")
	}
	return checkOperators(doc, depth+1)
}

// typeAliases are the $type names mongod accepts.
var typeAliases = map[string]bool{
	"double": true, "string": true, "object": true, "array": true, "binData": true,
	"undefined": true, "objectId": true, "bool": true, "date": true, "null": true,
	"regex": true, "dbPointer": true, "javascript": true, "symbol": true,
	"javascriptWithScope": true, "int": true, "timestamp": true, "long": true,
	"decimal": true, "minKey": true, "maxKey": true, "number": true,
}

// checkType checks $type's argument: a type code or alias, or an array
// of them.
func checkType(v bson.RawValue) error {
	one := func(x bson.RawValue) error {
		if s, ok := x.StringValueOK(); ok {
			if !typeAliases[s] {
				return fmt.Errorf("$type: unknown type name %q", s)
			}
			return nil
		}
		n, ok := number(x)
		if !ok {
			return fmt.Errorf("$type needs a type name or code, got a %v", x.Type)
		}
		if n != math.Trunc(n) || !(n == -1 || n == 127 || (n >= 1 && n <= 19)) {
			return fmt.Errorf("$type: invalid type code %v", n)
		}
		return nil
	}
	arr, ok := v.ArrayOK()
	if !ok {
		return one(v)
	}
	vals, err := arr.Values()
	if err != nil {
		return err
	}
	for _, x := range vals {
		if err := one(x); err != nil {
			return err
		}
	}
	return nil
}

// checkMod checks $mod's argument: [divisor, remainder], numbers, the
// divisor not zero.
func checkMod(v bson.RawValue) error {
	arr, ok := v.ArrayOK()
	if !ok {
		return errors.New("$mod needs an array [divisor, remainder]")
	}
	vals, err := arr.Values()
	if err != nil {
		return err
	}
	if len(vals) != 2 {
		return fmt.Errorf("$mod needs [divisor, remainder], got %d elements", len(vals))
	}
	d, ok1 := number(vals[0])
	_, ok2 := number(vals[1])
	if !ok1 || !ok2 {
		return errors.New("$mod needs numbers")
	}
	if math.Trunc(d) == 0 {
		return errors.New("$mod: divisor cannot be 0")
	}
	return nil
}

// checkBits checks a bit test's argument: a non-negative whole number,
// BinData, or an array of non-negative whole bit positions.
func checkBits(op string, v bson.RawValue) error {
	if v.Type == bson.TypeBinary {
		return nil
	}
	whole := func(x bson.RawValue) bool {
		n, ok := number(x)
		return ok && n >= 0 && n == math.Trunc(n)
	}
	if arr, ok := v.ArrayOK(); ok {
		vals, err := arr.Values()
		if err != nil {
			return err
		}
		for _, x := range vals {
			if !whole(x) {
				return fmt.Errorf("%s: bit positions must be non-negative whole numbers", op)
			}
		}
		return nil
	}
	if !whole(v) {
		return fmt.Errorf("%s needs a non-negative whole number, BinData or an array of bit positions", op)
	}
	return nil
}

// number reads a numeric BSON value as a float64.
func number(v bson.RawValue) (float64, bool) {
	switch v.Type {
	case bson.TypeInt32:
		return float64(v.Int32()), true
	case bson.TypeInt64:
		return float64(v.Int64()), true
	case bson.TypeDouble:
		return v.Double(), true
	case bson.TypeDecimal128:
		f, err := strconv.ParseFloat(v.Decimal128().String(), 64)
		return f, err == nil
	}
	return 0, false
}
