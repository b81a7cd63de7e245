package attribute

import (
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"

	"go.mongodb.org/mongo-driver/v2/bson"
)

// kindOf returns the kind of a Go value, or 0 when it is not a scalar
// attributes can hold.
func kindOf(v any) Kind {
	switch x := v.(type) {
	case string:
		return String
	case int, int8, int16, int32, int64, uint8, uint16, uint32, float32, float64, bson.Decimal128:
		return Number
	case uint:
		if uint64(x) > math.MaxInt64 {
			return 0
		}
		return Number
	case uint64:
		if x > math.MaxInt64 {
			return 0
		}
		return Number
	case bool:
		return Bool
	case time.Time, bson.DateTime:
		return Date
	}
	return 0
}

// numeric parses s as a decimal number, ignoring surrounding spaces. It
// accepts what a person would write as a number ("500", "-2.5", "1e3")
// and rejects what strconv would also take but nobody means as one
// ("NaN", "Inf", hexadecimal).
func numeric(s string) (any, bool) {
	t := strings.TrimSpace(s)
	if t == "" {
		return nil, false
	}
	for i, r := range t {
		switch {
		case r >= '0' && r <= '9', r == '.', r == 'e', r == 'E':
		case (r == '+' || r == '-') && (i == 0 || t[i-1] == 'e' || t[i-1] == 'E'):
		default:
			return nil, false
		}
	}
	if n, err := strconv.ParseInt(t, 10, 64); err == nil {
		return n, true
	}
	f, err := strconv.ParseFloat(t, 64)
	if err != nil {
		return nil, false
	}
	return f, true
}

// value checks v for attribute name and returns what to store or query:
// v itself, or the number a numeric string normalizes to.
func (s *Store[D]) value(name string, v any) (any, error) {
	if err := checkName(name, s.wildcard); err != nil {
		return nil, err
	}
	want, declared := s.cfg.Kinds[name]
	if !declared && s.cfg.Strict {
		return nil, fmt.Errorf("%w: %q", ErrUndeclared, name)
	}
	got := kindOf(v)
	if got == 0 {
		return nil, fmt.Errorf("%w: attribute %q: %T is not a string, number, bool or date", ErrValue, name, v)
	}
	if str, ok := v.(string); ok && (want == Number || !declared) {
		if n, isNum := numeric(str); isNum {
			if s.cfg.NumericStrings != Normalize {
				return nil, fmt.Errorf("%w: attribute %q: %q is a number stored as a string (declare the attribute a String, or pass a number)", ErrValue, name, str)
			}
			return n, nil
		}
	}
	if declared && got != want {
		return nil, fmt.Errorf("%w: attribute %q is a %v, got %T %v", ErrValue, name, want, v, v)
	}
	return v, nil
}
