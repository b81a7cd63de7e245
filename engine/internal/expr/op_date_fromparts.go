package expr

import (
	"math"
	"time"

	"go.mongodb.org/mongo-driver/v2/bson"

	"github.com/formworkdb/formwork/engine/internal/bsonkit"
	"github.com/formworkdb/formwork/engine/internal/mongoerr"
)

// init registers $dateFromParts.
func init() {
	register("$dateFromParts", parseDateFromParts)
}

// dateFromPartsExpr is $dateFromParts in its calendar form (year, month,
// day) or its ISO form (isoWeekYear, isoWeek, isoDayOfWeek). Components
// out of their natural range carry into the next larger one, as
// timelib's normalisation does.
type dateFromPartsExpr struct {
	args map[string]Expr
	iso  bool
}

// dateFromPartsFields are the arguments $dateFromParts accepts.
var dateFromPartsFields = []string{"year", "month", "day", "hour", "minute", "second", "millisecond",
	"isoWeekYear", "isoWeek", "isoDayOfWeek", "timezone"}

// parseDateFromParts parses the parts document (40489, 40516, 40518, 40519,
// 40525).
func parseDateFromParts(p *Parser, name string, arg bson.RawValue) (Expr, error) {
	if arg.Type != bson.TypeEmbeddedDocument {
		return nil, mongoerr.New(mongoerr.Code(40519), "$dateFromParts only supports an object as its argument")
	}
	args, err := namedArgs(p, arg.Document(), dateFromPartsFields, func(k string) error {
		return mongoerr.Newf(mongoerr.Code(40518), "Unrecognized argument to $dateFromParts: %s", k)
	})
	if err != nil {
		return nil, err
	}
	has := func(k string) bool { return args[k] != nil }
	switch {
	case !has("year") && !has("isoWeekYear"):
		return nil, mongoerr.New(mongoerr.Code(40516), "$dateFromParts requires either 'year' or 'isoWeekYear' to be present")
	case has("year") && (has("isoWeekYear") || has("isoWeek") || has("isoDayOfWeek")):
		return nil, mongoerr.New(mongoerr.Code(40489), "$dateFromParts does not allow mixing natural dates with ISO dates")
	case has("isoWeekYear") && (has("month") || has("day")):
		return nil, mongoerr.New(mongoerr.Code(40525), "$dateFromParts does not allow mixing ISO dates with natural dates")
	}
	return foldNamed(&dateFromPartsExpr{args: args, iso: has("isoWeekYear")}, args)
}

// part evaluates one component: (value, true) or (0, false) when it is
// nullish; 40515 when it is not an integer, 31034 when bounded and
// outside the 16-bit range.
func (e *dateFromPartsExpr) part(c *Ctx, name string, def int64, bounded bool) (int64, bool, error) {
	x := e.args[name]
	if x == nil {
		return def, true, nil
	}
	v, err := x.Eval(c)
	if err != nil {
		return 0, false, err
	}
	if IsNullish(v) {
		return 0, false, nil
	}
	n, ok := bsonkit.ExactInt64(v)
	if !ok {
		return 0, false, mongoerr.Newf(mongoerr.Code(40515), "'%s' must evaluate to an integer, found %s with value %s", name, bsonkit.TypeName(v.Type), valueString(v))
	}
	if bounded && (n < math.MinInt16 || n > math.MaxInt16) {
		return 0, false, mongoerr.Newf(mongoerr.Code(31034), "'%s' must evaluate to a value in the range [-32768, 32767]; value %d is not in range", name, n)
	}
	return n, true, nil
}

// Eval builds the date; any nullish part or timezone gives null.
func (e *dateFromPartsExpr) Eval(c *Ctx) (bson.RawValue, error) {
	var vals [4]int64
	for i, f := range []struct {
		name    string
		bounded bool
	}{{"hour", true}, {"minute", true}, {"second", false}, {"millisecond", false}} {
		n, ok, err := e.part(c, f.name, 0, f.bounded)
		if err != nil || !ok {
			return Null(), err
		}
		vals[i] = n
	}
	hour, minute, second, milli := vals[0], vals[1], vals[2], vals[3]
	z, err := evalTimezone(c, e.args["timezone"])
	if err != nil || z == nil {
		return Null(), err
	}
	names := [3]string{"year", "month", "day"}
	if e.iso {
		names = [3]string{"isoWeekYear", "isoWeek", "isoDayOfWeek"}
	}
	var ymd [3]int64
	for i, name := range names {
		def := int64(1)
		if i == 0 {
			def = 1970
		}
		n, ok, err := e.part(c, name, def, i > 0)
		if err != nil || !ok {
			return Null(), err
		}
		ymd[i] = n
	}
	if ymd[0] < 1 || ymd[0] > 9999 {
		if e.iso {
			return bson.RawValue{}, mongoerr.Newf(mongoerr.Code(31095), "'isoWeekYear' must evaluate to an integer in the range 1 to 9999, found %d", ymd[0])
		}
		return bson.RawValue{}, mongoerr.Newf(mongoerr.Code(40523), "'year' must evaluate to an integer in the range 1 to 9999, found %d", ymd[0])
	}
	year, month, day := ymd[0], ymd[1], ymd[2]
	if e.iso {
		// Week 1 is the week with January 4th; day 1 is its Monday.
		jan4 := time.Date(int(year), time.January, 4, 0, 0, 0, 0, time.UTC)
		monday := 4 - (isoDayOfWeek(jan4) - 1)
		year, month = ymd[0], 1
		day = int64(monday) + (ymd[1]-1)*7 + (ymd[2] - 1)
	}
	// Seconds and milliseconds are unbounded 64-bit values: fold them into
	// whole seconds first so that time.Date's int arithmetic cannot overflow.
	secs, ms := second+milli/1000, milli%1000
	if ms < 0 {
		ms += 1000
		secs--
	}
	t := time.Date(int(year), time.Month(month), int(day), int(hour), int(minute), 0, 0, time.UTC)
	out := z.wallToInstant(t)*1000 + secs*1000 + ms
	return Date(out), nil
}
