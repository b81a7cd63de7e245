package schema

import (
	"bytes"
	"math/big"
	stdregexp "regexp"
	"strconv"
	"strings"
	"unicode/utf8"

	"go.mongodb.org/mongo-driver/v2/bson"

	"github.com/formworkdb/formwork/engine/internal/bsonkit"
	"github.com/formworkdb/formwork/engine/internal/regex"
)

// leafError builds the error of a keyword that reports the value it
// considered.
func leafError(kw string, specified bson.D, reason string, v bson.RawValue, extra ...bson.E) []any {
	d := bson.D{{Key: "operatorName", Value: kw}, {Key: "specifiedAs", Value: specified}, {Key: "reason", Value: reason}, {Key: "consideredValue", Value: v}}
	return []any{append(d, extra...)}
}

func isNumber(v value) bool { return v.present && bsonkit.IsNumber(v.v.Type) }

func isString(v value) bool { return v.present && v.v.Type == bson.TypeString }

// patternRule is the pattern keyword: strings match the regex, with no
// flags, unanchored.
type patternRule struct {
	arg bson.RawValue
	re  *regex.Regexp
	// literal is set when the pattern has no metacharacter: a substring
	// test answers without running the regex engine.
	literal bool
}

func newPatternRule(arg bson.RawValue, re *regex.Regexp) *patternRule {
	p := arg.StringValue()
	return &patternRule{arg: arg, re: re, literal: p != "" && stdregexp.QuoteMeta(p) == p && !strings.ContainsAny(p, "#- \t\n")}
}

func (r *patternRule) match(v value) bool {
	if !isString(v) {
		return true
	}
	if r.literal {
		return bytes.Contains(stringBytes(v.v), stringBytes(r.arg))
	}
	ok, err := r.re.MatchString(v.v.StringValue())
	return ok && err == nil
}

func (r *patternRule) explain(v value) []any {
	return leafError("pattern", bson.D{{Key: "pattern", Value: r.arg}}, "regular expression did not match", v.v)
}

// lengthRule is minLength or maxLength, counted in code points.
type lengthRule struct {
	kw  string
	arg bson.RawValue
	n   int64
	max bool
}

func (r *lengthRule) match(v value) bool {
	if !isString(v) {
		return true
	}
	l := int64(utf8.RuneCount(stringBytes(v.v)))
	if r.max {
		return l <= r.n
	}
	return l >= r.n
}

func (r *lengthRule) explain(v value) []any {
	return leafError(r.kw, bson.D{{Key: r.kw, Value: r.arg}}, "specified string length was not satisfied", v.v)
}

// multipleRule is multipleOf: the value divided by the operand is an
// integer, computed on decimal values as mongod's Decimal128 fmod is.
type multipleRule struct {
	arg bson.RawValue
	d   *big.Rat // nil for an infinite divisor
}

func (r *multipleRule) match(v value) bool {
	if !isNumber(v) {
		return true
	}
	x, ok := toRat(v.v)
	if !ok || r.d == nil {
		return false // NaN and infinities leave a NaN remainder
	}
	return new(big.Rat).Quo(x, r.d).IsInt()
}

func (r *multipleRule) explain(v value) []any {
	return leafError("multipleOf", bson.D{{Key: "multipleOf", Value: r.arg}}, "considered value is not a multiple of the specified value", v.v)
}

// toRat converts a number to an exact rational the way mongod converts it
// to Decimal128 (doubles to 15 significant digits). It fails for NaN and
// infinities.
func toRat(v bson.RawValue) (*big.Rat, bool) {
	var s string
	switch v.Type {
	case bson.TypeInt32:
		return new(big.Rat).SetInt64(int64(v.Int32())), true
	case bson.TypeInt64:
		return new(big.Rat).SetInt64(v.Int64()), true
	case bson.TypeDouble:
		s = strconv.FormatFloat(v.Double(), 'g', 15, 64)
	case bson.TypeDecimal128:
		s = v.Decimal128().String()
	default:
		return nil, false
	}
	r, ok := new(big.Rat).SetString(s)
	return r, ok
}

// boundRule is minimum or maximum, exclusive or not.
type boundRule struct {
	kw, excl  string
	arg       bson.RawValue
	max       bool
	exclusive bool
}

func (r *boundRule) match(v value) bool {
	if !isNumber(v) {
		return true
	}
	vn, an := bsonkit.IsNaN(v.v), bsonkit.IsNaN(r.arg)
	if vn || an {
		return vn && an && !r.exclusive
	}
	c := bsonkit.Compare(v.v, r.arg)
	switch {
	case r.max && r.exclusive:
		return c < 0
	case r.max:
		return c <= 0
	case r.exclusive:
		return c > 0
	}
	return c >= 0
}

func (r *boundRule) explain(v value) []any {
	spec := bson.D{{Key: r.kw, Value: r.arg}}
	if r.exclusive {
		spec = append(spec, bson.E{Key: r.excl, Value: true})
	}
	return leafError(r.kw, spec, "comparison failed", v.v)
}

// stringBytes returns the bytes of a BSON string value without copying
// them (the value's length prefix and terminating NUL stripped).
func stringBytes(v bson.RawValue) []byte {
	if len(v.Value) < 5 {
		return nil
	}
	return v.Value[4 : len(v.Value)-1]
}
