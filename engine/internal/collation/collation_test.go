package collation

import (
	"bytes"
	"errors"
	"testing"

	"go.mongodb.org/mongo-driver/v2/bson"
	"golang.org/x/text/unicode/norm"
	"pgregory.net/rapid"

	"github.com/formworkdb/formwork/engine/internal/mongoerr"
)

func mustParse(t testing.TB, d bson.D) *Collator {
	t.Helper()
	raw, _ := bson.Marshal(d)
	c, err := Parse(raw)
	if err != nil {
		t.Fatalf("Parse(%v): %v", d, err)
	}
	return c
}

func TestParseErrors(t *testing.T) {
	cases := []struct {
		spec bson.D
		code mongoerr.Code
		msg  string
	}{
		{bson.D{}, mongoerr.NoSuchKey, `Missing expected field "locale"`},
		{bson.D{{Key: "locale", Value: 1}}, mongoerr.TypeMismatch, `"locale" had the wrong type. Expected string, found int`},
		{bson.D{{Key: "locale", Value: "simple"}, {Key: "strength", Value: 2}}, mongoerr.FailedToParse, `If locale=simple, no other fields should be present in: { locale: "simple", strength: 2 }`},
		{bson.D{{Key: "locale", Value: ""}}, mongoerr.BadValue, `Field 'locale' cannot be the empty string in: { locale: "" }`},
		{bson.D{{Key: "locale", Value: "xx"}}, mongoerr.BadValue, `Field 'locale' is invalid in: { locale: "xx" }`},
		{bson.D{{Key: "locale", Value: "en-US"}}, mongoerr.BadValue, `Field 'locale' is invalid in: { locale: "en-US" }. Did you mean 'en_US'?`},
		{bson.D{{Key: "locale", Value: "en"}, {Key: "strength", Value: 6}}, mongoerr.FailedToParse, `Field 'strength' must be an integer 1 through 5. Got: 6`},
		{bson.D{{Key: "locale", Value: "en"}, {Key: "strength", Value: "2"}}, mongoerr.TypeMismatch, `Expected field "strength" to have numeric type, but found string`},
		{bson.D{{Key: "locale", Value: "en"}, {Key: "strength", Value: 1.5}}, mongoerr.BadValue, `Expected field "strength" to have a value exactly representable as a 64-bit integer, but found strength: 1.5`},
		{bson.D{{Key: "locale", Value: "en"}, {Key: "caseLevel", Value: 1}}, mongoerr.TypeMismatch, `"caseLevel" had the wrong type. Expected bool, found int`},
		{bson.D{{Key: "locale", Value: "en"}, {Key: "caseFirst", Value: "x"}}, mongoerr.FailedToParse, `Field 'caseFirst' must be 'upper', 'lower', or 'off'. Got: x`},
		{bson.D{{Key: "locale", Value: "en"}, {Key: "alternate", Value: "x"}}, mongoerr.FailedToParse, `Field 'alternate' must be 'non-ignorable' or 'shifted'. Got: x`},
		{bson.D{{Key: "locale", Value: "en"}, {Key: "maxVariable", Value: "x"}}, mongoerr.FailedToParse, `Field 'maxVariable' must be 'punct' or 'space'. Got: x`},
		{bson.D{{Key: "locale", Value: "en"}, {Key: "foo", Value: 1}}, mongoerr.FailedToParse, `Collation spec contains unknown field. Collation spec: { locale: "en", foo: 1 }`},
		{bson.D{{Key: "locale", Value: "en"}, {Key: "version", Value: "1.0"}}, mongoerr.IncompatibleCollationVersion, `Requested collation version 1.0 but the only available collator version was 57.1. Requested collation spec: { locale: "en", version: "1.0" }`},
		{bson.D{{Key: "locale", Value: "en"}, {Key: "strength", Value: 1}, {Key: "backwards", Value: true}}, mongoerr.BadValue, `'backwards' is invalid with 'strength' of 1 in: { locale: "en", caseLevel: false, caseFirst: "off", strength: 1, numericOrdering: false, alternate: "non-ignorable", maxVariable: "punct", normalization: false, backwards: true, version: "57.1" }`},
		{bson.D{{Key: "locale", Value: "en"}, {Key: "strength", Value: 2}, {Key: "caseFirst", Value: "upper"}}, mongoerr.BadValue, `'caseFirst' is invalid unless 'caseLevel' is on or 'strength' is greater than 2 in: { locale: "en", caseLevel: false, caseFirst: "upper", strength: 2, numericOrdering: false, alternate: "non-ignorable", maxVariable: "punct", normalization: false, backwards: false, version: "57.1" }`},
	}
	for _, tc := range cases {
		raw, _ := bson.Marshal(tc.spec)
		_, err := Parse(raw)
		var me *mongoerr.Error
		if !errors.As(err, &me) {
			t.Errorf("%v: got %v, want %v", tc.spec, err, tc.code)
			continue
		}
		if me.Code != tc.code || me.Msg != tc.msg {
			t.Errorf("%v:\n got %d %s\nwant %d %s", tc.spec, me.Code, me.Msg, tc.code, tc.msg)
		}
	}
}

func TestParseNormalises(t *testing.T) {
	c := mustParse(t, bson.D{{Key: "locale", Value: "fr_CA"}, {Key: "strength", Value: int64(2)}})
	want := `{"locale": "fr_CA","caseLevel": false,"caseFirst": "off","strength": {"$numberInt":"2"},"numericOrdering": false,"alternate": "non-ignorable","maxVariable": "punct","normalization": false,"backwards": true,"version": "57.1"}`
	if got := c.Document().String(); got != want {
		t.Fatalf("got %s\nwant %s", got, want)
	}
	simple, _ := bson.Marshal(bson.D{{Key: "locale", Value: "simple"}})
	if c, err := Parse(simple); c != nil || err != nil {
		t.Fatalf("simple: %v %v", c, err)
	}
}

func TestCompareStrengths(t *testing.T) {
	cases := []struct {
		spec bson.D
		a, b string
		want int
	}{
		{bson.D{{Key: "locale", Value: "en"}, {Key: "strength", Value: 1}}, "cafe", "Café", 0},
		{bson.D{{Key: "locale", Value: "en"}, {Key: "strength", Value: 2}}, "cafe", "CAFE", 0},
		{bson.D{{Key: "locale", Value: "en"}, {Key: "strength", Value: 2}}, "cafe", "café", -1},
		{bson.D{{Key: "locale", Value: "en"}}, "a", "A", -1},
		{bson.D{{Key: "locale", Value: "en"}, {Key: "caseFirst", Value: "upper"}}, "a", "A", 1},
		{bson.D{{Key: "locale", Value: "en"}}, "b", "A", 1},
		{bson.D{{Key: "locale", Value: "en"}, {Key: "strength", Value: 1}, {Key: "caseLevel", Value: true}}, "a", "A", -1},
		{bson.D{{Key: "locale", Value: "en"}, {Key: "strength", Value: 1}, {Key: "caseLevel", Value: true}}, "a", "á", 0},
		{bson.D{{Key: "locale", Value: "en"}, {Key: "numericOrdering", Value: true}}, "10", "9", 1},
		{bson.D{{Key: "locale", Value: "en"}}, "10", "9", -1},
		{bson.D{{Key: "locale", Value: "en"}, {Key: "alternate", Value: "shifted"}}, "a-b", "ab", 0},
		{bson.D{{Key: "locale", Value: "en"}, {Key: "alternate", Value: "shifted"}, {Key: "maxVariable", Value: "space"}}, "a b", "ab", 0},
		{bson.D{{Key: "locale", Value: "en"}, {Key: "alternate", Value: "shifted"}, {Key: "maxVariable", Value: "space"}}, "a-b", "ab", -1},
		{bson.D{{Key: "locale", Value: "en"}, {Key: "strength", Value: 5}}, "a", "a", 0},
		{bson.D{{Key: "locale", Value: "en"}, {Key: "strength", Value: 5}}, "\u00e9", "e\u0301", 0},
	}
	for _, tc := range cases {
		c := mustParse(t, tc.spec)
		if got := c.Compare(tc.a, tc.b); got != tc.want {
			t.Errorf("%v: Compare(%q, %q) = %d, want %d", tc.spec, tc.a, tc.b, got, tc.want)
		}
	}
}

// TestKeyOrderAgreesWithCompare checks I1 and that keys are equal exactly
// when Compare says equal, for random specs and strings.
func TestKeyOrderAgreesWithCompare(t *testing.T) {
	alphabet := []rune("aAbBeéÉE zZ-_.1029ß\u0301ñÑ$")
	strGen := rapid.Custom(func(t *rapid.T) string {
		rs := rapid.SliceOfN(rapid.SampledFrom(alphabet), 0, 8).Draw(t, "runes")
		return string(rs)
	})
	rapid.Check(t, func(t *rapid.T) {
		strength := rapid.IntRange(1, 5).Draw(t, "strength")
		d := bson.D{{Key: "locale", Value: rapid.SampledFrom([]string{"en", "fr", "de", "fr_CA", "da", "sv"}).Draw(t, "locale")},
			{Key: "strength", Value: strength},
			{Key: "caseLevel", Value: rapid.Bool().Draw(t, "caseLevel")},
			{Key: "numericOrdering", Value: rapid.Bool().Draw(t, "numeric")},
			{Key: "alternate", Value: rapid.SampledFrom([]string{"non-ignorable", "shifted"}).Draw(t, "alt")},
			{Key: "maxVariable", Value: rapid.SampledFrom([]string{"punct", "space"}).Draw(t, "maxVar")},
		}
		if strength >= 3 {
			d = append(d, bson.E{Key: "caseFirst", Value: rapid.SampledFrom([]string{"off", "upper", "lower"}).Draw(t, "caseFirst")})
		} else {
			d = append(d, bson.E{Key: "caseFirst", Value: "off"})
		}
		d = append(d, bson.E{Key: "backwards", Value: strength > 1 && rapid.Bool().Draw(t, "backwards")})
		raw, _ := bson.Marshal(d)
		c, err := Parse(raw)
		if err != nil {
			t.Fatalf("Parse: %v", err)
		}
		a, b, x := strGen.Draw(t, "a"), strGen.Draw(t, "b"), strGen.Draw(t, "c")
		ka, kb, kx := c.Key(a), c.Key(b), c.Key(x)
		if got, want := c.Compare(a, b), bytes.Compare(ka, kb); got != want {
			t.Fatalf("Compare(%q,%q)=%d, keys say %d", a, b, got, want)
		}
		if c.Compare(a, b) != -c.Compare(b, a) {
			t.Fatalf("antisymmetry fails for %q %q", a, b)
		}
		if bytes.Compare(ka, kb) <= 0 && bytes.Compare(kb, kx) <= 0 && bytes.Compare(ka, kx) > 0 {
			t.Fatalf("transitivity fails")
		}
		if c.Compare(a, a) != 0 {
			t.Fatalf("Compare(%q,%q) != 0", a, a)
		}
		if strength == 5 && c.Compare(a, b) == 0 && norm.NFD.String(a) != norm.NFD.String(b) {
			t.Fatalf("identical strength equates %q and %q", a, b)
		}
	})
}
