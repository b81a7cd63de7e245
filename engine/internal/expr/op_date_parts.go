package expr

import (
	"strings"
	"time"

	"go.mongodb.org/mongo-driver/v2/bson"

	"github.com/formworkdb/formwork/engine/internal/bsonkit"
	"github.com/formworkdb/formwork/engine/internal/mongoerr"
)

// The date part extractors ($year … $isoDayOfWeek) and $dateToParts.
// Each extractor takes a date expression, a one-element array of it, or
// {date, timezone}; dates, timestamps and ObjectIds are accepted.
func init() {
	parts := map[string]func(t time.Time, ms int64) bson.RawValue{
		"$year":        func(t time.Time, _ int64) bson.RawValue { return Int32(int32(t.Year())) },
		"$month":       func(t time.Time, _ int64) bson.RawValue { return Int32(int32(t.Month())) },
		"$dayOfMonth":  func(t time.Time, _ int64) bson.RawValue { return Int32(int32(t.Day())) },
		"$hour":        func(t time.Time, _ int64) bson.RawValue { return Int32(int32(t.Hour())) },
		"$minute":      func(t time.Time, _ int64) bson.RawValue { return Int32(int32(t.Minute())) },
		"$second":      func(t time.Time, _ int64) bson.RawValue { return Int32(int32(t.Second())) },
		"$millisecond": func(_ time.Time, ms int64) bson.RawValue { return Int32(int32(msOf(ms))) },
		"$dayOfYear":   func(t time.Time, _ int64) bson.RawValue { return Int32(int32(t.YearDay())) },
		"$dayOfWeek":   func(t time.Time, _ int64) bson.RawValue { return Int32(int32(t.Weekday()) + 1) },
		"$week":        func(t time.Time, _ int64) bson.RawValue { return Int32(int32(weekOfYear(t))) },
		"$isoWeek": func(t time.Time, _ int64) bson.RawValue {
			_, w := t.ISOWeek()
			return Int32(int32(w))
		},
		// mongod returns the ISO week-numbering year as a long.
		"$isoWeekYear": func(t time.Time, _ int64) bson.RawValue {
			y, _ := t.ISOWeek()
			return Int64(int64(y))
		},
		"$isoDayOfWeek": func(t time.Time, _ int64) bson.RawValue { return Int32(int32(isoDayOfWeek(t))) },
	}
	for name, f := range parts {
		register(name, datePartParser(f))
	}
	register("$dateToParts", parseDateToParts)
}

// datePartExpr extracts one component of a date in a time zone.
type datePartExpr struct {
	date, tz Expr
	part     func(t time.Time, ms int64) bson.RawValue
}

// datePartParser returns the parser of one extractor: a date expression,
// [date], or {date, timezone} (40535, 40536, 40539).
func datePartParser(part func(t time.Time, ms int64) bson.RawValue) parseFunc {
	return func(p *Parser, name string, arg bson.RawValue) (Expr, error) {
		switch arg.Type {
		case bson.TypeEmbeddedDocument:
			doc := arg.Document()
			// {} is the options form too: it lacks a date.
			first, err := doc.IndexErr(0)
			if err != nil || !strings.HasPrefix(first.Key(), "$") {
				args, err := namedArgs(p, doc, []string{"date", "timezone"}, func(k string) error {
					return mongoerr.Newf(mongoerr.Code(40535), "unrecognized option to %s: \"%s\"", name, k)
				})
				if err != nil {
					return nil, err
				}
				if args["date"] == nil {
					return nil, mongoerr.Newf(mongoerr.Code(40539), "missing 'date' argument to %s, provided: %s: %s", name, name, bsonString(arg))
				}
				return foldNamed(&datePartExpr{date: args["date"], tz: args["timezone"], part: part}, args)
			}
		case bson.TypeArray:
			vals := Values(arg)
			if len(vals) != 1 {
				return nil, mongoerr.Newf(mongoerr.Code(40536), "%s accepts exactly one argument if given an array, but was given %d", name, len(vals))
			}
			arg = vals[0]
		}
		d, err := p.Parse(arg)
		if err != nil {
			return nil, err
		}
		return foldStatic(&datePartExpr{date: d, part: part}, d)
	}
}

// Eval extracts the part; a nullish date or timezone gives null.
func (e *datePartExpr) Eval(c *Ctx) (bson.RawValue, error) {
	v, err := e.date.Eval(c)
	if err != nil {
		return bson.RawValue{}, err
	}
	if IsNullish(v) {
		return Null(), nil
	}
	ms, err := coerceToDate(v)
	if err != nil {
		return bson.RawValue{}, err
	}
	z, err := evalTimezone(c, e.tz)
	if err != nil || z == nil {
		return Null(), err
	}
	return e.part(z.localTime(ms), ms), nil
}

// dateToPartsExpr is $dateToParts.
type dateToPartsExpr struct {
	date, tz, iso Expr
}

// parseDateToParts parses {date, timezone, iso8601} (40520, 40522, 40524).
func parseDateToParts(p *Parser, name string, arg bson.RawValue) (Expr, error) {
	if arg.Type != bson.TypeEmbeddedDocument {
		return nil, mongoerr.New(mongoerr.Code(40524), "$dateToParts only supports an object as its argument")
	}
	args, err := namedArgs(p, arg.Document(), []string{"date", "timezone", "iso8601"}, func(k string) error {
		return mongoerr.Newf(mongoerr.Code(40520), "Unrecognized argument to $dateToParts: %s", k)
	})
	if err != nil {
		return nil, err
	}
	if args["date"] == nil {
		return nil, mongoerr.New(mongoerr.Code(40522), "Missing 'date' parameter to $dateToParts")
	}
	return foldNamed(&dateToPartsExpr{date: args["date"], tz: args["timezone"], iso: args["iso8601"]}, args)
}

// Eval returns the calendar or ISO week-date parts as a document of ints.
func (e *dateToPartsExpr) Eval(c *Ctx) (bson.RawValue, error) {
	v, err := e.date.Eval(c)
	if err != nil {
		return bson.RawValue{}, err
	}
	z, err := evalTimezone(c, e.tz)
	if err != nil || z == nil {
		return Null(), err
	}
	iso := false
	if e.iso != nil {
		iv, err := e.iso.Eval(c)
		if err != nil {
			return bson.RawValue{}, err
		}
		if IsNullish(iv) {
			return Null(), nil
		}
		if iv.Type != bson.TypeBoolean {
			return bson.RawValue{}, mongoerr.Newf(mongoerr.Code(40521), "iso8601 must evaluate to a bool, found %s", bsonkit.TypeName(iv.Type))
		}
		iso = iv.Boolean()
	}
	if IsNullish(v) {
		return Null(), nil
	}
	ms, err := coerceToDate(v)
	if err != nil {
		return bson.RawValue{}, err
	}
	t := z.localTime(ms)
	b := NewDocBuilder()
	if iso {
		y, w := t.ISOWeek()
		b.Append("isoWeekYear", Int32(int32(y)))
		b.Append("isoWeek", Int32(int32(w)))
		b.Append("isoDayOfWeek", Int32(int32(isoDayOfWeek(t))))
	} else {
		b.Append("year", Int32(int32(t.Year())))
		b.Append("month", Int32(int32(t.Month())))
		b.Append("day", Int32(int32(t.Day())))
	}
	b.Append("hour", Int32(int32(t.Hour())))
	b.Append("minute", Int32(int32(t.Minute())))
	b.Append("second", Int32(int32(t.Second())))
	b.Append("millisecond", Int32(int32(msOf(ms))))
	return Doc(b.Doc()), nil
}
