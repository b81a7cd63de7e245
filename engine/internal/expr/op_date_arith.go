package expr

import (
	"math"
	"strings"
	"time"

	"go.mongodb.org/mongo-driver/v2/bson"

	"github.com/formworkdb/formwork/engine/internal/bsonkit"
	"github.com/formworkdb/formwork/engine/internal/mongoerr"
)

// Date arithmetic: $dateAdd, $dateSubtract, $dateDiff and $dateTrunc,
// with MongoDB's calendar rules: adding months clamps to the last day of
// the target month, units of a day or more keep the wall-clock time of
// the zone across DST changes, differences count unit boundaries crossed.
func init() {
	register("$dateAdd", parseDateArith)
	register("$dateSubtract", parseDateArith)
	register("$dateDiff", parseDateDiff)
	register("$dateTrunc", parseDateTrunc)
}

// timeUnit is a $dateAdd/$dateDiff/$dateTrunc unit.
type timeUnit int

// The time units, smallest first.
const (
	unitMillisecond timeUnit = iota
	unitSecond
	unitMinute
	unitHour
	unitDay
	unitWeek
	unitMonth
	unitQuarter
	unitYear
)

// timeUnits maps unit names to units.
var timeUnits = map[string]timeUnit{
	"millisecond": unitMillisecond, "second": unitSecond, "minute": unitMinute, "hour": unitHour,
	"day": unitDay, "week": unitWeek, "month": unitMonth, "quarter": unitQuarter, "year": unitYear,
}

// unitNames are the units' names, by unit.
var unitNames = []string{"millisecond", "second", "minute", "hour", "day", "week", "month", "quarter", "year"}

// unitMillis is the length of the fixed-size units.
var unitMillis = []int64{1, 1000, 60_000, 3_600_000}

// evalUnit evaluates a unit operand; ok is false when it is nullish.
func evalUnit(c *Ctx, e Expr, op string) (timeUnit, bool, error) {
	v, err := e.Eval(c)
	if err != nil || IsNullish(v) {
		return 0, false, err
	}
	if v.Type != bson.TypeString {
		return 0, false, mongoerr.Newf(mongoerr.Code(5439013), "%s requires 'unit' to be a string, but got %s", op, bsonkit.TypeName(v.Type))
	}
	u, ok := timeUnits[v.StringValue()]
	if !ok {
		return 0, false, mongoerr.Newf(mongoerr.Code(5439014), "%s parameter 'unit' value cannot be recognized as a time unit: %s", op, v.StringValue())
	}
	return u, true, nil
}

// weekdays maps startOfWeek names and abbreviations (lower case) to days.
var weekdays = map[string]time.Weekday{
	"sunday": time.Sunday, "sun": time.Sunday, "monday": time.Monday, "mon": time.Monday,
	"tuesday": time.Tuesday, "tue": time.Tuesday, "wednesday": time.Wednesday, "wed": time.Wednesday,
	"thursday": time.Thursday, "thu": time.Thursday, "friday": time.Friday, "fri": time.Friday,
	"saturday": time.Saturday, "sat": time.Saturday,
}

// evalStartOfWeek evaluates startOfWeek (default Sunday); ok is false when
// it is nullish.
func evalStartOfWeek(c *Ctx, e Expr, op string) (time.Weekday, bool, error) {
	if e == nil {
		return time.Sunday, true, nil
	}
	v, err := e.Eval(c)
	if err != nil || IsNullish(v) {
		return 0, false, err
	}
	if v.Type != bson.TypeString {
		return 0, false, mongoerr.Newf(mongoerr.Code(5439015), "%s requires 'startOfWeek' to be a string, but got %s", op, bsonkit.TypeName(v.Type))
	}
	d, ok := weekdays[strings.ToLower(v.StringValue())]
	if !ok {
		return 0, false, mongoerr.Newf(mongoerr.Code(5439016), "%s parameter 'startOfWeek' value cannot be recognized as a day of a week: %s", op, v.StringValue())
	}
	return d, true, nil
}

// dateArithExpr is $dateAdd or $dateSubtract.
type dateArithExpr struct {
	name                    string
	start, unit, amount, tz Expr
}

// parseDateArith parses {startDate, unit, amount, timezone} (5166400-5166402).
func parseDateArith(p *Parser, name string, arg bson.RawValue) (Expr, error) {
	if arg.Type != bson.TypeEmbeddedDocument {
		return nil, mongoerr.Newf(mongoerr.Code(5166400), "%s expects an object as its argument", name)
	}
	args, err := namedArgs(p, arg.Document(), []string{"startDate", "unit", "amount", "timezone"}, func(k string) error {
		return mongoerr.Newf(mongoerr.Code(5166401), "Unrecognized argument to %s: %s. Expected arguments: startDate, unit, amount, and optionally timezone.", name, k)
	})
	if err != nil {
		return nil, err
	}
	if args["startDate"] == nil || args["unit"] == nil || args["amount"] == nil {
		return nil, mongoerr.Newf(mongoerr.Code(5166402), "%s requires startDate, unit, and amount to be present", name)
	}
	return foldNamed(&dateArithExpr{name: name, start: args["startDate"], unit: args["unit"], amount: args["amount"], tz: args["timezone"]}, args)
}

// Eval adds (or subtracts) the amount; nullish operands give null.
func (e *dateArithExpr) Eval(c *Ctx) (bson.RawValue, error) {
	start, err := e.start.Eval(c)
	if err != nil || IsNullish(start) {
		return Null(), err
	}
	unit, ok, err := evalUnit(c, e.unit, e.name)
	if err != nil || !ok {
		return Null(), err
	}
	amount, err := e.amount.Eval(c)
	if err != nil || IsNullish(amount) {
		return Null(), err
	}
	z, err := evalTimezone(c, e.tz)
	if err != nil || z == nil {
		return Null(), err
	}
	if !coercibleToDate(start) {
		return bson.RawValue{}, mongoerr.Newf(mongoerr.Code(5166403), "%s requires startDate to be convertible to a date", e.name)
	}
	n, ok := bsonkit.ExactInt64(amount)
	if !ok {
		return bson.RawValue{}, mongoerr.Newf(mongoerr.Code(5166405), "%s expects integer amount of time units", e.name)
	}
	ms, _ := coerceToDate(start)
	if e.name == "$dateSubtract" {
		if n == math.MinInt64 {
			return bson.RawValue{}, mongoerr.Newf(mongoerr.Code(6045000), "invalid $dateSubtract 'amount' parameter value: %d", n)
		}
		n = -n
	}
	out, err := dateAdd(ms, unit, n, z)
	if err != nil {
		return bson.RawValue{}, err
	}
	return Date(out), nil
}

// maxDateAddAmount bounds |amount| per unit as mongod does, so that the
// calendar arithmetic cannot overflow.
func maxDateAddAmount(u timeUnit) int64 {
	const maxDays = math.MaxUint64/86_400_000 + 1
	const maxYears = maxDays/365 + 1
	switch u {
	case unitYear:
		return maxYears
	case unitQuarter:
		return maxYears * 4
	case unitMonth:
		return maxYears * 12
	case unitWeek:
		return maxDays / 7
	case unitDay:
		return maxDays
	case unitHour:
		return maxDays * 24
	case unitMinute:
		return maxDays * 24 * 60
	}
	return maxDays * 24 * 60 * 60
}

// errDateAddOverflow is $dateAdd's result outside the BSON date range.
var errDateAddOverflow = mongoerr.New(mongoerr.Code(5166406), "dateAdd overflowed")

// dateAdd adds amount units to the instant ms in zone z.
func dateAdd(ms int64, u timeUnit, amount int64, z *tzone) (int64, error) {
	if u == unitMillisecond {
		out := ms + amount
		if (amount > 0 && out < ms) || (amount < 0 && out > ms) {
			return 0, errDateAddOverflow
		}
		return out, nil
	}
	if max := maxDateAddAmount(u); amount <= -max || amount >= max {
		return 0, mongoerr.Newf(mongoerr.Code(5976500), "invalid dateAdd 'amount' parameter value: %d %s", amount, unitNames[u])
	}
	if u <= unitHour {
		// Fixed-length units add absolute time, whatever the zone.
		d := amount * unitMillis[u]
		if d/unitMillis[u] != amount {
			return 0, errDateAddOverflow
		}
		return checkedAdd(ms, d)
	}
	t := z.localTime(ms)
	days := amount
	switch u {
	case unitWeek:
		days = amount * 7
	case unitMonth, unitQuarter, unitYear:
		months := amount
		if u == unitQuarter {
			months *= 3
		} else if u == unitYear {
			months *= 12
		}
		_, off := t.Zone()
		if t.Day() <= 28 && off == 0 {
			return instantMillis(z.addDateLocal(t, 0, int(months), 0), ms)
		}
		// Clamp to the last day of the target month and count the days.
		total := int64(t.Year())*12 + int64(t.Month()) - 1 + months
		ty, tm := total/12, total%12
		if tm < 0 {
			tm += 12
			ty--
		}
		if ty > 1<<40 || ty < -(1<<40) {
			return 0, errDateAddOverflow
		}
		day := min(t.Day(), daysIn(int(ty), int(tm+1)))
		days = civilDay(time.Date(int(ty), time.Month(tm+1), day, 0, 0, 0, 0, time.UTC)) - civilDay(t)
	}
	return instantMillis(z.addDateLocal(t, 0, 0, int(days)), ms)
}

// instantMillis returns the Unix second s as milliseconds since the epoch with the
// millisecond of the original instant ms, or 5166406 when it does not fit
// a BSON date.
func instantMillis(s int64, ms int64) (int64, error) {
	if s > math.MaxInt64/1000-1 || s < math.MinInt64/1000+1 {
		return 0, errDateAddOverflow
	}
	return s*1000 + int64(msOf(ms)), nil
}

// checkedAdd adds two millisecond counts, failing with 5166406 on overflow.
func checkedAdd(a, b int64) (int64, error) {
	s := a + b
	if (b > 0 && s < a) || (b < 0 && s > a) {
		return 0, errDateAddOverflow
	}
	return s, nil
}

// dateDiffExpr is $dateDiff.
type dateDiffExpr struct {
	start, end, unit, tz, startOfWeek Expr
}

// parseDateDiff parses {startDate, endDate, unit, timezone, startOfWeek}
// (5166301-5166305).
func parseDateDiff(p *Parser, name string, arg bson.RawValue) (Expr, error) {
	if arg.Type != bson.TypeEmbeddedDocument {
		return nil, mongoerr.New(mongoerr.Code(5166301), "$dateDiff only supports an object as its argument")
	}
	args, err := namedArgs(p, arg.Document(), []string{"startDate", "endDate", "unit", "timezone", "startOfWeek"}, func(k string) error {
		return mongoerr.Newf(mongoerr.Code(5166302), "Unrecognized argument to $dateDiff: %s", k)
	})
	if err != nil {
		return nil, err
	}
	switch {
	case args["startDate"] == nil:
		return nil, mongoerr.New(mongoerr.Code(5166303), "Missing 'startDate' parameter to $dateDiff")
	case args["endDate"] == nil:
		return nil, mongoerr.New(mongoerr.Code(5166304), "Missing 'endDate' parameter to $dateDiff")
	case args["unit"] == nil:
		return nil, mongoerr.New(mongoerr.Code(5166305), "Missing 'unit' parameter to $dateDiff")
	}
	return foldNamed(&dateDiffExpr{start: args["startDate"], end: args["endDate"], unit: args["unit"], tz: args["timezone"], startOfWeek: args["startOfWeek"]}, args)
}

// Eval returns the number of unit boundaries crossed, as a long.
func (e *dateDiffExpr) Eval(c *Ctx) (bson.RawValue, error) {
	const op = "$dateDiff"
	start, err := e.start.Eval(c)
	if err != nil || IsNullish(start) {
		return Null(), err
	}
	end, err := e.end.Eval(c)
	if err != nil || IsNullish(end) {
		return Null(), err
	}
	unit, ok, err := evalUnit(c, e.unit, op)
	if err != nil || !ok {
		return Null(), err
	}
	sow := time.Sunday
	if unit == unitWeek {
		if sow, ok, err = evalStartOfWeek(c, e.startOfWeek, op); err != nil || !ok {
			return Null(), err
		}
	}
	z, err := evalTimezone(c, e.tz)
	if err != nil {
		if me := mongoerr.As(err); me.Code == 40485 {
			return bson.RawValue{}, mongoerr.New(me.Code, "$dateDiff parameter 'timezone' value parsing failed :: caused by :: "+me.Msg)
		}
		return bson.RawValue{}, err
	}
	if z == nil {
		return Null(), nil
	}
	for _, x := range []struct {
		v    bson.RawValue
		name string
	}{{start, "startDate"}, {end, "endDate"}} {
		if !coercibleToDate(x.v) {
			return bson.RawValue{}, mongoerr.Newf(mongoerr.Code(5166307), "%s requires '%s' to be a date, but got %s", op, x.name, bsonkit.TypeName(x.v.Type))
		}
	}
	s, _ := coerceToDate(start)
	en, _ := coerceToDate(end)
	if unit == unitMillisecond {
		d := en - s
		if (s < 0 && d < en) || (s > 0 && d > en) {
			return bson.RawValue{}, mongoerr.New(mongoerr.Code(5166308), "dateDiff overflowed")
		}
		return Int64(d), nil
	}
	return Int64(dateDiff(z.localTime(s), z.localTime(en), unit, sow)), nil
}

// civilDay is the number of days from 1970-01-01 to t's calendar date.
func civilDay(t time.Time) int64 {
	d := time.Date(t.Year(), t.Month(), t.Day(), 0, 0, 0, 0, time.UTC)
	return dateFloorDiv(d.Unix(), 86400)
}

// dateFloorDiv divides rounding toward negative infinity.
func dateFloorDiv(a, b int64) int64 {
	q := a / b
	if (a%b != 0) && ((a < 0) != (b < 0)) {
		q--
	}
	return q
}

// dateDiff counts the unit boundaries between two local times, as mongod
// does from their calendar fields (and their UTC offsets for units below
// a day).
func dateDiff(s, e time.Time, u timeUnit, sow time.Weekday) int64 {
	years := int64(e.Year() - s.Year())
	days := civilDay(e) - civilDay(s)
	_, so := s.Zone()
	_, eo := e.Zone()
	corr := int64(so - eo)
	hours := int64(e.Hour()-s.Hour()) + days*24
	minutes := int64(e.Minute()-s.Minute()) + hours*60
	switch u {
	case unitYear:
		return years
	case unitQuarter:
		return int64((int(e.Month())-1)/3-(int(s.Month())-1)/3) + years*4
	case unitMonth:
		return int64(e.Month()-s.Month()) + years*12
	case unitWeek:
		idx := func(t time.Time) int64 { return int64((int(t.Weekday()) - int(sow) + 7) % 7) }
		return (days + idx(s) - idx(e)) / 7
	case unitDay:
		return days
	case unitHour:
		return hours + corr/3600
	case unitMinute:
		return minutes + corr/60
	}
	return int64(e.Second()-s.Second()) + minutes*60 + corr
}

// dateTruncExpr is $dateTrunc.
type dateTruncExpr struct {
	date, unit, binSize, tz, startOfWeek Expr
}

// parseDateTrunc parses {date, unit, binSize, timezone, startOfWeek}
// (5439007-5439010).
func parseDateTrunc(p *Parser, name string, arg bson.RawValue) (Expr, error) {
	if arg.Type != bson.TypeEmbeddedDocument {
		return nil, mongoerr.New(mongoerr.Code(5439007), "$dateTrunc only supports an object as its argument")
	}
	args, err := namedArgs(p, arg.Document(), []string{"date", "unit", "binSize", "timezone", "startOfWeek"}, func(k string) error {
		return mongoerr.Newf(mongoerr.Code(5439008), "Unrecognized argument to $dateTrunc: %s. Expected arguments: date, unit, and optionally, binSize, timezone, startOfWeek", k)
	})
	if err != nil {
		return nil, err
	}
	switch {
	case args["date"] == nil:
		return nil, mongoerr.New(mongoerr.Code(5439009), "Missing 'date' parameter to $dateTrunc")
	case args["unit"] == nil:
		return nil, mongoerr.New(mongoerr.Code(5439010), "Missing 'unit' parameter to $dateTrunc")
	}
	return foldNamed(&dateTruncExpr{date: args["date"], unit: args["unit"], binSize: args["binSize"], tz: args["timezone"], startOfWeek: args["startOfWeek"]}, args)
}

// Eval truncates the date to the start of its bin.
func (e *dateTruncExpr) Eval(c *Ctx) (bson.RawValue, error) {
	const op = "$dateTrunc"
	date, err := e.date.Eval(c)
	if err != nil || IsNullish(date) {
		return Null(), err
	}
	bin := int64(1)
	if e.binSize != nil {
		v, err := e.binSize.Eval(c)
		if err != nil || IsNullish(v) {
			return Null(), err
		}
		n, ok := bsonkit.ExactInt64(v)
		if !ok {
			return bson.RawValue{}, mongoerr.Newf(mongoerr.Code(5439017), "$dateTrunc requires 'binSize' to be a 64-bit integer, but got value '%s' of type %s", valueString(v), bsonkit.TypeName(v.Type))
		}
		if n <= 0 {
			return bson.RawValue{}, mongoerr.Newf(mongoerr.Code(5439018), "$dateTrunc requires 'binSize' to be greater than 0, but got value %d", n)
		}
		bin = n
	}
	unit, ok, err := evalUnit(c, e.unit, op)
	if err != nil || !ok {
		return Null(), err
	}
	sow := time.Sunday
	if unit == unitWeek {
		if sow, ok, err = evalStartOfWeek(c, e.startOfWeek, op); err != nil || !ok {
			return Null(), err
		}
	}
	z, err := evalTimezone(c, e.tz)
	if err != nil {
		if me := mongoerr.As(err); me.Code == 40485 {
			return bson.RawValue{}, mongoerr.New(me.Code, "$dateTrunc parameter 'timezone' value parsing failed :: caused by :: "+me.Msg)
		}
		return bson.RawValue{}, err
	}
	if z == nil {
		return Null(), nil
	}
	if !coercibleToDate(date) {
		return bson.RawValue{}, mongoerr.Newf(mongoerr.Code(5166307), "%s requires 'date' to be a date, but got %s", op, bsonkit.TypeName(date.Type))
	}
	ms, _ := coerceToDate(date)
	out, err := truncateDate(ms, unit, bin, z, sow)
	if err != nil {
		return bson.RawValue{}, err
	}
	return Date(out), nil
}

// truncateDate finds the start of the bin of binSize units that holds
// ms. Bins are counted from 2000-01-01T00:00 in zone z (for weeks, from
// the first startOfWeek day on or after it).
func truncateDate(ms int64, u timeUnit, bin int64, z *tzone, sow time.Weekday) (int64, error) {
	const ref2000 = 946684800000
	refMs := ref2000 - int64(z.utcOffsetAt(ref2000))*1000
	refDate := time.Date(2000, time.January, 1, 0, 0, 0, 0, time.UTC)
	if u == unitWeek {
		adjust := (int(sow) - int(time.Saturday) + 7) % 7
		refMs += int64(adjust) * 86_400_000
		refDate = refDate.AddDate(0, 0, adjust)
	}
	overflow := mongoerr.New(mongoerr.Code(5439000), "dateTrunc overflowed")
	if u <= unitHour {
		binMs := bin * unitMillis[u]
		if binMs/unitMillis[u] != bin {
			return 0, mongoerr.New(mongoerr.Code(5439002), "dateTrunc overflowed")
		}
		shifted := ms - refMs
		if (refMs < 0 && shifted < ms) || (refMs > 0 && shifted > ms) {
			return 0, overflow
		}
		r := shifted % binMs
		if r < 0 {
			r += binMs
		}
		if ms-r > ms {
			return 0, mongoerr.New(mongoerr.Code(5439001), "dateTrunc overflowed")
		}
		return ms - r, nil
	}
	if bin > 100_000_000_000 {
		return 0, mongoerr.New(mongoerr.Code(5439006), "dateTrunc unsupported binSize value")
	}
	local := z.localTime(ms)
	dist := dateDiff(refDate, local, u, sow)
	r := dist % bin
	if r < 0 {
		r += bin
	}
	return dateAdd(refMs, u, dist-r, z)
}
