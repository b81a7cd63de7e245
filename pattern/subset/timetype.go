package subset

import (
	"fmt"
	"math"

	"go.mongodb.org/mongo-driver/v2/bson"
)

// The time rule: every child's Config.Time holds a value of
// Config.TimeType (dates unless set), the four numeric types counting as
// one. MongoDB orders values of different types by type before value
// (numbers < strings < … < ObjectIDs < booleans < dates < timestamps), so
// a child whose time has another type sorts wholly before or after every
// other child: a string date under dates is "older" than any date and
// never enters the window, while the index order, the window and Check
// all agree that this is correct. Refusing it at the write is the only
// place the mistake can be seen.

// numeric lists the BSON number types, which compare by value.
var numeric = []bson.Type{bson.TypeInt32, bson.TypeInt64, bson.TypeDouble, bson.TypeDecimal128}

// timeType returns the configured time type, dates by default.
func (c Config) timeType() bson.Type {
	if c.TimeType == 0 {
		return bson.TypeDateTime
	}
	return c.TimeType
}

// orderable reports whether t can be a time type.
func orderable(t bson.Type) bool {
	switch t {
	case bson.TypeDateTime, bson.TypeString, bson.TypeTimestamp, bson.TypeObjectID:
		return true
	}
	return isNumeric(t)
}

// isNumeric reports whether t is one of the BSON number types.
func isNumeric(t bson.Type) bool {
	for _, n := range numeric {
		if t == n {
			return true
		}
	}
	return false
}

// timeTypes returns the BSON types a time value may have: the configured
// one, or all numbers.
func (c Config) timeTypes() []bson.Type {
	if t := c.timeType(); !isNumeric(t) {
		return []bson.Type{t}
	}
	return numeric
}

// timeOK reports whether a time value has an allowed type (a NaN is no
// time).
func (c Config) timeOK(v bson.RawValue) bool {
	for _, t := range c.timeTypes() {
		if v.Type == t {
			if d, ok := v.DoubleOK(); ok && math.IsNaN(d) {
				return false
			}
			if d, ok := v.Decimal128OK(); ok && d.IsNaN() {
				return false
			}
			return true
		}
	}
	return false
}

// timeFloor returns the least value of the time type. Comparisons in a
// filter only match values of the operand's type (numbers all count as
// one), so {<Time>: {$gte: floor}} selects exactly the children that
// keep the time rule, as an index range: the window and the pages are
// built from those alone.
func (c Config) timeFloor() any {
	switch c.timeType() {
	case bson.TypeDateTime:
		return bson.DateTime(math.MinInt64)
	case bson.TypeString:
		return ""
	case bson.TypeTimestamp:
		return bson.Timestamp{}
	case bson.TypeObjectID:
		return bson.ObjectID{}
	}
	return math.Inf(-1)
}

// checkChild checks that child (a stored or about to be stored child
// document) names a parent and has a time of the configured type. The
// error wraps ErrTimeType for a bad time.
func (c Config) checkChild(child bson.Raw) error {
	if _, err := child.LookupErr(c.Parent); err != nil {
		return fmt.Errorf("child %v has no %q (its parent's _id)", child.Lookup("_id"), c.Parent)
	}
	v, err := child.LookupErr(c.Time)
	if err != nil {
		return fmt.Errorf("child %v has no %q: %w", child.Lookup("_id"), c.Time, ErrTimeType)
	}
	if !c.timeOK(v) {
		return fmt.Errorf("child %v: %q is %v %v, want %v: %w",
			child.Lookup("_id"), c.Time, v.Type, v, c.timeType(), ErrTimeType)
	}
	return nil
}

// badTimeFilter matches the children that break the time rule, for
// Check: {<Time>: {$not: {$type: [types…]}}} (a missing time matches).
func (c Config) badTimeFilter() bson.D {
	types := bson.A{}
	for _, t := range c.timeTypes() {
		types = append(types, int32(t))
	}
	return bson.D{{Key: c.Time, Value: bson.D{{Key: "$not", Value: bson.D{{Key: "$type", Value: types}}}}}}
}
