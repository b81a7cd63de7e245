package expr_test

import (
	"math"
	"strings"
	"testing"

	"go.mongodb.org/mongo-driver/v2/bson"

	"github.com/formworkdb/formwork/engine/internal/expr"
	"github.com/formworkdb/formwork/engine/internal/mongoerr"
)

// evalOn parses the extended JSON expression exprJSON and evaluates it
// against doc.
func evalOn(t *testing.T, exprJSON string, doc bson.D) (bson.RawValue, error) {
	t.Helper()
	var wrapper bson.Raw
	if err := bson.UnmarshalExtJSON([]byte(`{"e": `+exprJSON+`}`), false, &wrapper); err != nil {
		t.Fatalf("bad test expression %s: %v", exprJSON, err)
	}
	sc := expr.NewScope()
	e, err := expr.Parse(wrapper.Lookup("e"), sc)
	if err != nil {
		return bson.RawValue{}, err
	}
	raw, err := bson.Marshal(doc)
	if err != nil {
		t.Fatal(err)
	}
	c := expr.NewCtx(sc)
	c.SetRoot(raw)
	return e.Eval(c)
}

// TestDateFromStringDivergence pins the documented divergence of
// parseDateFree: timelib's relative and free-form phrases are refused.
func TestDateFromStringDivergence(t *testing.T) {
	for _, s := range []string{"next monday", "+1 week", "20170208", "tomorrow"} {
		_, err := evalOn(t, `{"$dateFromString": {"dateString": "$s"}}`, bson.D{{Key: "s", Value: s}})
		if !mongoerr.Is(err, mongoerr.ConversionFailure) {
			t.Errorf("%q: got %v, want ConversionFailure (divergence: free-form dates)", s, err)
		}
	}
}

// TestDateOperatorsExtremes evaluates the date operators on the extreme
// BSON dates and amounts: each returns a value or a MongoDB error, never
// panics or hangs.
func TestDateOperatorsExtremes(t *testing.T) {
	dates := []bson.DateTime{math.MinInt64, math.MinInt64 + 1, -62135596800001, -1, 0, 253402300800000, math.MaxInt64}
	exprs := []string{
		`{"$year": "$d"}`, `{"$isoWeekYear": {"date": "$d", "timezone": "Pacific/Kiritimati"}}`, `{"$week": "$d"}`,
		`{"$dateToParts": {"date": "$d", "iso8601": true, "timezone": "-23:59"}}`,
		`{"$dateToString": {"date": "$d", "format": "%G-%V-%u %j %U %z %Z"}}`,
		`{"$dateAdd": {"startDate": "$d", "unit": "month", "amount": "$n"}}`,
		`{"$dateAdd": {"startDate": "$d", "unit": "millisecond", "amount": "$n"}}`,
		`{"$dateSubtract": {"startDate": "$d", "unit": "hour", "amount": "$n", "timezone": "Europe/Paris"}}`,
		`{"$dateAdd": {"startDate": "$d", "unit": "year", "amount": 584942417, "timezone": "America/New_York"}}`,
		`{"$dateDiff": {"startDate": "$d", "endDate": {"$toDate": 0}, "unit": "millisecond"}}`,
		`{"$dateDiff": {"startDate": "$d", "endDate": {"$toDate": 0}, "unit": "week", "timezone": "Asia/Kolkata"}}`,
		`{"$dateTrunc": {"date": "$d", "unit": "year", "binSize": 100000000000}}`,
		`{"$dateTrunc": {"date": "$d", "unit": "hour", "binSize": "$n"}}`,
		`{"$dateFromParts": {"year": 9999, "month": 32767, "day": 32767, "hour": 32767, "second": "$n", "millisecond": "$n"}}`,
		`{"$dateFromParts": {"isoWeekYear": 1, "isoWeek": -32768, "isoDayOfWeek": -32768, "timezone": "Australia/Lord_Howe"}}`,
	}
	for _, d := range dates {
		for _, n := range []int64{math.MinInt64, -1, 1, math.MaxInt64} {
			for _, x := range exprs {
				_, err := evalOn(t, x, bson.D{{Key: "d", Value: d}, {Key: "n", Value: n}})
				if err != nil {
					if me := mongoerr.As(err); me.Code == mongoerr.InternalError {
						t.Errorf("%s on %d, %d: %v", x, d, n, err)
					}
				}
			}
		}
	}
}

// TestSubstrCPBadUTF8 checks $substrCP's errors for continuation bytes
// and overlong lead bytes where it walks the string.
func TestSubstrCPBadUTF8(t *testing.T) {
	for _, tc := range []struct {
		s          string
		start, len int
		code       mongoerr.Code
	}{
		{"\x80abc", 1, 1, 34456},
		{"\xf8abcd", 1, 1, 34457},
		{"a\x80bc", 1, 1, 34458},
		{"a\xf8bcd", 1, 1, 34459},
		{"ab", 5, 1, 0},
	} {
		_, err := evalOn(t, `{"$substrCP": ["$s", "$a", "$b"]}`, bson.D{{Key: "s", Value: tc.s}, {Key: "a", Value: tc.start}, {Key: "b", Value: tc.len}})
		if tc.code == 0 && err != nil || tc.code != 0 && !mongoerr.Is(err, tc.code) {
			t.Errorf("%q: got %v, want code %d", tc.s, err, tc.code)
		}
	}
}

// TestStringOperatorsBadUTF8 feeds invalid UTF-8 to the code point
// operators: they answer or fail with MongoDB's error, never panic.
func TestStringOperatorsBadUTF8(t *testing.T) {
	for _, s := range []string{"\xff", "a\xc3", "\x80abc", "\xe2\x82", "é\xf0\x9f"} {
		for _, x := range []string{
			`{"$strLenCP": "$s"}`, `{"$substrCP": ["$s", 0, 2]}`, `{"$substrCP": ["$s", 1, 5]}`,
			`{"$indexOfCP": ["$s", "c", 0, 9]}`, `{"$substrBytes": ["$s", 1, 1]}`,
			`{"$trim": {"input": "$s", "chars": "$s"}}`, `{"$split": ["$s", "\u00c3"]}`,
			`{"$regexFindAll": {"input": "$s", "regex": ""}}`, `{"$replaceAll": {"input": "$s", "find": "", "replacement": "x"}}`,
			`{"$dateFromString": {"dateString": "$s", "onError": null}}`, `{"$toDouble": {"$convert": {"input": "$s", "to": "double", "onError": 0}}}`,
		} {
			if _, err := evalOn(t, x, bson.D{{Key: "s", Value: s}}); err != nil && mongoerr.As(err).Code == mongoerr.InternalError {
				t.Errorf("%s on %q: %v", x, s, err)
			}
		}
	}
}

// TestRegexTimeout checks that a catastrophically backtracking pattern
// stops with 51156, as a PCRE execution error does in mongod.
func TestRegexTimeout(t *testing.T) {
	in := strings.Repeat("a", 40) + "!"
	_, err := evalOn(t, `{"$regexMatch": {"input": "$s", "regex": "^(a+)+$"}}`, bson.D{{Key: "s", Value: in}})
	if !mongoerr.Is(err, 51156) {
		t.Fatalf("got %v, want 51156", err)
	}
}
