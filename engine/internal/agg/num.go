package agg

import (
	"math"
	"strconv"
	"sync"

	"go.mongodb.org/mongo-driver/v2/bson"

	"github.com/formworkdb/formwork/engine/internal/expr"
	"github.com/formworkdb/formwork/engine/internal/mongoerr"
)

// decimal arithmetic is delegated to the expression package's $add and
// $divide, so decimal results round exactly as they do there.
var (
	decOnce           sync.Once
	decAdd, decDivide expr.Expr
	decSlotA, decSlot int
	decScope          *expr.Scope
	decErr            error
)

func initDec() {
	decScope = expr.NewScope()
	decSlotA = decScope.Define("a")
	decSlot = decScope.Define("b")
	add, _ := bson.Marshal(bson.D{{Key: "x", Value: bson.D{{Key: "$add", Value: bson.A{"$$a", "$$b"}}}}})
	div, _ := bson.Marshal(bson.D{{Key: "x", Value: bson.D{{Key: "$divide", Value: bson.A{"$$a", "$$b"}}}}})
	if decAdd, decErr = expr.Parse(bson.Raw(add).Lookup("x"), decScope); decErr != nil {
		return
	}
	decDivide, decErr = expr.Parse(bson.Raw(div).Lookup("x"), decScope)
}

// arith evaluates e ($add or $divide) on a and b.
func arith(e *expr.Expr, a, b bson.RawValue) (bson.RawValue, error) {
	decOnce.Do(initDec)
	if decErr != nil {
		return bson.RawValue{}, decErr
	}
	c := expr.NewCtx(decScope)
	c.Set(decSlotA, a)
	c.Set(decSlot, b)
	return (*e).Eval(c)
}

// numSum adds numbers as $sum and $avg do: ints widen to longs on
// overflow, longs to doubles; any double makes a double result. Decimals
// are summed apart; when there is one, the result is that decimal total
// plus the other numbers' total converted to a decimal of 34 significant
// digits (mongod's decimalTotal.add(nonDecimalTotal.getDecimal())).
// Non-numeric values are ignored.
type numSum struct {
	kind     int // 0 int, 1 long, 2 double, 3 decimal
	i        int64
	overflow bool
	f, comp  float64 // Kahan-compensated double sum of the non-decimals
	nonDec   bool    // a non-decimal number was added
	d        bson.RawValue
	n        int64 // numeric values added
}

func (s *numSum) addFloat(x float64) {
	y := x - s.comp
	t := s.f + y
	s.comp = (t - s.f) - y
	s.f = t
	if math.IsNaN(s.comp) || math.IsInf(t, 0) {
		s.comp = 0
	}
}

func (s *numSum) add(v bson.RawValue) error {
	switch v.Type {
	case bson.TypeInt32, bson.TypeInt64:
		x := v.AsInt64()
		if v.Type == bson.TypeInt64 && s.kind < 1 {
			s.kind = 1
		}
		r := s.i + x
		if (x > 0 && r < s.i) || (x < 0 && r > s.i) {
			s.overflow = true
		}
		s.i = r
		s.addFloat(float64(x))
		s.nonDec = true
	case bson.TypeDouble:
		if s.kind < 2 {
			s.kind = 2
		}
		s.addFloat(v.Double())
		s.nonDec = true
	case bson.TypeDecimal128:
		s.kind = 3
		if s.d.Type == 0 {
			s.d = v
		} else {
			r, err := arith(&decAdd, s.d, v)
			if err != nil {
				return err
			}
			s.d = r
		}
	default:
		return nil
	}
	s.n++
	return nil
}

// decimal34 converts a non-decimal total to a decimal of 34 significant
// digits, as mongod's Decimal128(double, kRoundTo34Digits); v is a
// double.
func decimal34(v bson.RawValue) bson.RawValue {
	f := v.Double()
	str := strconv.FormatFloat(f, 'e', 33, 64)
	if f == 0 || math.IsNaN(f) || math.IsInf(f, 0) {
		str = strconv.FormatFloat(f, 'g', -1, 64)
	}
	switch str {
	case "NaN":
		str = "NaN"
	case "+Inf":
		str = "Infinity"
	case "-Inf":
		str = "-Infinity"
	}
	d, err := bson.ParseDecimal128(str)
	if err != nil {
		return expr.Decimal(bson.NewDecimal128(0x3040000000000000, 0))
	}
	return expr.Decimal(d)
}

// value returns the sum with its type.
func (s *numSum) value() (bson.RawValue, error) {
	switch s.kind {
	case 0:
		if !s.overflow {
			return expr.IntOrLong(s.i), nil
		}
		return expr.Double(s.f), nil
	case 1:
		if !s.overflow {
			return expr.Int64(s.i), nil
		}
		return expr.Double(s.f), nil
	case 2:
		return expr.Double(s.f), nil
	}
	if !s.nonDec {
		return s.d, nil
	}
	var nd bson.RawValue
	if s.f == float64(s.i) && !s.overflow {
		nd = decimal34(expr.Double(float64(s.i)))
	} else {
		nd = decimal34(expr.Double(s.f))
	}
	return arith(&decAdd, s.d, nd)
}

// avg returns the mean of the added values, null when none.
func (s *numSum) avg() (bson.RawValue, error) {
	if s.n == 0 {
		return expr.Null(), nil
	}
	if s.kind == 3 {
		tot, err := s.value()
		if err != nil {
			return tot, err
		}
		return arith(&decDivide, tot, expr.Int64(s.n))
	}
	if s.kind < 2 && !s.overflow {
		return expr.Double(float64(s.i) / float64(s.n)), nil
	}
	return expr.Double(s.f / float64(s.n)), nil
}

// partialDoc encodes the state for spilling.
func (s *numSum) partialDoc() bson.RawValue {
	b := expr.NewDocBuilder()
	v, _ := s.value()
	b.Append("v", v)
	b.Append("n", expr.Int64(s.n))
	return expr.Doc(b.Doc())
}

// mergeDoc folds a spilled state.
func (s *numSum) mergeDoc(p bson.RawValue) error {
	doc, ok := p.DocumentOK()
	if !ok {
		return mongoerr.New(mongoerr.InternalError, "bad partial sum")
	}
	n := s.n
	if err := s.add(doc.Lookup("v")); err != nil {
		return err
	}
	s.n = n + doc.Lookup("n").Int64()
	return nil
}
