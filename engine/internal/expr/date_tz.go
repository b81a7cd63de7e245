package expr

import (
	"strconv"
	"strings"
	"sync"
	"time"
	_ "time/tzdata" // Olson zones on machines without a zoneinfo directory

	"go.mongodb.org/mongo-driver/v2/bson"

	"github.com/formworkdb/formwork/engine/internal/bsonkit"
	"github.com/formworkdb/formwork/engine/internal/mongoerr"
)

// tzone is a time zone as the date operators use it: an Olson zone from
// the time zone database, a fixed UTC offset ("+05:30"), or UTC itself
// (no timezone argument, or an offset of zero). MongoDB tells the three
// apart: $dateToString's default format ends in Z only for UTC, and
// $dateAdd corrects for DST only in Olson zones.
type tzone struct {
	loc    *time.Location
	olson  bool
	offset int // seconds east of UTC, for fixed-offset zones
}

// utcZone is the zone of an operator without a timezone argument.
var utcZone = &tzone{loc: time.UTC}

// isUTC reports whether z is mongod's UTC zone (not the Olson "UTC").
func (z *tzone) isUTC() bool { return !z.olson && z.offset == 0 }

// tzCache memoizes loaded Olson zones; LoadLocation parses the embedded
// database on every call.
var tzCache sync.Map // string -> *tzone

// lookupTimezone resolves a timezone argument: an Olson identifier or a
// UTC offset in the forms ±HH, ±HHMM and ±HH:MM. Anything else fails with
// 40485.
func lookupTimezone(id string) (*tzone, error) {
	if z, ok := tzCache.Load(id); ok {
		return z.(*tzone), nil
	}
	if off, ok := parseUTCOffset(id); ok {
		if off == 0 {
			return utcZone, nil
		}
		return &tzone{loc: time.FixedZone(id, off), offset: off}, nil
	}
	if id != "" && id != "Local" && !strings.HasPrefix(id, "/") && !strings.Contains(id, "..") {
		if loc, err := time.LoadLocation(id); err == nil {
			z := &tzone{loc: loc, olson: true}
			tzCache.Store(id, z)
			return z, nil
		}
	}
	return nil, mongoerr.Newf(mongoerr.Code(40485), "unrecognized time zone identifier: \"%s\"", id)
}

// parseUTCOffset parses ±HH, ±HHMM or ±HH:MM into seconds.
func parseUTCOffset(s string) (int, bool) {
	if len(s) < 3 || (s[0] != '+' && s[0] != '-') {
		return 0, false
	}
	digits := func(t string) (int, bool) {
		for i := 0; i < len(t); i++ {
			if t[i] < '0' || t[i] > '9' {
				return 0, false
			}
		}
		n, err := strconv.Atoi(t)
		return n, err == nil
	}
	var h, m int
	var ok1, ok2 bool
	switch len(s) {
	case 3:
		h, ok1 = digits(s[1:3])
		ok2 = true
	case 5:
		h, ok1 = digits(s[1:3])
		m, ok2 = digits(s[3:5])
	case 6:
		if s[3] != ':' {
			return 0, false
		}
		h, ok1 = digits(s[1:3])
		m, ok2 = digits(s[4:6])
	default:
		return 0, false
	}
	if !ok1 || !ok2 {
		return 0, false
	}
	off := h*3600 + m*60
	if s[0] == '-' {
		off = -off
	}
	return off, true
}

// evalTimezone evaluates an optional timezone operand: nil means UTC; a
// nullish value returns (nil, nil), which makes the operator's result
// null; a non-string fails with 40517.
func evalTimezone(c *Ctx, e Expr) (*tzone, error) {
	if e == nil {
		return utcZone, nil
	}
	v, err := e.Eval(c)
	if err != nil {
		return nil, err
	}
	if IsNullish(v) {
		return nil, nil
	}
	if v.Type != bson.TypeString {
		return nil, mongoerr.Newf(mongoerr.Code(40517), "timezone must evaluate to a string, found %s", bsonkit.TypeName(v.Type))
	}
	return lookupTimezone(v.StringValue())
}

// coercibleToDate reports whether v is a date, a timestamp or an ObjectId,
// the types mongod turns into dates.
func coercibleToDate(v bson.RawValue) bool {
	switch v.Type {
	case bson.TypeDateTime, bson.TypeTimestamp, bson.TypeObjectID:
		return true
	}
	return false
}

// coerceToDate returns v as milliseconds since the epoch: a date as is,
// a timestamp's seconds, an ObjectId's creation second. Other types fail
// with 16006.
func coerceToDate(v bson.RawValue) (int64, error) {
	switch v.Type {
	case bson.TypeDateTime:
		return v.DateTime(), nil
	case bson.TypeTimestamp:
		t, _ := v.Timestamp()
		return int64(t) * 1000, nil
	case bson.TypeObjectID:
		id := v.ObjectID()
		secs := uint32(id[0])<<24 | uint32(id[1])<<16 | uint32(id[2])<<8 | uint32(id[3])
		return int64(secs) * 1000, nil
	}
	return 0, mongoerr.Newf(mongoerr.Code(16006), "can't convert from BSON type %s to Date", bsonkit.TypeName(v.Type))
}

// localTime returns the instant ms in zone z.
func (z *tzone) localTime(ms int64) time.Time {
	return time.UnixMilli(ms).In(z.loc)
}

// msOf returns the milliseconds-of-second of ms, in [0, 999] also before
// the epoch.
func msOf(ms int64) int {
	r := int(ms % 1000)
	if r < 0 {
		r += 1000
	}
	return r
}

// utcOffsetAt returns z's offset from UTC at instant ms, in seconds.
func (z *tzone) utcOffsetAt(ms int64) int {
	_, off := z.localTime(ms).Zone()
	return off
}

// isoDayOfWeek returns 1 (Monday) to 7 (Sunday).
func isoDayOfWeek(t time.Time) int {
	d := int(t.Weekday())
	if d == 0 {
		return 7
	}
	return d
}

// weekOfYear is %U and $week: weeks start on Sunday, days before the
// year's first Sunday are in week 0.
func weekOfYear(t time.Time) int {
	yearDay := t.YearDay()
	weekDay := int(t.Weekday()) + 1
	return (yearDay - weekDay + 7) / 7
}

// wallToInstant returns the instant (Unix seconds) at which the wall
// clock of zone z reads the calendar time of wall (whose own location is
// ignored). A time in a DST gap is read with the offset from before the
// change (02:30 on a spring-forward night becomes 03:30 daylight time);
// a time that occurs twice resolves to its first occurrence, as timelib
// does.
func (z *tzone) wallToInstant(wall time.Time) int64 {
	guess := time.Date(wall.Year(), wall.Month(), wall.Day(), wall.Hour(), wall.Minute(), wall.Second(), 0, time.UTC).Unix()
	if !z.olson {
		return guess - int64(z.offset)
	}
	offAt := func(s int64) int64 {
		_, off := time.Unix(s, 0).In(z.loc).Zone()
		return int64(off)
	}
	before := offAt(guess - 86400)
	after := offAt(guess + 86400)
	t1, t2 := guess-before, guess-after
	ok1, ok2 := offAt(t1) == before, offAt(t2) == after
	switch {
	case ok1 && ok2:
		return min(t1, t2)
	case ok1:
		return t1
	case ok2:
		return t2
	}
	return t1
}

// addDateLocal adds calendar years, months and days to the wall clock of
// t (a time in z) and resolves the result in z.
func (z *tzone) addDateLocal(t time.Time, years, months, days int) int64 {
	wall := time.Date(t.Year(), t.Month(), t.Day(), t.Hour(), t.Minute(), t.Second(), 0, time.UTC).AddDate(years, months, days)
	return z.wallToInstant(wall)
}
