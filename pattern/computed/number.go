package computed

import (
	"cmp"
	"fmt"
	"math"
	"strconv"
	"strings"

	"go.mongodb.org/mongo-driver/v2/bson"
)

// number is a value the statistics are kept over: an exact integer (from
// an int32 or int64) or a double. Sums widen as the server's $inc does:
// integers stay a NumberLong, a double anywhere makes a double.
type number struct {
	i       int64
	f       float64
	isFloat bool
}

// numberOf reads an int32, int64 or double.
func numberOf(v bson.RawValue) (number, bool) {
	switch v.Type {
	case bson.TypeInt32:
		return number{i: int64(v.Int32())}, true
	case bson.TypeInt64:
		return number{i: v.Int64()}, true
	case bson.TypeDouble:
		return number{f: v.Double(), isFloat: true}, true
	}
	return number{}, false
}

// goNumber converts the Go numbers the verbs accept.
func goNumber(v any) (number, error) {
	switch n := v.(type) {
	case int:
		return number{i: int64(n)}, nil
	case int32:
		return number{i: int64(n)}, nil
	case int64:
		return number{i: n}, nil
	case float64:
		return number{f: n, isFloat: true}, nil
	}
	return number{}, fmt.Errorf("%T: %w", v, ErrNotNumber)
}

// float returns n as a double.
func (n number) float() float64 {
	if n.isFloat {
		return n.f
	}
	return float64(n.i)
}

// add returns n+o, a double when either is.
func (n number) add(o number) number {
	if n.isFloat || o.isFloat {
		return number{f: n.float() + o.float(), isFloat: true}
	}
	return number{i: n.i + o.i}
}

// neg returns -n.
func (n number) neg() number { return number{i: -n.i, f: -n.f, isFloat: n.isFloat} }

// zero reports whether n is 0.
func (n number) zero() bool { return (n.isFloat && n.f == 0) || (!n.isFloat && n.i == 0) }

// value is what the driver writes: int64 or float64.
func (n number) value() any {
	if n.isFloat {
		return n.f
	}
	return n.i
}

// compare orders numbers as BSON does: numerically, NaN below every other
// number, an integer and a double of the same value equal.
func (n number) compare(o number) int {
	if !n.isFloat && !o.isFloat {
		return cmp.Compare(n.i, o.i)
	}
	if n.isFloat && o.isFloat {
		return cmp.Compare(n.f, o.f) // cmp orders NaN first, as BSON does
	}
	if !n.isFloat {
		return -o.compare(n)
	}
	// n is a double, o an integer.
	switch {
	case math.IsNaN(n.f):
		return -1
	case n.f < -(1 << 63):
		return -1
	case n.f >= 1<<63:
		return 1
	}
	t := math.Trunc(n.f)
	if c := cmp.Compare(int64(t), o.i); c != 0 {
		return c
	}
	return cmp.Compare(n.f, t) // the fraction decides
}

// close reports whether two sums agree: integers exactly, doubles within
// a relative 1e-9, the rounding that summing in another order can cause.
func (n number) close(o number) bool {
	if !n.isFloat && !o.isFloat {
		return n.i == o.i
	}
	a, b := n.float(), o.float()
	if a == b || (math.IsNaN(a) && math.IsNaN(b)) {
		return true
	}
	return math.Abs(a-b) <= 1e-9*math.Max(1, math.Max(math.Abs(a), math.Abs(b)))
}

// String formats n for reports.
func (n number) String() string {
	if n.isFloat {
		return strconv.FormatFloat(n.f, 'g', -1, 64)
	}
	return strconv.FormatInt(n.i, 10)
}

// opt is an optional number: a min or max that a parent with no counted
// children does not have.
type opt struct {
	n  number
	ok bool
}

// lower returns the smaller of o and n.
func (o opt) lower(n number) opt {
	if !o.ok || n.compare(o.n) < 0 {
		return opt{n, true}
	}
	return o
}

// higher returns the larger of o and n.
func (o opt) higher(n number) opt {
	if !o.ok || n.compare(o.n) > 0 {
		return opt{n, true}
	}
	return o
}

// equal reports whether two optional numbers are both absent or equal.
func (o opt) equal(p opt) bool {
	return o.ok == p.ok && (!o.ok || o.n.compare(p.n) == 0)
}

// String formats o for reports: "none" when absent.
func (o opt) String() string {
	if !o.ok {
		return "none"
	}
	return o.n.String()
}

// key maps a parent _id to a map key. Numbers with an integral value
// share a key whatever their BSON type, as they do in an equality match.
func key(v bson.RawValue) string {
	if n, ok := numberOf(v); ok {
		if !n.isFloat {
			return "n" + strconv.FormatInt(n.i, 10)
		}
		if n.f == math.Trunc(n.f) && math.Abs(n.f) < 1<<62 {
			return "n" + strconv.FormatInt(int64(n.f), 10)
		}
		return "d" + strconv.FormatFloat(n.f, 'g', -1, 64)
	}
	return string(rune(v.Type)) + string(v.Value)
}

// lookup reads a dotted path of a document; the zero RawValue when absent.
func lookup(doc bson.Raw, path string) bson.RawValue {
	if doc == nil {
		return bson.RawValue{}
	}
	v, err := doc.LookupErr(strings.Split(path, ".")...)
	if err != nil {
		return bson.RawValue{}
	}
	return v
}
