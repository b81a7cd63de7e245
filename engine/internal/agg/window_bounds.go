package agg

import (
	"fmt"
	"math"
	"strings"
	"time"

	"go.mongodb.org/mongo-driver/v2/bson"

	"github.com/formworkdb/formwork/engine/internal/bsonkit"
	"github.com/formworkdb/formwork/engine/internal/expr"
	"github.com/formworkdb/formwork/engine/internal/mongoerr"
)

// boundKind says what one end of a window is.
type boundKind uint8

const (
	boundUnbounded boundKind = iota // "unbounded"
	boundCurrent                    // "current": the current document's position
	boundValue                      // an offset: documents, or a value added to the sortBy value
)

// winBound is one end of a window.
type winBound struct {
	kind boundKind
	n    int64         // documents: the offset from the current document
	v    bson.RawValue // range: the number added to the current sortBy value
}

// winBounds is a window: documents-based, or range-based on the single
// sortBy field, with a time unit when the sortBy values are dates.
type winBounds struct {
	rng    bool
	unit   string // "" for numbers; a time unit for date ranges
	lo, hi winBound
}

// wholePartition is the default window, ["unbounded", "unbounded"].
var wholePartition = winBounds{}

// unboundedToCurrent is the window of the rank and running functions.
var unboundedToCurrent = winBounds{hi: winBound{kind: boundCurrent}}

// leftUnbounded reports whether the window starts at the partition's start,
// so that its function only ever adds documents (MongoDB's non-removable
// executors).
func (w winBounds) leftUnbounded() bool { return w.lo.kind == boundUnbounded }

// whole reports whether the window is the whole partition.
func (w winBounds) whole() bool {
	return !w.rng && w.lo.kind == boundUnbounded && w.hi.kind == boundUnbounded
}

// failedToParse returns a FailedToParse (9) error.
func failedToParse(format string, args ...any) error {
	return mongoerr.Newf(mongoerr.FailedToParse, format, args...)
}

// parseWindow parses a window function's "window" field as
// WindowBounds::parse does, with its FailedToParse messages and the codes
// 5339900 (lower above upper), 5339901 (documents window without sortBy)
// and 5339902 (range window without a one-field sortBy).
func parseWindow(v bson.RawValue, sortBy *winSort) (winBounds, error) {
	if v.Type != bson.TypeEmbeddedDocument {
		return winBounds{}, failedToParse("'window' field must be an object")
	}
	doc := v.Document()
	documents, hasDocs := bsonkit.Field(doc, "documents")
	rng, hasRange := bsonkit.Field(doc, "range")
	unit, hasUnit := bsonkit.Field(doc, "unit")
	n := bsonkit.Len(doc)
	if hasDocs && hasRange {
		return winBounds{}, failedToParse("Window bounds can specify either 'documents' or 'unit', not both.")
	}
	if !hasRange && hasUnit {
		return winBounds{}, failedToParse("Window bounds can only specify 'unit' with range-based bounds.")
	}
	if !hasRange && !hasDocs {
		if n != 0 {
			return winBounds{}, failedToParse("'window' field can only contain 'documents' as the only argument or 'range' with an optional 'unit' field")
		}
		return wholePartition, nil
	}
	if hasDocs {
		if n != 1 {
			return winBounds{}, failedToParse("'window' field that specifies documents cannot have other fields")
		}
		lo, hi, err := unpackBounds("documents", documents)
		if err != nil {
			return winBounds{}, err
		}
		w := winBounds{}
		if w.lo, err = parseDocBound(lo); err != nil {
			return winBounds{}, err
		}
		if w.hi, err = parseDocBound(hi); err != nil {
			return winBounds{}, err
		}
		if err := checkForward(w); err != nil {
			return winBounds{}, err
		}
		if sortBy == nil && !(w.lo.kind == boundUnbounded && w.hi.kind == boundUnbounded) {
			return winBounds{}, mongoerr.New(mongoerr.Code(5339901), "Document-based bounds require a sortBy")
		}
		return w, nil
	}
	lo, hi, err := unpackBounds("range", rng)
	if err != nil {
		return winBounds{}, err
	}
	w := winBounds{rng: true}
	if hasUnit {
		if n != 2 {
			return winBounds{}, failedToParse("'window' field that specifies unit cannot have other fields besides 'range'")
		}
		if unit.Type != bson.TypeString {
			return winBounds{}, failedToParse("'unit' must be a string")
		}
		if w.lo, err = parseRangeBound(lo, true); err != nil {
			return winBounds{}, err
		}
		if w.hi, err = parseRangeBound(hi, true); err != nil {
			return winBounds{}, err
		}
		if err := checkForward(w); err != nil {
			return winBounds{}, err
		}
		if _, err := timeUnitMillis(unit.StringValue()); err != nil {
			return winBounds{}, err
		}
		w.unit = unit.StringValue()
	} else {
		if n != 1 {
			return winBounds{}, failedToParse("'window' field that specifies range cannot have other fields besides 'unit'")
		}
		if w.lo, err = parseRangeBound(lo, false); err != nil {
			return winBounds{}, err
		}
		if w.hi, err = parseRangeBound(hi, false); err != nil {
			return winBounds{}, err
		}
		if err := checkForward(w); err != nil {
			return winBounds{}, err
		}
	}
	if sortBy == nil || len(sortBy.paths) != 1 {
		return winBounds{}, mongoerr.New(mongoerr.Code(5339902), "Range-based bounds require sortBy a single field")
	}
	return w, nil
}

// unpackBounds splits a two-element bounds array.
func unpackBounds(name string, v bson.RawValue) (bson.RawValue, bson.RawValue, error) {
	if v.Type == bson.TypeArray {
		vals := bsonkit.Values(v.Value)
		if len(vals) == 2 {
			return vals[0], vals[1], nil
		}
	}
	return bson.RawValue{}, bson.RawValue{}, failedToParse("Window bounds must be a 2-element array: %s: %s", name, showElem(v))
}

// parseBoundWord handles "unbounded" and "current"; ok is false for a
// value that is not a string.
func parseBoundWord(v bson.RawValue) (winBound, bool, error) {
	if v.Type != bson.TypeString {
		return winBound{}, false, nil
	}
	switch v.StringValue() {
	case "unbounded":
		return winBound{kind: boundUnbounded}, true, nil
	case "current":
		return winBound{kind: boundCurrent}, true, nil
	}
	return winBound{}, true, failedToParse("Window bounds must be 'unbounded', 'current', or a number.")
}

// boundConstant evaluates a bound that is not a keyword: it must be a
// constant expression.
func boundConstant(v bson.RawValue) (bson.RawValue, error) {
	e, err := expr.Parse(v, expr.NewScope())
	if err != nil {
		return bson.RawValue{}, err
	}
	c, ok := expr.IsConst(e)
	if !ok {
		return bson.RawValue{}, failedToParse("Window bounds expression must be a constant.")
	}
	return c, nil
}

// parseDocBound parses one bound of a documents window: a keyword or a
// constant integer in int32 range.
func parseDocBound(v bson.RawValue) (winBound, error) {
	if b, ok, err := parseBoundWord(v); ok || err != nil {
		return b, err
	}
	c, err := boundConstant(v)
	if err != nil {
		return winBound{}, err
	}
	i, ok := bsonkit.ExactInt64(c)
	if !ok || i < math.MinInt32 || i > math.MaxInt32 {
		return winBound{}, failedToParse("Numeric document-based bounds must be an integer")
	}
	return winBound{kind: boundValue, n: i}, nil
}

// parseRangeBound parses one bound of a range window: a keyword or a
// constant number, an integer when a unit is given.
func parseRangeBound(v bson.RawValue, withUnit bool) (winBound, error) {
	if b, ok, err := parseBoundWord(v); ok || err != nil {
		return b, err
	}
	c, err := boundConstant(v)
	if err != nil {
		return winBound{}, err
	}
	if withUnit {
		i, ok := bsonkit.ExactInt64(c)
		if !ok || i < math.MinInt32 || i > math.MaxInt32 {
			return winBound{}, failedToParse("With 'unit', range-based bounds must be an integer")
		}
		return winBound{kind: boundValue, v: c, n: i}, nil
	}
	if !bsonkit.IsNumber(c.Type) {
		return winBound{}, failedToParse("Range-based bounds expression must be a number")
	}
	return winBound{kind: boundValue, v: c}, nil
}

// checkForward rejects a window whose lower bound exceeds its upper bound,
// "current" counting as 0 (5339900).
func checkForward(w winBounds) error {
	norm := func(b winBound) (winBound, bool) {
		switch b.kind {
		case boundCurrent:
			return winBound{kind: boundValue, v: expr.Int32(0)}, true
		case boundValue:
			if !w.rng || w.unit != "" {
				return winBound{kind: boundValue, v: expr.Int64(b.n), n: b.n}, true
			}
			return b, true
		}
		return b, false
	}
	lo, okl := norm(w.lo)
	hi, okh := norm(w.hi)
	if !okl || !okh {
		return nil
	}
	if bsonkit.CompareNumbers(lo.v, hi.v) > 0 {
		return mongoerr.Newf(mongoerr.Code(5339900), "Lower bound must not exceed upper bound: [%s, %s]", numString(lo.v), numString(hi.v))
	}
	return nil
}

// numString prints a number as mongod's Value::toString does in messages.
func numString(v bson.RawValue) string {
	switch v.Type {
	case bson.TypeInt32:
		return fmt.Sprint(v.Int32())
	case bson.TypeInt64:
		return fmt.Sprint(v.Int64())
	case bson.TypeDouble:
		return fmt.Sprint(v.Double())
	}
	return v.String()
}

// timeUnitMillis returns the typical length of a time unit in
// milliseconds (months 30 days, quarters 91, years 365 — used only where
// MongoDB forbids those units) or FailedToParse for an unknown unit.
func timeUnitMillis(unit string) (int64, error) {
	switch unit {
	case "millisecond":
		return 1, nil
	case "second":
		return 1000, nil
	case "minute":
		return 60 * 1000, nil
	case "hour":
		return 3600 * 1000, nil
	case "day":
		return 24 * 3600 * 1000, nil
	case "week":
		return 7 * 24 * 3600 * 1000, nil
	case "month":
		return 30 * 24 * 3600 * 1000, nil
	case "quarter":
		return 91 * 24 * 3600 * 1000, nil
	case "year":
		return 365 * 24 * 3600 * 1000, nil
	}
	return 0, failedToParse("unknown time unit value: %s", unit)
}

// dateAdd adds amount units to the date ms (milliseconds since the epoch)
// as $dateAdd does in UTC: fixed-length units add milliseconds; months,
// quarters and years move the calendar month and clamp the day to the
// month's last day. ok is false when the result overflows.
func dateAdd(ms int64, unit string, amount int64) (int64, bool) {
	switch unit {
	case "month", "quarter", "year":
		months := amount
		switch unit {
		case "quarter":
			months *= 3
		case "year":
			months *= 12
		}
		if months > 12*300000 || months < -12*300000 {
			return 0, false
		}
		t := time.UnixMilli(ms).UTC()
		y, m, d := t.Date()
		total := int64(y)*12 + int64(m-1) + months
		ny, nm := int(total/12), time.Month(total%12+1)
		if total%12 < 0 {
			ny, nm = int(total/12)-1, time.Month(total%12+13)
		}
		last := time.Date(ny, nm+1, 0, 0, 0, 0, 0, time.UTC).Day()
		if d > last {
			d = last
		}
		r := time.Date(ny, nm, d, t.Hour(), t.Minute(), t.Second(), t.Nanosecond(), time.UTC)
		return r.UnixMilli(), true
	}
	per, err := timeUnitMillis(unit)
	if err != nil {
		return 0, false
	}
	if amount != 0 && (per > math.MaxInt64/abs64(amount)) {
		return 0, false
	}
	d := per * amount
	if (d > 0 && ms > math.MaxInt64-d) || (d < 0 && ms < math.MinInt64-d) {
		return 0, false
	}
	return ms + d, true
}

// abs64 returns |i|.
func abs64(i int64) int64 {
	if i < 0 {
		return -i
	}
	return i
}

// showElem prints a value as mongod's BSONElement::toString does in
// messages, arrays as "[ 1, 2 ]".
func showElem(v bson.RawValue) string {
	if v.Type != bson.TypeArray {
		return showValue(v)
	}
	vals := bsonkit.Values(v.Value)
	if len(vals) == 0 {
		return "[]"
	}
	parts := make([]string, len(vals))
	for i, x := range vals {
		parts[i] = showElem(x)
	}
	return "[ " + strings.Join(parts, ", ") + " ]"
}
