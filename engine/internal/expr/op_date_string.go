package expr

import (
	"strconv"
	"strings"

	"go.mongodb.org/mongo-driver/v2/bson"

	"github.com/formworkdb/formwork/engine/internal/bsonkit"
	"github.com/formworkdb/formwork/engine/internal/mongoerr"
)

// init registers $dateToString and $dateFromString.
func init() {
	register("$dateToString", parseDateToString)
	register("$dateFromString", parseDateFromString)
}

// isoFormatZ is $dateToString's default format. In MongoDB 7.0 it ends in
// Z whatever the timezone argument (7.1 drops the Z outside UTC).
const isoFormatZ = "%Y-%m-%dT%H:%M:%S.%LZ"

// validateDateFormat checks that every '%' in format is followed by one
// of the allowed specifier letters or another '%' (18535, 18536).
func validateDateFormat(format, allowed string) error {
	for i := 0; i < len(format); i++ {
		if format[i] != '%' {
			continue
		}
		i++
		if i == len(format) {
			return mongoerr.New(mongoerr.Code(18535), "Unmatched '%' at end of format string")
		}
		if format[i] != '%' && strings.IndexByte(allowed, format[i]) < 0 {
			return mongoerr.Newf(mongoerr.Code(18536), "Invalid format character '%%%c' in format string", format[i])
		}
	}
	return nil
}

// The specifiers $dateToString and $dateFromString accept.
const (
	toStringSpecifiers   = "bBdGHjLmMSwuUVYzZ"
	fromStringSpecifiers = "bBdGHLmMSuUVwYzZ"
)

// formatDate renders the instant ms in zone z with a validated format.
// Years outside 0-9999 fail with 18537.
func formatDate(format string, ms int64, z *tzone) (string, error) {
	t := z.localTime(ms)
	var b strings.Builder
	pad := func(n, width int) error {
		if n < 0 || n > 9999 {
			return mongoerr.Newf(mongoerr.Code(18537), "Could not convert date to string: date component was outside the supported range of 0-9999: %d", n)
		}
		s := strconv.Itoa(n)
		for i := len(s); i < width; i++ {
			b.WriteByte('0')
		}
		b.WriteString(s)
		return nil
	}
	for i := 0; i < len(format); i++ {
		ch := format[i]
		if ch != '%' || i+1 == len(format) {
			b.WriteByte(ch)
			continue
		}
		i++
		var err error
		switch format[i] {
		case '%':
			b.WriteByte('%')
		case 'b':
			b.WriteString(t.Month().String()[:3])
		case 'B':
			b.WriteString(t.Month().String())
		case 'Y':
			err = pad(t.Year(), 4)
		case 'G':
			y, _ := t.ISOWeek()
			err = pad(y, 4)
		case 'm':
			err = pad(int(t.Month()), 2)
		case 'd':
			err = pad(t.Day(), 2)
		case 'H':
			err = pad(t.Hour(), 2)
		case 'M':
			err = pad(t.Minute(), 2)
		case 'S':
			err = pad(t.Second(), 2)
		case 'L':
			err = pad(msOf(ms), 3)
		case 'j':
			err = pad(t.YearDay(), 3)
		case 'w':
			err = pad(int(t.Weekday())+1, 1)
		case 'u':
			err = pad(isoDayOfWeek(t), 1)
		case 'U':
			err = pad(weekOfYear(t), 2)
		case 'V':
			_, w := t.ISOWeek()
			err = pad(w, 2)
		case 'z':
			_, off := t.Zone()
			sign := byte('+')
			if off < 0 {
				sign, off = '-', -off
			}
			b.WriteByte(sign)
			_ = pad(off/3600, 2)
			err = pad(off/60%60, 2)
		case 'Z':
			_, off := t.Zone()
			b.WriteString(strconv.Itoa(off / 60))
		default:
			b.WriteByte('%')
			b.WriteByte(format[i])
		}
		if err != nil {
			return "", err
		}
	}
	return b.String(), nil
}

// formatDateSpec formats t (in UTC) with a format known to be valid.
func formatDateSpec(ms int64, format string) string {
	s, _ := formatDate(format, ms, utcZone)
	return s
}

// dateToStringExpr is $dateToString.
type dateToStringExpr struct {
	date, format, tz, onNull Expr
}

// parseDateToString parses {date, format, timezone, onNull} (18534, 18628,
// 18629).
func parseDateToString(p *Parser, name string, arg bson.RawValue) (Expr, error) {
	if arg.Type != bson.TypeEmbeddedDocument {
		return nil, mongoerr.New(mongoerr.Code(18629), "$dateToString only supports an object as its argument")
	}
	args, err := namedArgs(p, arg.Document(), []string{"date", "format", "timezone", "onNull"}, func(k string) error {
		return mongoerr.Newf(mongoerr.Code(18534), "Unrecognized argument to $dateToString: %s", k)
	})
	if err != nil {
		return nil, err
	}
	if args["date"] == nil {
		return nil, mongoerr.New(mongoerr.Code(18628), "Missing 'date' parameter to $dateToString")
	}
	return foldNamed(&dateToStringExpr{date: args["date"], format: args["format"], tz: args["timezone"], onNull: args["onNull"]}, args)
}

// Eval formats the date; onNull (or null) answers a nullish date.
func (e *dateToStringExpr) Eval(c *Ctx) (bson.RawValue, error) {
	date, err := e.date.Eval(c)
	if err != nil {
		return bson.RawValue{}, err
	}
	var format bson.RawValue
	if e.format != nil {
		if format, err = e.format.Eval(c); err != nil {
			return bson.RawValue{}, err
		}
		if !IsNullish(format) {
			if format.Type != bson.TypeString {
				return bson.RawValue{}, mongoerr.Newf(mongoerr.Code(18533), "$dateToString requires that 'format' be a string, found: %s with value %s", bsonkit.TypeName(format.Type), valueString(format))
			}
			if err := validateDateFormat(format.StringValue(), toStringSpecifiers); err != nil {
				return bson.RawValue{}, err
			}
		}
	}
	z, err := evalTimezone(c, e.tz)
	if err != nil {
		return bson.RawValue{}, err
	}
	if IsNullish(date) {
		if e.onNull != nil {
			return e.onNull.Eval(c)
		}
		return Null(), nil
	}
	if z == nil {
		return Null(), nil
	}
	f := isoFormatZ
	if e.format != nil {
		if IsNullish(format) {
			return Null(), nil
		}
		f = format.StringValue()
	}
	ms, err := coerceToDate(date)
	if err != nil {
		return bson.RawValue{}, err
	}
	s, err := formatDate(f, ms, z)
	if err != nil {
		return bson.RawValue{}, err
	}
	return String(s), nil
}

// dateFromStringExpr is $dateFromString.
type dateFromStringExpr struct {
	str, format, tz, onError, onNull Expr
}

// parseDateFromString parses {dateString, format, timezone, onError, onNull}
// (40540-40542).
func parseDateFromString(p *Parser, name string, arg bson.RawValue) (Expr, error) {
	if arg.Type != bson.TypeEmbeddedDocument {
		return nil, mongoerr.Newf(mongoerr.Code(40540), "$dateFromString only supports an object as an argument, found: %s", bsonkit.TypeName(arg.Type))
	}
	args, err := namedArgs(p, arg.Document(), []string{"dateString", "format", "timezone", "onError", "onNull"}, func(k string) error {
		return mongoerr.Newf(mongoerr.Code(40541), "Unrecognized argument to $dateFromString: %s", k)
	})
	if err != nil {
		return nil, err
	}
	if args["dateString"] == nil {
		return nil, mongoerr.New(mongoerr.Code(40542), "Missing 'dateString' parameter to $dateFromString")
	}
	return foldNamed(&dateFromStringExpr{str: args["dateString"], format: args["format"], tz: args["timezone"], onError: args["onError"], onNull: args["onNull"]}, args)
}

// ConversionFailure is the code of a failed $convert or date parse.
const codeConversionFailure = mongoerr.ConversionFailure

// Eval parses the string; onError catches ConversionFailure only.
func (e *dateFromStringExpr) Eval(c *Ctx) (bson.RawValue, error) {
	s, err := e.str.Eval(c)
	if err != nil {
		return bson.RawValue{}, err
	}
	var format bson.RawValue
	if e.format != nil {
		if format, err = e.format.Eval(c); err != nil {
			return bson.RawValue{}, err
		}
		if !IsNullish(format) {
			if format.Type != bson.TypeString {
				return bson.RawValue{}, mongoerr.Newf(mongoerr.Code(40684), "$dateFromString requires that 'format' be a string, found: %s with value %s", bsonkit.TypeName(format.Type), valueString(format))
			}
			if err := validateDateFormat(format.StringValue(), fromStringSpecifiers); err != nil {
				return bson.RawValue{}, err
			}
		}
	}
	z, err := evalTimezone(c, e.tz)
	if err != nil {
		return bson.RawValue{}, err
	}
	if IsNullish(s) {
		if e.onNull != nil {
			return e.onNull.Eval(c)
		}
		return Null(), nil
	}
	out, err := e.convert(s, format, z)
	if err != nil && e.onError != nil && mongoerr.Is(err, codeConversionFailure) {
		return e.onError.Eval(c)
	}
	return out, err
}

// convert parses a non-nullish date string, with the format when one is
// given.
func (e *dateFromStringExpr) convert(s, format bson.RawValue, z *tzone) (bson.RawValue, error) {
	if s.Type != bson.TypeString {
		return bson.RawValue{}, mongoerr.Newf(codeConversionFailure, "$dateFromString requires that 'dateString' be a string, found: %s with value %s", bsonkit.TypeName(s.Type), valueString(s))
	}
	if z == nil {
		return Null(), nil
	}
	var ms int64
	var err error
	if e.format != nil {
		if IsNullish(format) {
			return Null(), nil
		}
		ms, err = parseDateWithFormat(s.StringValue(), format.StringValue(), z)
	} else {
		ms, err = parseDateFree(s.StringValue(), z)
	}
	if err != nil {
		return bson.RawValue{}, err
	}
	return Date(ms), nil
}
