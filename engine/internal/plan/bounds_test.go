package plan

import (
	"math"
	"testing"

	"go.mongodb.org/mongo-driver/v2/bson"
)

func TestFormatDouble(t *testing.T) {
	for f, want := range map[float64]string{
		5: "5.0", 5.5: "5.5", math.Inf(1): "inf.0", math.Inf(-1): "-inf.0", math.NaN(): "nan.0", 0.1: "0.1", 1e20: "1e+20.0",
	} {
		if got := formatDouble(f); got != want {
			t.Errorf("formatDouble(%v) = %q, want %q", f, got, want)
		}
	}
}

func TestSimpleRegex(t *testing.T) {
	cases := []struct {
		pat, flags, prefix string
		tight              tightness
	}{
		{"^abc", "", "abc", exact},
		{"^,Books,Programming,", "", ",Books,Programming,", exact},
		{"^abc.*", "", "abc", inexactCovered},
		{"^ab?c", "", "a", inexactCovered},
		{"abc", "", "", inexactCovered},
		{"^abc", "i", "", inexactCovered},
		{"^a|b", "", "", inexactCovered},
		{`^a\.b`, "", "a.b", exact},
		{`\Aab`, "m", "ab", exact},
		{"^ab", "m", "", inexactCovered},
	}
	for _, c := range cases {
		p, tt := simpleRegex(c.pat, c.flags)
		if p != c.prefix || tt != c.tight {
			t.Errorf("simpleRegex(%q, %q) = %q, %v; want %q, %v", c.pat, c.flags, p, tt, c.prefix, c.tight)
		}
	}
}

func TestBoundsStrings(t *testing.T) {
	i32 := func(n int32) bson.RawValue {
		return bson.RawValue{Type: bson.TypeInt32, Value: []byte{byte(n), byte(n >> 8), byte(n >> 16), byte(n >> 24)}}
	}
	str := func(o oil) []string {
		var out []string
		for _, iv := range o {
			out = append(out, iv.String())
		}
		return out
	}
	check := func(name string, got oil, want ...string) {
		t.Helper()
		g := str(got)
		if len(g) != len(want) {
			t.Fatalf("%s = %q, want %q", name, g, want)
		}
		for i := range g {
			if g[i] != want[i] {
				t.Fatalf("%s = %q, want %q", name, g, want)
			}
		}
	}
	o, tt := rangeBounds(kGt, i32(10000))
	check("$gt 10000", o, "(10000, inf.0]")
	if tt != exact {
		t.Errorf("$gt tightness %v", tt)
	}
	o, _ = rangeBounds(kLt, doubleVal(5))
	check("$lt 5.0", o, "[-inf.0, 5.0)")
	o, _ = rangeBounds(kGte, stringVal("a"))
	check(`$gte "a"`, o, `["a", {})`)
	o, tt = eqBounds(nullVal)
	check("null", o, "[undefined, undefined]", "[null, null]")
	if tt != inexactFetch {
		t.Errorf("null tightness %v", tt)
	}
	o, _ = translate(&expr{kind: kNot, children: []*expr{{kind: kEq, val: i32(5)}}}, false, false, false)
	check("$ne 5", o, "[MinKey, 5)", "(5, MaxKey]")
	o, _ = regexBounds(regexValue("^abc", ""))
	check("/^abc/", o, `["abc", "abd")`, "[/^abc/, /^abc/]")
	check("union", unionize(oil{point(i32(3)), point(i32(1)), {lo: i32(1), hi: i32(2), loInc: true}}), "[1, 2)", "[3, 3]")
	check("intersect", intersect(oil{{lo: i32(1), hi: i32(9), loInc: true, hiInc: true}}, oil{{lo: i32(5), hi: maxKey, hiInc: true}}), "(5, 9]")
}

func TestParsedQueryOrder(t *testing.T) {
	f, _ := bson.Marshal(bson.D{{Key: "b", Value: bson.D{{Key: "$gte", Value: 1}}}, {Key: "a", Value: 2}, {Key: "c", Value: bson.D{{Key: "$in", Value: bson.A{3}}}}})
	got, _ := bson.MarshalExtJSON(parseFilter(f).serialize(""), false, false)
	want := `{"$and":[{"a":{"$eq":2}},{"c":{"$eq":3}},{"b":{"$gte":1}}]}`
	if string(got) != want {
		t.Errorf("parsedQuery = %s, want %s", got, want)
	}
}
