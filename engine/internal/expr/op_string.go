package expr

import (
	"strings"

	"go.mongodb.org/mongo-driver/v2/bson"

	"github.com/formworkdb/formwork/engine/internal/bsonkit"
	"github.com/formworkdb/formwork/engine/internal/mongoerr"
)

// The string operators. Byte-oriented operators ($substrBytes,
// $indexOfBytes, $strLenBytes) count UTF-8 bytes, the CP variants count
// code points; $toLower, $toUpper and $strcasecmp fold ASCII letters only,
// as mongod does.
func init() {
	register("$concat", parseConcat)
	register("$substr", func(p *Parser, _ string, arg bson.RawValue) (Expr, error) {
		// $substr is $substrBytes under its old name, messages included.
		return parseSubstrBytes(p, "$substrBytes", arg)
	})
	register("$substrBytes", parseSubstrBytes)
	register("$substrCP", parseSubstrCP)
	register("$strLenBytes", parseStrLenBytes)
	register("$strLenCP", parseStrLenCP)
	register("$toLower", parseToLower)
	register("$toUpper", parseToUpper)
	register("$split", parseSplit)
	register("$indexOfBytes", parseIndexOfBytes)
	register("$indexOfCP", parseIndexOfCP)
	register("$strcasecmp", parseStrcasecmp)
}

// strFn is an operator over positional operands evaluated in order and
// handed to fn.
type strFn struct {
	args []Expr
	fn   func(vals []bson.RawValue) (bson.RawValue, error)
}

// Eval evaluates the operands in order and applies the operator.
func (e *strFn) Eval(c *Ctx) (bson.RawValue, error) {
	vals, err := EvalAll(c, e.args)
	if err != nil {
		return bson.RawValue{}, err
	}
	return e.fn(vals)
}

// fixedStrOp parses an operator with exactly n operands into a strFn.
func fixedStrOp(n int, fn func(vals []bson.RawValue) (bson.RawValue, error)) parseFunc {
	return func(p *Parser, name string, arg bson.RawValue) (Expr, error) {
		args, err := p.Exactly(name, arg, n)
		if err != nil {
			return nil, err
		}
		e := &strFn{args: args, fn: fn}
		return foldStatic(e, args...)
	}
}

// parseConcat parses $concat: strings joined; null if any operand is
// nullish; 16702 for any other type.
func parseConcat(p *Parser, name string, arg bson.RawValue) (Expr, error) {
	args, err := p.Operands(arg)
	if err != nil {
		return nil, err
	}
	return foldStatic(&strFn{args: args, fn: concatValues}, args...)
}

// concatValues joins the operands of $concat.
func concatValues(vals []bson.RawValue) (bson.RawValue, error) {
	{
		var b strings.Builder
		for _, v := range vals {
			if IsNullish(v) {
				return Null(), nil
			}
			if v.Type != bson.TypeString {
				return bson.RawValue{}, mongoerr.Newf(mongoerr.Code(16702), "$concat only supports strings, not %s", bsonkit.TypeName(v.Type))
			}
			b.WriteString(v.StringValue())
			if b.Len() > MaxBSONSize {
				return bson.RawValue{}, errTooLarge()
			}
		}
		return String(b.String()), nil
	}
}

// parseSubstrBytes parses $substrBytes: a byte range that must not split a
// UTF-8 character (28656, 28657); the string operand is coerced.
var parseSubstrBytes = fixedStrOp(3, func(vals []bson.RawValue) (bson.RawValue, error) {
	s, err := coerceToString(vals[0])
	if err != nil {
		return bson.RawValue{}, err
	}
	const op = "$substrBytes"
	if !isNumeric(vals[1]) {
		return bson.RawValue{}, mongoerr.Newf(mongoerr.Code(16034), "%s:  starting index must be a numeric type (is BSON type %s)", op, bsonkit.TypeName(vals[1].Type))
	}
	if !isNumeric(vals[2]) {
		return bson.RawValue{}, mongoerr.Newf(mongoerr.Code(16035), "%s:  length must be a numeric type (is BSON type %s)", op, bsonkit.TypeName(vals[2].Type))
	}
	lower, _ := bsonkit.TruncInt64(vals[1])
	if lower < 0 {
		return bson.RawValue{}, mongoerr.Newf(mongoerr.Code(50752), "%s:  starting index must be non-negative (got: %d)", op, lower)
	}
	n := int64(len(s))
	length, _ := bsonkit.TruncInt64(vals[2])
	if length < 0 {
		length = n
	}
	if lower < n && isContinuation(s[lower]) {
		return bson.RawValue{}, mongoerr.Newf(mongoerr.Code(28656), "%s:  Invalid range, starting index is a UTF-8 continuation byte.", op)
	}
	end := lower + length
	if length > n || end > n || end < 0 {
		end = n
	}
	if end < n && isContinuation(s[end]) {
		return bson.RawValue{}, mongoerr.Newf(mongoerr.Code(28657), "%s:  Invalid range, ending index is in the middle of a UTF-8 character.", op)
	}
	if lower >= n {
		return String(""), nil
	}
	return String(s[lower:end]), nil
})

// isContinuation reports whether b is a UTF-8 continuation byte
// (10xxxxxx).
func isContinuation(b byte) bool { return b&0xc0 == 0x80 }

// leadingOnes counts the 1 bits at the top of b.
func leadingOnes(b byte) int {
	n := 0
	for b&0x80 != 0 {
		n++
		b <<= 1
	}
	return n
}

// cpLen is the length of the code point that starts with byte b, as
// mongod computes it from the leading ones.
func cpLen(b byte) int {
	switch {
	case b < 0x80:
		return 1
	case b&0xe0 == 0xc0:
		return 2
	case b&0xf0 == 0xe0:
		return 3
	case b&0xf8 == 0xf0:
		return 4
	}
	return 1
}

// parseSubstrCP parses $substrCP: a range of code points; start and length
// are 32-bit integers (34450-34455).
var parseSubstrCP = fixedStrOp(3, func(vals []bson.RawValue) (bson.RawValue, error) {
	s, err := coerceToString(vals[0])
	if err != nil {
		return bson.RawValue{}, err
	}
	const op = "$substrCP"
	if !isNumeric(vals[1]) {
		return bson.RawValue{}, mongoerr.Newf(mongoerr.Code(34450), "%s: starting index must be a numeric type (is BSON type %s)", op, bsonkit.TypeName(vals[1].Type))
	}
	start, ok := int32Integral(vals[1])
	if !ok {
		return bson.RawValue{}, mongoerr.Newf(mongoerr.Code(34451), "%s: starting index cannot be represented as a 32-bit integral value: %s", op, valueString(vals[1]))
	}
	if !isNumeric(vals[2]) {
		return bson.RawValue{}, mongoerr.Newf(mongoerr.Code(34452), "%s: length must be a numeric type (is BSON type %s)", op, bsonkit.TypeName(vals[2].Type))
	}
	length, ok := int32Integral(vals[2])
	if !ok {
		return bson.RawValue{}, mongoerr.Newf(mongoerr.Code(34453), "%s: length cannot be represented as a 32-bit integral value: %s", op, valueString(vals[2]))
	}
	if length < 0 {
		return bson.RawValue{}, mongoerr.Newf(mongoerr.Code(34454), "%s: length must be a nonnegative integer.", op)
	}
	if start < 0 {
		return bson.RawValue{}, mongoerr.Newf(mongoerr.Code(34455), "%s: the starting index must be nonnegative integer.", op)
	}
	// Walk code points by their leading bytes, as mongod does; a
	// continuation byte or a lead byte of more than four is bad UTF-8.
	badUTF8 := func(code int) (bson.RawValue, error) {
		return bson.RawValue{}, mongoerr.Newf(mongoerr.Code(code), "%s: invalid UTF-8 string", op)
	}
	i := 0
	for cp := 0; cp < start; cp++ {
		if i >= len(s) {
			return String(""), nil
		}
		if isContinuation(s[i]) {
			return badUTF8(34456)
		}
		if leadingOnes(s[i]) > 4 {
			return badUTF8(34457)
		}
		i += cpLen(s[i])
	}
	i = min(i, len(s))
	j := i
	for cp := 0; cp < length && j < len(s); cp++ {
		if isContinuation(s[j]) {
			return badUTF8(34458)
		}
		if leadingOnes(s[j]) > 4 {
			return badUTF8(34459)
		}
		j += cpLen(s[j])
	}
	j = min(j, len(s))
	return String(s[i:j]), nil
})

// parseStrLenBytes parses $strLenBytes (34473 for a non-string).
var parseStrLenBytes = fixedStrOp(1, func(vals []bson.RawValue) (bson.RawValue, error) {
	if vals[0].Type != bson.TypeString {
		return bson.RawValue{}, mongoerr.Newf(mongoerr.Code(34473), "$strLenBytes requires a string argument, found: %s", bsonkit.TypeName(vals[0].Type))
	}
	return Int32(int32(len(vals[0].StringValue()))), nil
})

// parseStrLenCP parses $strLenCP, which counts leading bytes as code points
// (34471 for a non-string).
var parseStrLenCP = fixedStrOp(1, func(vals []bson.RawValue) (bson.RawValue, error) {
	if vals[0].Type != bson.TypeString {
		return bson.RawValue{}, mongoerr.Newf(mongoerr.Code(34471), "$strLenCP requires a string argument, found: %s", bsonkit.TypeName(vals[0].Type))
	}
	s := vals[0].StringValue()
	n := 0
	for i := 0; i < len(s); i++ {
		if !isContinuation(s[i]) {
			n++
		}
	}
	return Int32(int32(n)), nil
})

// parseToLower parses $toLower: ASCII letters only, the operand coerced.
var parseToLower = fixedStrOp(1, func(vals []bson.RawValue) (bson.RawValue, error) {
	s, err := coerceToString(vals[0])
	if err != nil {
		return bson.RawValue{}, err
	}
	return String(asciiLower(s)), nil
})

// parseToUpper parses $toUpper: ASCII letters only, the operand coerced.
var parseToUpper = fixedStrOp(1, func(vals []bson.RawValue) (bson.RawValue, error) {
	s, err := coerceToString(vals[0])
	if err != nil {
		return bson.RawValue{}, err
	}
	return String(asciiUpper(s)), nil
})

// asciiLower lower-cases the ASCII letters of s and leaves every other
// byte alone.
func asciiLower(s string) string {
	b := []byte(s)
	for i, c := range b {
		if c >= 'A' && c <= 'Z' {
			b[i] = c + 'a' - 'A'
		}
	}
	return string(b)
}

// asciiUpper upper-cases the ASCII letters of s.
func asciiUpper(s string) string {
	b := []byte(s)
	for i, c := range b {
		if c >= 'a' && c <= 'z' {
			b[i] = c - ('a' - 'A')
		}
	}
	return string(b)
}

// parseStrcasecmp parses $strcasecmp: -1, 0 or 1 after ASCII upper-casing.
var parseStrcasecmp = fixedStrOp(2, func(vals []bson.RawValue) (bson.RawValue, error) {
	a, err := coerceToString(vals[0])
	if err != nil {
		return bson.RawValue{}, err
	}
	b, err := coerceToString(vals[1])
	if err != nil {
		return bson.RawValue{}, err
	}
	return Int32(int32(strings.Compare(asciiUpper(a), asciiUpper(b)))), nil
})

// parseSplit parses $split: null for a nullish operand, 40085-40087 for bad
// ones.
var parseSplit = fixedStrOp(2, func(vals []bson.RawValue) (bson.RawValue, error) {
	if IsNullish(vals[0]) || IsNullish(vals[1]) {
		return Null(), nil
	}
	if vals[0].Type != bson.TypeString {
		return bson.RawValue{}, mongoerr.Newf(mongoerr.Code(40085), "$split requires an expression that evaluates to a string as a first argument, found: %s", bsonkit.TypeName(vals[0].Type))
	}
	if vals[1].Type != bson.TypeString {
		return bson.RawValue{}, mongoerr.Newf(mongoerr.Code(40086), "$split requires an expression that evaluates to a string as a second argument, found: %s", bsonkit.TypeName(vals[1].Type))
	}
	sep := vals[1].StringValue()
	if sep == "" {
		return bson.RawValue{}, mongoerr.New(mongoerr.Code(40087), "$split requires a non-empty separator")
	}
	parts := strings.Split(vals[0].StringValue(), sep)
	b := NewArrayBuilder(len(parts))
	for _, part := range parts {
		b.Append(String(part))
		if b.Size() > MaxBSONSize {
			return bson.RawValue{}, errTooLarge()
		}
	}
	return b.Value(), nil
})

// indexArg checks an optional start or end index of $indexOfBytes and
// $indexOfCP: an integral number that fits in 32 bits (40096) and is not
// negative (40097).
func indexArg(op, what string, v bson.RawValue) (int, error) {
	i, ok := int32Integral(v)
	if !ok {
		// mongod's message has no space after the operator name.
		return 0, mongoerr.Newf(mongoerr.Code(40096), "%srequires an integral %s, found a value of type: %s, with value: %s", op, what, bsonkit.TypeName(v.Type), valueString(v))
	}
	if i < 0 {
		return 0, mongoerr.Newf(mongoerr.Code(40097), "%s requires a nonnegative %s, found: %s", op, what, valueString(v))
	}
	return i, nil
}

// parseIndexOfBytes parses $indexOfBytes with 2 to 4 operands.
func parseIndexOfBytes(p *Parser, name string, arg bson.RawValue) (Expr, error) {
	args, err := p.Between(name, arg, 2, 4)
	if err != nil {
		return nil, err
	}
	return foldStatic(&indexOfExpr{args: args, cp: false}, args...)
}

// parseIndexOfCP parses $indexOfCP with 2 to 4 operands.
func parseIndexOfCP(p *Parser, name string, arg bson.RawValue) (Expr, error) {
	args, err := p.Between(name, arg, 2, 4)
	if err != nil {
		return nil, err
	}
	return foldStatic(&indexOfExpr{args: args, cp: true}, args...)
}

// indexOfExpr is $indexOfBytes or $indexOfCP. Operands are evaluated
// lazily in mongod's order, so an error in a later operand does not show
// when an earlier one decides the result.
type indexOfExpr struct {
	args []Expr
	cp   bool
}

// Eval returns the byte or code point index of the token, or -1.
func (e *indexOfExpr) Eval(c *Ctx) (bson.RawValue, error) {
	op, c1, c2 := "$indexOfBytes", 40091, 40092
	if e.cp {
		op, c1, c2 = "$indexOfCP", 40093, 40094
	}
	sv, err := e.args[0].Eval(c)
	if err != nil {
		return bson.RawValue{}, err
	}
	if IsNullish(sv) {
		return Null(), nil
	}
	if sv.Type != bson.TypeString {
		return bson.RawValue{}, mongoerr.Newf(mongoerr.Code(c1), "%s requires a string as the first argument, found: %s", op, bsonkit.TypeName(sv.Type))
	}
	tv, err := e.args[1].Eval(c)
	if err != nil {
		return bson.RawValue{}, err
	}
	if tv.Type != bson.TypeString {
		return bson.RawValue{}, mongoerr.Newf(mongoerr.Code(c2), "%s requires a string as the second argument, found: %s", op, bsonkit.TypeName(tv.Type))
	}
	input, token := sv.StringValue(), tv.StringValue()
	start := 0
	if len(e.args) > 2 {
		v, err := e.args[2].Eval(c)
		if err != nil {
			return bson.RawValue{}, err
		}
		if start, err = indexArg(op, "starting index", v); err != nil {
			return bson.RawValue{}, err
		}
	}
	if !e.cp {
		end := len(input)
		if len(e.args) > 3 {
			v, err := e.args[3].Eval(c)
			if err != nil {
				return bson.RawValue{}, err
			}
			ei, err := indexArg(op, "ending index", v)
			if err != nil {
				return bson.RawValue{}, err
			}
			end = min(end, ei)
		}
		if start > len(input) || end < start {
			return Int32(-1), nil
		}
		pos := strings.Index(input[start:end], token)
		if pos < 0 {
			return Int32(-1), nil
		}
		return Int32(int32(start + pos)), nil
	}
	return indexOfCP(c, e.args, input, token, start)
}

// indexOfCP finishes $indexOfCP once the start code point is known.
func indexOfCP(c *Ctx, args []Expr, input, token string, start int) (bson.RawValue, error) {
	cpCount, startByte := 0, 0
	for i := 0; i < len(input); cpCount++ {
		if cpCount == start {
			startByte = i
		}
		if isContinuation(input[i]) {
			return bson.RawValue{}, mongoerr.New(mongoerr.Code(40095), "$indexOfCP found bad UTF-8 in the input")
		}
		i += cpLen(input[i])
	}
	end := cpCount
	if len(args) > 3 {
		v, err := args[3].Eval(c)
		if err != nil {
			return bson.RawValue{}, err
		}
		ei, err := indexArg("$indexOfCP", "ending index", v)
		if err != nil {
			return bson.RawValue{}, err
		}
		end = min(end, ei)
	}
	if end < start {
		return Int32(-1), nil
	}
	if startByte == 0 && input == "" && token == "" {
		return Int32(0), nil
	}
	b := startByte
	for cp := start; cp < end && b < len(input); cp++ {
		if strings.HasPrefix(input[b:], token) {
			return Int32(int32(cp)), nil
		}
		b += cpLen(input[b])
	}
	return Int32(-1), nil
}
