package expr

import (
	"math"
	"strings"
	"testing"

	"go.mongodb.org/mongo-driver/v2/bson"

	"github.com/formworkdb/formwork/engine/internal/mongoerr"
)

// evalOne parses the expression {e: …} given as Extended JSON and evaluates
// it against doc.
func evalOne(t *testing.T, exprJSON string, doc bson.D) (bson.RawValue, error) {
	t.Helper()
	var wrapper bson.Raw
	if err := bson.UnmarshalExtJSON([]byte(`{"e": `+exprJSON+`}`), false, &wrapper); err != nil {
		t.Fatalf("bad test expression %s: %v", exprJSON, err)
	}
	sc := NewScope()
	e, err := Parse(wrapper.Lookup("e"), sc)
	if err != nil {
		return bson.RawValue{}, err
	}
	raw, err := bson.Marshal(doc)
	if err != nil {
		t.Fatal(err)
	}
	c := NewCtx(sc)
	c.SetRoot(raw)
	return e.Eval(c)
}

func decStr(s string) dec {
	d, err := bson.ParseDecimal128(s)
	if err != nil {
		panic(err)
	}
	return decFrom128(d)
}

// TestDecimalArithmetic checks the decimal128 rounding of num.go against
// IEEE 754 results mongod's decimal library gives.
func TestDecimalArithmetic(t *testing.T) {
	cases := []struct {
		got  dec
		want string
	}{
		{decAdd(decStr("0.1"), decStr("0.2")), "0.3"},
		{decAdd(decStr("1.10"), decStr("2.205")), "3.305"},
		{decSub(decStr("1"), decStr("1.00")), "0.00"},
		{decMul(decStr("1.5"), decStr("2")), "3.0"},
		{decQuo(decStr("1"), decStr("3")), "0.3333333333333333333333333333333333"},
		{decQuo(decStr("2"), decStr("3")), "0.6666666666666666666666666666666667"},
		{decQuo(decStr("1.00"), decStr("4")), "0.25"},
		{decQuo(decStr("10"), decStr("4")), "2.5"},
		{decQuo(decStr("1E+2"), decStr("2")), "5E+1"},
		{decMod(decStr("7.5"), decStr("2")), "1.5"},
		{decMod(decStr("-7"), decStr("3")), "-1"},
		{decAdd(decStr("9999999999999999999999999999999999"), decStr("1")), "1.000000000000000000000000000000000E+34"},
		{decMul(decStr("9E+6144"), decStr("10")), "Infinity"},
		{decQuantize(decStr("2.5"), 0, roundHalfEven), "2"},
		{decQuantize(decStr("3.5"), 0, roundHalfEven), "4"},
		{decQuantize(decStr("-2.5"), 0, roundFloor), "-3"},
		{decQuantize(decStr("1234"), 2, roundHalfEven), "1.2E+3"},
		{decSqrt(decStr("2")), "1.414213562373095048801688724209698"},
		{decFromFloat(0.1, 15), "0.100000000000000"},
		{decFromFloat(2.5, 34), "2.500000000000000000000000000000000"},
	}
	for i, c := range cases {
		if got := c.got.to128().String(); got != c.want {
			t.Errorf("case %d: got %s, want %s", i, got, c.want)
		}
	}
}

// TestFunctionNoJavaScript: $function parses as in mongod but cannot run.
func TestFunctionNoJavaScript(t *testing.T) {
	// Divergence: mongod with JavaScript enabled runs the function and
	// returns 1; this engine has no JavaScript engine.
	_, err := evalOne(t, `{"$function": {"body": "function() { return 1; }", "args": [], "lang": "js"}}`, bson.D{})
	if !mongoerr.Is(err, 31264) {
		t.Fatalf("got %v, want 31264", err)
	}
}

// TestDecimalTranscendental: decimal trigonometry gives decimals that
// agree with the double result (to 34 digits where num_trig.go applies).
func TestDecimalTranscendental(t *testing.T) {
	// Divergence: for huge or infinite arguments, decimal trigonometry
	// carries only a double's precision here.
	for _, c := range []struct {
		expr string
		want float64
	}{
		{`{"$sin": {"$numberDecimal": "1E+40"}}`, math.Sin(1e40)},
		{`{"$atan2": [{"$numberDecimal": "1"}, {"$numberDecimal": "Infinity"}]}`, 0},
		{`{"$acos": {"$numberDecimal": "0.5"}}`, math.Acos(0.5)},
	} {
		v, err := evalOne(t, c.expr, bson.D{})
		if err != nil || v.Type != bson.TypeDecimal128 {
			t.Fatalf("%s: %v %v", c.expr, v, err)
		}
		if got := decFrom128(v.Decimal128()).float(); math.Abs(got-c.want) > 1e-15 {
			t.Errorf("%s = %v, want %v", c.expr, got, c.want)
		}
	}
}

// TestOutputsBounded: operators that grow arrays stop at the 16 MiB limit.
func TestOutputsBounded(t *testing.T) {
	for _, e := range []string{
		`{"$reduce": {"input": {"$range": [0, 40]}, "initialValue": [1, 2, 3, 4], "in": {"$concatArrays": ["$$value", "$$value"]}}}`,
		`{"$range": [0, 4000000]}`,
		`{"$map": {"input": {"$range": [0, 3000000]}, "in": "abcdefgh"}}`,
		`{"$reduce": {"input": {"$range": [0, 40]}, "initialValue": {"a": "xxxxxxxxxxxxxxxx"}, "in": {"a": "$$value", "b": "$$value"}}}`,
		`{"$setUnion": [{"$range": [0, 1000000]}, {"$range": [0, 1000000]}, {"$range": [0, 1000000]}]}`,
	} {
		t.Run(e[:14], func(t *testing.T) {
			_, err := evalOne(t, e, bson.D{})
			if !mongoerr.Is(err, 17419) {
				t.Errorf("%s: got %v, want 17419", e[:40], err)
			}
		})
	}
}

// TestLetRebindsCurrent: a $let that rebinds CURRENT leaves "$x" paths
// outside it reading the document.
func TestLetRebindsCurrent(t *testing.T) {
	v, err := evalOne(t, `{"a": {"$let": {"vars": {"CURRENT": {"x": 2}}, "in": "$x"}}, "b": "$x"}`, bson.D{{Key: "x", Value: 1}})
	if err != nil {
		t.Fatal(err)
	}
	if got := v.String(); !strings.Contains(got, `"a": {"$numberInt":"2"}`) || !strings.Contains(got, `"b": {"$numberInt":"1"}`) {
		t.Fatalf("got %s", got)
	}
}

// TestConstantFolding: all-constant operands evaluate while parsing, so
// their errors surface even in branches evaluation would skip.
func TestConstantFolding(t *testing.T) {
	sc := NewScope()
	var wrapper bson.Raw
	_ = bson.UnmarshalExtJSON([]byte(`{"e": {"$add": [1, {"$multiply": [2, 3]}]}}`), false, &wrapper)
	e, err := Parse(wrapper.Lookup("e"), sc)
	if err != nil {
		t.Fatal(err)
	}
	if v, ok := IsConst(e); !ok || v.Int32() != 7 {
		t.Fatalf("not folded: %T %v", e, v)
	}
	_ = bson.UnmarshalExtJSON([]byte(`{"e": {"$cond": ["$x", 1, {"$divide": [1, 0]}]}}`), false, &wrapper)
	if _, err := Parse(wrapper.Lookup("e"), sc); !mongoerr.Is(err, mongoerr.BadValue) {
		t.Fatalf("got %v, want BadValue", err)
	}
}

// TestMapAsCurrent: binding CURRENT with $map's as leaves later paths
// reading the document.
func TestMapAsCurrent(t *testing.T) {
	v, err := evalOne(t, `{"a": {"$map": {"input": [{"x": 7}], "as": "CURRENT", "in": "$x"}}, "b": "$x"}`, bson.D{{Key: "x", Value: 1}})
	if err != nil {
		t.Fatal(err)
	}
	if got := v.String(); !strings.Contains(got, `"a": [{"$numberInt":"7"}]`) || !strings.Contains(got, `"b": {"$numberInt":"1"}`) {
		t.Fatalf("got %s", got)
	}
}

// TestGetFieldDeps: $getField's implicit input needs the whole document.
func TestGetFieldDeps(t *testing.T) {
	var wrapper bson.Raw
	_ = bson.UnmarshalExtJSON([]byte(`{"e": {"$getField": "a.b"}}`), false, &wrapper)
	var d Deps
	if _, err := ParseDeps(wrapper.Lookup("e"), NewScope(), &d); err != nil {
		t.Fatal(err)
	}
	if !d.Whole {
		t.Fatalf("deps %+v, want the whole document", d)
	}
}

// TestHashValue checks the hash against mongod's own startup check:
// hash64 of {check: 42} is -944302157085130861.
func TestHashValue(t *testing.T) {
	if got := HashValue(Int32(42)); got != -944302157085130861 {
		t.Fatalf("HashValue(42) = %d", got)
	}
	if HashValue(Int32(42)) != HashValue(Double(42.0)) || HashValue(Int64(42)) != HashValue(Int32(42)) {
		t.Fatal("equal numbers hash differently")
	}
}

// TestDecimalTrigTiny: odd hyperbolic functions of tiny decimals keep
// their value instead of cancelling to zero.
func TestDecimalTrigTiny(t *testing.T) {
	for _, op := range []string{"$sinh", "$tanh", "$asinh", "$atanh", "$sin", "$tan", "$asin", "$atan"} {
		v, err := evalOne(t, `{"`+op+`": {"$numberDecimal": "1E-6000"}}`, bson.D{})
		if err != nil || v.Type != bson.TypeDecimal128 || v.Decimal128().String() != "1.000000000000000000000000000000000E-6000" && v.Decimal128().String() != "1E-6000" {
			t.Errorf("%s(1E-6000) = %v, %v", op, v, err)
		}
	}
}
