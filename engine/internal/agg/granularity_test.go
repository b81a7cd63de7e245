package agg

import (
	"math"
	"testing"

	"go.mongodb.org/mongo-driver/v2/bson"

	"github.com/formworkdb/formwork/engine/internal/expr"
)

// TestRounderInfinityBounded checks that rounding an infinity (which
// mongod's decade scaling never finishes) returns instead of looping.
func TestRounderInfinityBounded(t *testing.T) {
	inf, _ := bson.ParseDecimal128("Infinity")
	for _, name := range []string{"R5", "E192", "1-2-5"} {
		r, err := newRounder(name)
		if err != nil {
			t.Fatal(err)
		}
		for _, v := range []bson.RawValue{expr.Double(math.Inf(1)), expr.Decimal(inf)} {
			if _, err := r.roundUp(v); err != nil {
				t.Errorf("%s roundUp(%v): %v", name, v, err)
			}
			if _, err := r.roundDown(v); err != nil {
				t.Errorf("%s roundDown(%v): %v", name, v, err)
			}
		}
	}
}

// TestRounderDecimalExact checks decimal rounding is exact where a
// double is not: 2.2 in E6 rounds up to 3.3 and down to 1.5.
func TestRounderDecimalExact(t *testing.T) {
	r, _ := newRounder("E6")
	d, _ := bson.ParseDecimal128("2.2")
	got, err := r.roundUp(expr.Decimal(d))
	if err != nil || got.Decimal128().String() != "3.30000000000000" {
		t.Errorf("roundUp(2.2) = %v, %v; want 3.30000000000000", got, err)
	}
	got, err = r.roundDown(expr.Decimal(d))
	if err != nil || got.Decimal128().String() != "1.50000000000000" {
		t.Errorf("roundDown(2.2) = %v, %v; want 1.50000000000000", got, err)
	}
}

// TestRounderDecimalExtremes checks decimals far from one: a huge one
// scales to its decade (coefficient kept to 34 digits), and one too
// small for a double is zero to the rounder and stays as it is.
func TestRounderDecimalExtremes(t *testing.T) {
	r, _ := newRounder("E12")
	big, _ := bson.ParseDecimal128("1.3E+6000")
	got, err := r.roundUp(expr.Decimal(big))
	if err != nil || got.Decimal128().String() != "1.500000000000000000000000000000000E+6000" {
		t.Errorf("roundUp(1.3E+6000) = %v, %v", got, err)
	}
	small, _ := bson.ParseDecimal128("1.3E-6000")
	got, err = r.roundDown(expr.Decimal(small))
	if err != nil || got.Decimal128().String() != "1.3E-6000" {
		t.Errorf("roundDown(1.3E-6000) = %v, %v", got, err)
	}
}
