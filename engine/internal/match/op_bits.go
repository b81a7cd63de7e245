package match

import (
	"math"

	"go.mongodb.org/mongo-driver/v2/bson"

	"github.com/formworkdb/formwork/engine/internal/bsonkit"
	"github.com/formworkdb/formwork/engine/internal/mongoerr"
)

// bitTest is the compiled operand of the $bits operators: the bit positions
// to test.
type bitTest struct {
	op        string
	positions []uint64
}

// newBits compiles $bitsAllSet, $bitsAllClear, $bitsAnySet and
// $bitsAnyClear, whose operand is an array of bit positions, a
// non-negative integral number (a bitmask) or a BinData bitmask.
// https://www.mongodb.com/docs/v7.0/reference/operator/query-bitwise/
func newBits(name, op string, v bson.RawValue) (node, error) {
	t := &bitTest{op: op}
	switch {
	case v.Type == bson.TypeArray:
		var err error
		bsonkit.ForEach(v.Value, func(key string, e bson.RawValue) bool {
			if !bsonkit.IsNumber(e.Type) {
				err = badValue("bit positions must be an integer but got: %s", elemString(key, e))
				return false
			}
			n, ok := bsonkit.ExactInt64(e)
			if !ok {
				err = badValue("bit positions must be an integer but got: %s", elemString(key, e))
				return false
			}
			if n < 0 {
				err = badValue("bit positions must be >= 0 but got: %s", elemString(key, e))
				return false
			}
			t.positions = append(t.positions, uint64(n))
			return true
		})
		if err != nil {
			return nil, err
		}
	case bsonkit.IsNumber(v.Type):
		mask, err := nonNegativeInt(op, v)
		if err != nil {
			return nil, err
		}
		for i := uint64(0); i < 63; i++ {
			if mask&(1<<i) != 0 {
				t.positions = append(t.positions, i)
			}
		}
	case v.Type == bson.TypeBinary:
		_, data := v.Binary()
		for i, b := range data {
			for j := 0; j < 8; j++ {
				if b&(1<<j) != 0 {
					t.positions = append(t.positions, uint64(i*8+j))
				}
			}
		}
	default:
		return nil, badValue("%s takes an Array, a number, or a BinData but received: %s", name, elemString(op, v))
	}
	return newLeaf(name, KindBits, op, v, t.test), nil
}

// nonNegativeInt is mongod's parseIntegerElementToNonNegativeLong, whose
// failures are FailedToParse.
func nonNegativeInt(op string, v bson.RawValue) (int64, error) {
	e := elemString(op, v)
	if v.Type == bson.TypeDouble {
		f := v.Double()
		switch {
		case math.IsNaN(f):
			return 0, mongoerr.Newf(mongoerr.FailedToParse, "Expected an integer, but found NaN in: %s", e)
		case f >= 9223372036854775808.0 || f < -9223372036854775808.0:
			return 0, mongoerr.Newf(mongoerr.FailedToParse, "Cannot represent as a 64-bit integer: %s", e)
		case f != math.Trunc(f):
			return 0, mongoerr.Newf(mongoerr.FailedToParse, "Expected an integer: %s", e)
		}
	}
	n, ok := bsonkit.ExactInt64(v)
	if !ok {
		return 0, mongoerr.Newf(mongoerr.FailedToParse, "Cannot represent as a 64-bit integer: %s", e)
	}
	if n < 0 {
		return 0, mongoerr.Newf(mongoerr.FailedToParse, "Expected a positive number in: %s", e)
	}
	return n, nil
}

// bit returns the bit at position p of an integral value, with the sign
// extended beyond bit 63.
func intBit(x int64, p uint64) bool {
	if p >= 64 {
		return x < 0
	}
	return uint64(x)&(1<<p) != 0
}

func binBit(data []byte, p uint64) bool {
	if p/8 >= uint64(len(data)) {
		return false
	}
	return data[p/8]&(1<<(p%8)) != 0
}

// test applies the operator to one value: numbers that are integral and
// fit an int64, and BinData; anything else never matches.
func (t *bitTest) test(v bson.RawValue) bool {
	var bit func(p uint64) bool
	switch {
	case v.Type == bson.TypeBinary:
		_, data := v.Binary()
		bit = func(p uint64) bool { return binBit(data, p) }
	case bsonkit.IsNumber(v.Type):
		x, ok := bsonkit.ExactInt64(v)
		if !ok {
			return false
		}
		bit = func(p uint64) bool { return intBit(x, p) }
	default:
		return false
	}
	switch t.op {
	case "$bitsAllSet":
		for _, p := range t.positions {
			if !bit(p) {
				return false
			}
		}
		return true
	case "$bitsAllClear":
		for _, p := range t.positions {
			if bit(p) {
				return false
			}
		}
		return true
	case "$bitsAnySet":
		for _, p := range t.positions {
			if bit(p) {
				return true
			}
		}
		return false
	}
	for _, p := range t.positions {
		if !bit(p) {
			return true
		}
	}
	return false
}
