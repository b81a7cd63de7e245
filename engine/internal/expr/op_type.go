package expr

import (
	"math"
	"strconv"
	"strings"

	"go.mongodb.org/mongo-driver/v2/bson"

	"github.com/formworkdb/formwork/engine/internal/bsonkit"
	"github.com/formworkdb/formwork/engine/internal/mongoerr"
)

// The type operators: $type, $isNumber, $convert and its shorthands
// $toInt, $toLong, $toDouble, $toDecimal, $toString, $toObjectId, $toBool
// and $toDate. Conversion failures are ConversionFailure (241), which
// $convert's onError catches; a bad 'to' is FailedToParse or BadValue,
// which it does not.
func init() {
	register("$type", fixedStrOp(1, func(vals []bson.RawValue) (bson.RawValue, error) {
		return String(bsonkit.TypeName(vals[0].Type)), nil
	}))
	register("$isNumber", fixedStrOp(1, func(vals []bson.RawValue) (bson.RawValue, error) {
		return Bool(isNumeric(vals[0])), nil
	}))
	register("$convert", parseConvert)
	for name, t := range map[string]bson.Type{
		"$toInt": bson.TypeInt32, "$toLong": bson.TypeInt64, "$toDouble": bson.TypeDouble,
		"$toDecimal": bson.TypeDecimal128, "$toString": bson.TypeString, "$toObjectId": bson.TypeObjectID,
		"$toBool": bson.TypeBoolean, "$toDate": bson.TypeDateTime,
	} {
		register(name, toTypeParser(t))
	}
}

// convertExpr is $convert, or one of its shorthands (to is then a
// constant and onError and onNull are nil).
type convertExpr struct {
	input, to, onError, onNull Expr
}

// parseConvert parses {input, to, onError, onNull} (FailedToParse).
func parseConvert(p *Parser, name string, arg bson.RawValue) (Expr, error) {
	if arg.Type != bson.TypeEmbeddedDocument {
		return nil, mongoerr.Newf(mongoerr.FailedToParse, "$convert expects an object of named arguments but found: %s", bsonkit.TypeName(arg.Type))
	}
	args, err := namedArgs(p, arg.Document(), []string{"input", "to", "onError", "onNull"}, func(k string) error {
		return mongoerr.Newf(mongoerr.FailedToParse, "$convert found an unknown argument: %s", k)
	})
	if err != nil {
		return nil, err
	}
	if args["input"] == nil {
		return nil, mongoerr.New(mongoerr.FailedToParse, "Missing 'input' parameter to $convert")
	}
	if args["to"] == nil {
		return nil, mongoerr.New(mongoerr.FailedToParse, "Missing 'to' parameter to $convert")
	}
	return foldNamed(&convertExpr{input: args["input"], to: args["to"], onError: args["onError"], onNull: args["onNull"]}, args)
}

// toTypeParser returns the parser of a $toX shorthand: $convert to t without
// onError or onNull.
func toTypeParser(t bson.Type) parseFunc {
	return func(p *Parser, name string, arg bson.RawValue) (Expr, error) {
		args, err := p.Operands(arg)
		if err != nil {
			return nil, err
		}
		if len(args) != 1 {
			return nil, mongoerr.Newf(mongoerr.Code(50723), "%s requires a single argument, got %d", name, len(args))
		}
		return foldStatic(&convertExpr{input: args[0], to: Const(Int32(int32(t)))}, args[0])
	}
}

// targetType resolves 'to': a type name (BadValue when unknown) or a type
// number (FailedToParse when not an integer or not a BSON type).
func targetType(v bson.RawValue) (bson.Type, error) {
	if v.Type == bson.TypeString {
		t, ok := bsonkit.TypeByName(v.StringValue())
		if !ok {
			return 0, mongoerr.Newf(mongoerr.BadValue, "Unknown type name: %s", v.StringValue())
		}
		return t, nil
	}
	if isNumeric(v) {
		n, ok := int32Integral(v)
		if !ok {
			return 0, mongoerr.New(mongoerr.FailedToParse, "In $convert, numeric 'to' argument is not an integer")
		}
		if !bsonkit.ValidType(int64(n)) {
			return 0, mongoerr.Newf(mongoerr.FailedToParse, "In $convert, numeric value for 'to' does not correspond to a BSON type: %d", n)
		}
		return bson.Type(byte(n)), nil
	}
	return 0, mongoerr.Newf(mongoerr.FailedToParse, "$convert's 'to' argument must be a string or number, but is %s", bsonkit.TypeName(v.Type))
}

// Eval converts the input; onNull answers a nullish input, null a nullish
// 'to', and onError a ConversionFailure.
func (e *convertExpr) Eval(c *Ctx) (bson.RawValue, error) {
	tv, err := e.to.Eval(c)
	if err != nil {
		return bson.RawValue{}, err
	}
	in, err := e.input.Eval(c)
	if err != nil {
		return bson.RawValue{}, err
	}
	var target bson.Type
	if !IsNullish(tv) {
		if target, err = targetType(tv); err != nil {
			return bson.RawValue{}, err
		}
	}
	if IsNullish(in) {
		if e.onNull != nil {
			return e.onNull.Eval(c)
		}
		return Null(), nil
	}
	if IsNullish(tv) {
		return Null(), nil
	}
	out, err := convertValue(in, target)
	if err != nil && e.onError != nil && mongoerr.Is(err, codeConversionFailure) {
		return e.onError.Eval(c)
	}
	return out, err
}

// convFail is a ConversionFailure with mongod's suffix for $convert
// without onError.
func convFail(format string, args ...any) error {
	return mongoerr.Newf(codeConversionFailure, format, args...)
}

// errOverflow is the ConversionFailure of a value out of the target range.
func errOverflow(v string) error {
	return convFail("Conversion would overflow target type in $convert with no onError value: %s", v)
}

// convertValue converts a non-nullish value to type t as $convert does.
func convertValue(in bson.RawValue, t bson.Type) (bson.RawValue, error) {
	switch in.Type {
	case bson.TypeDouble, bson.TypeString, bson.TypeObjectID, bson.TypeBoolean, bson.TypeDateTime,
		bson.TypeInt32, bson.TypeInt64, bson.TypeDecimal128:
		if in.Type == t {
			return in, nil
		}
	}
	unsupported := func() (bson.RawValue, error) {
		return bson.RawValue{}, convFail("Unsupported conversion from %s to %s in $convert with no onError value", bsonkit.TypeName(in.Type), bsonkit.TypeName(t))
	}
	switch t {
	case bson.TypeBoolean:
		// Every non-null type converts, MinKey and MaxKey included.
		return Bool(Truthy(in)), nil
	case bson.TypeString:
		return convertToString(in, unsupported)
	case bson.TypeInt32, bson.TypeInt64:
		return convertToInteger(in, t, unsupported)
	case bson.TypeDouble:
		return convertToDouble(in, unsupported)
	case bson.TypeDecimal128:
		return convertToDecimal(in, unsupported)
	case bson.TypeDateTime:
		return convertToDate(in, unsupported)
	case bson.TypeObjectID:
		if in.Type != bson.TypeString {
			return unsupported()
		}
		s := in.StringValue()
		if len(s) != 24 {
			return bson.RawValue{}, convFail("Failed to parse objectId '%s' in $convert with no onError value: Invalid string length for parsing to OID, expected 24 but found %d", s, len(s))
		}
		id, err := bson.ObjectIDFromHex(s)
		if err != nil {
			return bson.RawValue{}, convFail("Failed to parse objectId '%s' in $convert with no onError value: Invalid character found in hex string: %s", s, s)
		}
		return ObjectID(id), nil
	}
	return unsupported()
}

// convertToString converts to a string.
func convertToString(in bson.RawValue, unsupported func() (bson.RawValue, error)) (bson.RawValue, error) {
	switch in.Type {
	case bson.TypeDouble:
		f := in.Double()
		switch {
		case math.IsInf(f, 1):
			return String("Infinity"), nil
		case math.IsInf(f, -1):
			return String("-Infinity"), nil
		case math.IsNaN(f):
			return String("NaN"), nil
		case f == 0 && math.Signbit(f):
			return String("-0"), nil
		}
		return String(formatDoubleG(f)), nil
	case bson.TypeInt32, bson.TypeInt64, bson.TypeDecimal128:
		s, _ := coerceToString(in)
		return String(s), nil
	case bson.TypeBoolean:
		return String(strconv.FormatBool(in.Boolean())), nil
	case bson.TypeDateTime:
		ms := in.DateTime()
		s, err := formatDate(isoFormatZ, ms, utcZone)
		if err != nil {
			return bson.RawValue{}, err
		}
		return String(s), nil
	case bson.TypeObjectID:
		return String(in.ObjectID().Hex()), nil
	}
	return unsupported()
}

// convertToInteger converts to int (32-bit) or long, truncating
// fractions toward zero and failing on overflow, NaN and infinity.
func convertToInteger(in bson.RawValue, t bson.Type, unsupported func() (bson.RawValue, error)) (bson.RawValue, error) {
	lo, hi := int64(math.MinInt32), int64(math.MaxInt32)
	if t == bson.TypeInt64 {
		lo, hi = math.MinInt64, math.MaxInt64
	}
	wrap := func(n int64) bson.RawValue {
		if t == bson.TypeInt32 {
			return Int32(int32(n))
		}
		return Int64(n)
	}
	switch in.Type {
	case bson.TypeBoolean:
		if in.Boolean() {
			return wrap(1), nil
		}
		return wrap(0), nil
	case bson.TypeInt32:
		return wrap(int64(in.Int32())), nil
	case bson.TypeInt64:
		n := in.Int64()
		if n < lo || n > hi {
			// mongod's message names no value for a long source.
			return bson.RawValue{}, errOverflow("")
		}
		return wrap(n), nil
	case bson.TypeDateTime:
		if t == bson.TypeInt64 {
			return Int64(in.DateTime()), nil
		}
	case bson.TypeDouble:
		n, err := doubleToInt(in.Double(), t)
		if err != nil {
			return bson.RawValue{}, err
		}
		return wrap(n), nil
	case bson.TypeDecimal128:
		n, err := decimalToInt(in, t)
		if err != nil {
			return bson.RawValue{}, err
		}
		return wrap(n), nil
	case bson.TypeString:
		s := in.StringValue()
		n, err := strconv.ParseInt(s, 10, 64)
		if err != nil || n < lo || n > hi {
			why := "Did not consume whole string."
			if ne, ok := err.(*strconv.NumError); ok && ne.Err == strconv.ErrRange || err == nil {
				why = "Out of range"
			}
			if s == "" {
				why = "No digits"
			}
			return bson.RawValue{}, convFail("Failed to parse number '%s' in $convert with no onError value: %s", s, why)
		}
		return wrap(n), nil
	}
	return unsupported()
}

// checkFinite fails for NaN and infinities converted to an integer.
func checkFinite(f float64) error {
	if math.IsNaN(f) {
		return convFail("Attempt to convert NaN value to integer type in $convert with no onError value")
	}
	if math.IsInf(f, 0) {
		return convFail("Attempt to convert infinity value to integer type in $convert with no onError value")
	}
	return nil
}

// doubleToInt truncates f to an int or long, failing outside the range.
func doubleToInt(f float64, t bson.Type) (int64, error) {
	if err := checkFinite(f); err != nil {
		return 0, err
	}
	if t == bson.TypeInt32 {
		if f < math.MinInt32 || f > math.MaxInt32 {
			return 0, errOverflow(formatDoubleG(f))
		}
	} else if f < -9223372036854775808.0 || f >= 9223372036854775808.0 {
		return 0, errOverflow(formatDoubleG(f))
	}
	return int64(f), nil
}

// decimalToInt truncates a decimal to an int or long, failing outside the
// range.
func decimalToInt(in bson.RawValue, t bson.Type) (int64, error) {
	d := decOf(in)
	switch d.form {
	case decNaN:
		return 0, convFail("Attempt to convert NaN value to integer type in $convert with no onError value")
	case decInf:
		return 0, convFail("Attempt to convert infinity value to integer type in $convert with no onError value")
	}
	n, ok := d.int64(roundDown)
	if !ok || t == bson.TypeInt32 && (n < math.MinInt32 || n > math.MaxInt32) {
		return 0, errOverflow(in.Decimal128().String())
	}
	return n, nil
}

// convertToDouble converts to a double; a decimal out of range fails.
func convertToDouble(in bson.RawValue, unsupported func() (bson.RawValue, error)) (bson.RawValue, error) {
	switch in.Type {
	case bson.TypeBoolean:
		if in.Boolean() {
			return Double(1), nil
		}
		return Double(0), nil
	case bson.TypeInt32, bson.TypeInt64:
		f, _ := bsonkit.Float64(in)
		return Double(f), nil
	case bson.TypeDateTime:
		return Double(float64(in.DateTime())), nil
	case bson.TypeDecimal128:
		d := decOf(in)
		f := d.float()
		if d.form == decFinite && (math.IsInf(f, 0) || f == 0 && !d.isZero()) {
			return bson.RawValue{}, errOverflow(in.Decimal128().String())
		}
		return Double(f), nil
	case bson.TypeString:
		s := in.StringValue()
		f, err := parseDoubleString(s)
		if err != nil {
			return bson.RawValue{}, convFail("Failed to parse number '%s' in $convert with no onError value: %s", s, err.Error())
		}
		return Double(f), nil
	}
	return unsupported()
}

// parseDoubleString parses a string as mongod's NumberParser does for
// doubles: the whole string, no leading whitespace, decimal or
// scientific notation, and the words inf, infinity and nan.
func parseDoubleString(s string) (float64, error) {
	if s == "" {
		return 0, errString("No digits")
	}
	if s[0] == ' ' || s[0] == '\t' || s[0] == '\n' {
		return 0, errString("Leading whitespace")
	}
	f, err := strconv.ParseFloat(s, 64)
	if err != nil {
		if ne, ok := err.(*strconv.NumError); ok && ne.Err == strconv.ErrRange {
			return 0, errString("Out of range")
		}
		return 0, errString("Did not consume whole string.")
	}
	if strings.ContainsAny(s, "xXpP_") {
		return 0, errString("Did not consume whole string.")
	}
	return f, nil
}

// errString is a parse failure reason, as NumberParser words it.
type errString string

// Error returns the reason.
func (e errString) Error() string { return string(e) }

// convertToDecimal converts to a decimal (doubles to 15 digits).
func convertToDecimal(in bson.RawValue, unsupported func() (bson.RawValue, error)) (bson.RawValue, error) {
	switch in.Type {
	case bson.TypeBoolean:
		if in.Boolean() {
			return Decimal(decFromInt(1).to128()), nil
		}
		return Decimal(decFromInt(0).to128()), nil
	case bson.TypeInt32, bson.TypeInt64, bson.TypeDouble:
		return Decimal(decOf(in).to128()), nil
	case bson.TypeDateTime:
		return Decimal(decFromInt(in.DateTime()).to128()), nil
	case bson.TypeString:
		s := in.StringValue()
		d, err := bson.ParseDecimal128(s)
		if err != nil || strings.TrimSpace(s) != s {
			why := "Failed to parse string to decimal"
			if s == "" {
				why = "Empty string"
			}
			return bson.RawValue{}, convFail("Failed to parse number '%s' in $convert with no onError value: %s", s, why)
		}
		return Decimal(d), nil
	}
	return unsupported()
}

// convertToDate converts to a date: longs, doubles and decimals are
// milliseconds, strings parse as $dateFromString does without a format.
func convertToDate(in bson.RawValue, unsupported func() (bson.RawValue, error)) (bson.RawValue, error) {
	switch in.Type {
	case bson.TypeTimestamp, bson.TypeObjectID:
		ms, _ := coerceToDate(in)
		return Date(ms), nil
	case bson.TypeInt64:
		return Date(in.Int64()), nil
	case bson.TypeDouble:
		n, err := doubleToInt(in.Double(), bson.TypeInt64)
		if err != nil {
			return bson.RawValue{}, err
		}
		return Date(n), nil
	case bson.TypeDecimal128:
		n, err := decimalToInt(in, bson.TypeInt64)
		if err != nil {
			return bson.RawValue{}, err
		}
		return Date(n), nil
	case bson.TypeString:
		ms, err := parseDateFree(in.StringValue(), utcZone)
		if err != nil {
			return bson.RawValue{}, err
		}
		return Date(ms), nil
	}
	return unsupported()
}
