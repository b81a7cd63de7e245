package bsonkit_test

import (
	"fmt"
	"slices"
	"strings"
	"testing"

	"go.mongodb.org/mongo-driver/v2/bson"

	"github.com/formworkdb/formwork/engine/internal/bsonkit"
)

func val(t testing.TB, ext string) bson.RawValue {
	t.Helper()
	var doc bson.Raw
	if err := bson.UnmarshalExtJSON([]byte(`{"v": `+ext+`}`), false, &doc); err != nil {
		t.Fatalf("%s: %v", ext, err)
	}
	return doc.Lookup("v")
}

// TestCompareOrder checks that a list of values in ascending BSON order
// compares consistently pairwise.
func TestCompareOrder(t *testing.T) {
	ordered := [][]string{
		{`{"$minKey": 1}`},
		{`{"$undefined": true}`},
		{`null`},
		{`{"$numberDouble": "NaN"}`, `{"$numberDecimal": "NaN"}`},
		{`{"$numberDouble": "-Infinity"}`, `{"$numberDecimal": "-Infinity"}`},
		{`{"$numberLong": "-9223372036854775808"}`},
		{`-1.5`},
		{`0`, `-0.0`, `{"$numberLong": "0"}`, `{"$numberDecimal": "-0"}`, `{"$numberDecimal": "0E+10"}`},
		{`{"$numberDecimal": "0.1"}`},
		{`0.1`},
		{`1`, `1.0`, `{"$numberLong": "1"}`, `{"$numberDecimal": "1.00"}`},
		{`9007199254740992.0`, `{"$numberLong": "9007199254740992"}`},
		{`{"$numberLong": "9007199254740993"}`},
		{`{"$numberLong": "9223372036854775807"}`},
		{`9223372036854775808.0`},
		{`{"$numberDouble": "Infinity"}`, `{"$numberDecimal": "Infinity"}`},
		{`""`},
		{`"A"`},
		{`"a"`, `{"$symbol": "a"}`},
		{`"ab"`},
		{`{}`},
		{`{"a": 1}`, `{"a": 1.0}`},
		{`{"a": 1, "b": 1}`},
		{`{"b": 0}`},
		{`{"a": "x"}`}, // the type bracket decides before the field name
		{`[]`},
		{`[1]`},
		{`[1, 2]`},
		{`[2]`},
		{`{"$binary": {"base64": "/w==", "subType": "05"}}`},
		{`{"$binary": {"base64": "AAA=", "subType": "00"}}`},
		{`{"$binary": {"base64": "AAE=", "subType": "00"}}`},
		{`{"$oid": "000000000000000000000001"}`},
		{`{"$oid": "ff0000000000000000000000"}`},
		{`false`},
		{`true`},
		{`{"$date": {"$numberLong": "-1"}}`},
		{`{"$date": {"$numberLong": "0"}}`},
		{`{"$timestamp": {"t": 1, "i": 2}}`},
		{`{"$timestamp": {"t": 4294967295, "i": 0}}`},
		{`{"$regularExpression": {"pattern": "a", "options": ""}}`},
		{`{"$regularExpression": {"pattern": "a", "options": "i"}}`},
		{`{"$regularExpression": {"pattern": "b", "options": ""}}`},
		{`{"$code": "a"}`},
		{`{"$code": "a", "$scope": {}}`},
		{`{"$maxKey": 1}`},
	}
	var groups [][]bson.RawValue
	for _, g := range ordered {
		var vs []bson.RawValue
		for _, s := range g {
			vs = append(vs, val(t, s))
		}
		groups = append(groups, vs)
	}
	for i, gi := range groups {
		for j, gj := range groups {
			for _, a := range gi {
				for _, b := range gj {
					want := 0
					if i < j {
						want = -1
					} else if i > j {
						want = 1
					}
					if got := bsonkit.Compare(a, b); got != want {
						t.Errorf("Compare(%s, %s) = %d, want %d", a, b, got, want)
					}
				}
			}
		}
	}
}

func TestWalk(t *testing.T) {
	cases := []struct {
		doc, path string
		leaf      bool
		want      string
	}{
		{`{"a": 1}`, "a", true, "1@-1"},
		{`{"a": [1, 2]}`, "a", true, "1@0 2@1 [1,2]@-1"},
		{`{"a": [1, 2]}`, "a", false, "[1,2]@-1"},
		{`{"a": [{"b": 1}, {"c": 1}, 5]}`, "a.b", true, "1@0 missing@1"},
		{`{"a": [[{"b": 1}]]}`, "a.b", true, ""},
		{`{"a": [{"b": [3, 4]}]}`, "a.b", true, "3@0 4@0 [3,4]@0"},
		{`{"a": [7, 8]}`, "a.1", true, "8@1"},
		{`{"a": [{"b": 1}]}`, "a.0.b", true, "missing@0 1@0"},
		{`{"a": 5}`, "a.b", true, "missing@-1"},
		{`{}`, "a", true, "missing@-1"},
	}
	for _, c := range cases {
		var doc bson.Raw
		if err := bson.UnmarshalExtJSON([]byte(c.doc), false, &doc); err != nil {
			t.Fatal(err)
		}
		var got []string
		bsonkit.Walk(doc, bsonkit.SplitPath(c.path), c.leaf, func(v bson.RawValue, pos int) bool {
			s := "missing"
			if v.Type != bsonkit.TypeMissing {
				d, _ := bson.MarshalExtJSON(bson.D{{Key: "v", Value: v}}, false, false)
				s = strings.TrimSuffix(strings.TrimPrefix(string(d), `{"v":`), "}")
			}
			got = append(got, fmt.Sprintf("%s@%d", s, pos))
			return false
		})
		if g := strings.Join(got, " "); g != c.want {
			t.Errorf("Walk(%s, %s) = %q, want %q", c.doc, c.path, g, c.want)
		}
	}
}

func TestValidate(t *testing.T) {
	good, _ := bson.Marshal(bson.D{{Key: "a", Value: bson.A{1, "x", bson.D{{Key: "b", Value: nil}}}}})
	if err := bsonkit.Validate(good); err != nil {
		t.Fatal(err)
	}
	bad := slices.Clone(good)
	bad[len(bad)-1] = 1
	if bsonkit.Validate(bad) == nil {
		t.Error("missing terminator accepted")
	}
	if bsonkit.Validate([]byte{0x0d, 0, 0, 0, 0x02, 'a', 0, 0, 0, 0, 0, 0, 0}) == nil {
		t.Error("zero-length string accepted")
	}
}

func ExampleCompare() {
	var doc bson.Raw
	_ = bson.UnmarshalExtJSON([]byte(`{"i": 1, "d": 1.0, "s": "1", "n": null}`), false, &doc)
	fmt.Println(bsonkit.Compare(doc.Lookup("i"), doc.Lookup("d")))
	fmt.Println(bsonkit.Compare(doc.Lookup("i"), doc.Lookup("s")))
	fmt.Println(bsonkit.Compare(doc.Lookup("n"), doc.Lookup("i")))
	// Output:
	// 0
	// -1
	// -1
}
