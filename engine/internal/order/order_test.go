package order_test

import (
	"fmt"
	"slices"
	"strings"
	"testing"

	"go.mongodb.org/mongo-driver/v2/bson"

	"github.com/formworkdb/formwork/engine/internal/mongoerr"
	"github.com/formworkdb/formwork/engine/internal/order"
	"github.com/formworkdb/formwork/internal/scripttest"
)

func raw(t testing.TB, s string) bson.Raw {
	t.Helper()
	r, err := scripttest.ParseDoc(s)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

func sortIDs(t *testing.T, spec string, docs []bson.Raw) (string, error) {
	o, err := order.Compile(raw(t, spec))
	if err != nil {
		t.Fatalf("Compile(%s): %v", spec, err)
	}
	type kd struct {
		k order.Key
		d bson.Raw
	}
	var all []kd
	for _, d := range docs {
		k, err := o.Key(d)
		if err != nil {
			return "", err
		}
		all = append(all, kd{k, d})
	}
	slices.SortStableFunc(all, func(a, b kd) int { return o.CompareKeys(a.k, b.k) })
	var ids []string
	for _, x := range all {
		id := x.d.Lookup("_id")
		if id.Type == bson.TypeInt32 {
			ids = append(ids, fmt.Sprint(id.Int32()))
		} else {
			ids = append(ids, id.String())
		}
	}
	return strings.Join(ids, ","), nil
}

// The expectations below are those of mongod 7.0's
// jstests/core/query/sort/sort_dotted_paths.js.
func TestOrderDottedPaths(t *testing.T) {
	sets := []struct {
		docs  string
		specs [][2]string
	}{
		{
			`{"_id":1,"a":1};{"_id":2,"a":{"$undefined":true}};{"_id":3,"a":null};{"_id":4,"a":{}};{"_id":5,"a":[]};{"_id":6,"a":[1]};{"_id":7,"a":[[1]]};{"_id":8};{"_id":9,"a":[{"$undefined":true}]}`,
			[][2]string{
				{`{"a":1,"_id":1}`, "2,5,9,3,8,1,6,4,7"},
				{`{"a":-1,"_id":1}`, "7,4,1,6,3,8,2,5,9"},
				{`{"a.0":1,"_id":1}`, "9,1,2,3,4,5,8,6,7"},
				{`{"a.0":-1,"_id":1}`, "7,6,1,2,3,4,5,8,9"},
			},
		},
		{
			`{"_id":1,"a":1,"b":[2]};{"_id":2,"a":2,"b":[]};{"_id":3,"a":[],"b":4};{"_id":4,"a":[1],"b":4};{"_id":5,"a":[2,3],"b":2};{"_id":6,"a":2,"b":[3,5]};{"_id":7,"a":1,"b":[1,3]};{"_id":8,"a":[1,2],"b":3};{"_id":9,"a":2,"b":3}`,
			[][2]string{
				{`{"a":1,"b":1,"_id":1}`, "3,7,1,8,4,2,5,6,9"},
				{`{"a":1,"b":-1,"_id":1}`, "3,4,7,8,1,6,9,5,2"},
				{`{"a":-1,"b":1,"_id":1}`, "5,2,6,8,9,7,1,4,3"},
				{`{"a":-1,"b":-1,"_id":1}`, "5,6,8,9,2,4,7,1,3"},
			},
		},
		{
			`{"_id":1,"a":{"b":2}};{"_id":2,"a":{"b":[]}};{"_id":3,"a":{"b":[2,3]}};{"_id":4,"a":{"c":1}};{"_id":5,"a":[]};{"_id":6,"a":[{"b":[5]}]};{"_id":7,"a":[{"b":[4,5]},{"b":7}]};{"_id":8,"a":[{"b":[1,3]},{"b":[2,5]}]};{"_id":9,"a":[{"b":[]},{"b":[1,3]}]}`,
			[][2]string{
				{`{"a.b":1,"_id":1}`, "2,9,4,5,8,1,3,7,6"},
				{`{"a.b":1,"_id":-1}`, "9,2,5,4,8,3,1,7,6"},
				{`{"a.b":-1,"_id":1}`, "7,6,8,3,9,1,4,5,2"},
				{`{"a.b":-1,"_id":-1}`, "7,8,6,9,3,1,5,4,2"},
			},
		},
		{
			`{"_id":1,"a":[{"b":4,"c":1},{"b":1,"c":2}]};{"_id":2,"a":[{"b":2,"c":1},{"b":4,"c":2}]};{"_id":3,"a":[{"b":6,"c":1},{"b":9,"c":2}]};{"_id":4,"a":[{"b":4,"c":1},{"b":5,"c":3}]};{"_id":5,"a":[{"b":2,"c":1},{"b":7,"c":3}]};{"_id":6,"a":[{"b":5,"c":1},{"b":3,"c":3}]};{"_id":7,"a":[{"b":7,"c":2},{"b":2,"c":3}]};{"_id":8,"a":[{"b":3,"c":2},{"b":8,"c":3}]};{"_id":9,"a":[{"b":8,"c":2},{"b":6,"c":3}]}`,
			[][2]string{
				{`{"a.c":1,"a.b":1,"_id":1}`, "2,5,1,4,6,3,8,7,9"},
				{`{"a.c":1,"a.b":-1,"_id":1}`, "3,6,1,4,2,5,9,7,8"},
				{`{"a.c":-1,"a.b":1,"_id":1}`, "7,6,4,9,5,8,1,2,3"},
				{`{"a.c":-1,"a.b":-1,"_id":1}`, "8,5,9,4,6,7,3,2,1"},
				{`{"a.c":1,"a":1,"_id":1}`, "2,5,1,4,6,3,8,7,9"},
				{`{"a.c":-1,"a":-1,"_id":1}`, "8,5,9,4,6,7,3,2,1"},
			},
		},
		{
			`{"_id":1,"a":[{"b":[4,1],"c":1},{"b":[1,5],"c":2}]};{"_id":2,"a":[{"b":2,"c":[1,3]},{"b":4,"c":[2,4]}]};{"_id":3,"a":[{"b":[6,4],"c":1},{"b":[9,7],"c":2}]};{"_id":4,"a":[{"b":4,"c":[1,2]},{"b":5,"c":[3,2]}]};{"_id":5,"a":[{"b":[2,3],"c":1},{"b":[7,6],"c":3}]};{"_id":6,"a":[{"b":5,"c":[]},{"b":3,"c":3}]};{"_id":7,"a":[{"b":[],"c":2},{"b":2,"c":3}]};{"_id":8,"a":[{"b":3,"c":[2]},{"b":8,"c":[3]}]};{"_id":9,"a":[{"b":[8],"c":2},{"b":[6],"c":3}]}`,
			[][2]string{
				{`{"a.c":1,"a.b":1,"_id":1}`, "6,1,2,5,3,4,7,8,9"},
				{`{"a.c":1,"a.b":-1,"_id":1}`, "6,3,1,4,5,2,9,8,7"},
				{`{"a.c":-1,"a.b":1,"_id":1}`, "2,7,6,4,5,9,8,1,3"},
				{`{"a.c":-1,"a.b":-1,"_id":1}`, "2,8,5,9,4,6,7,3,1"},
				{`{"a.b":1,"a":1,"_id":1}`, "7,1,2,5,6,8,4,3,9"},
				{`{"a.b":-1,"a":-1,"_id":1}`, "3,9,8,5,1,4,6,2,7"},
				{`{"a.0.b":1,"_id":1}`, "7,1,2,5,8,3,4,6,9"},
				{`{"a.0.b":-1,"_id":-1}`, "9,3,6,4,1,8,5,2,7"},
			},
		},
		{
			`{"_id":1,"a":{"b":1},"c":[{"d":[4,1]},{"d":[1,5]}]};{"_id":2,"a":[{"b":[1,3]},{"b":[2,4]}],"c":{"d":2}};{"_id":3,"a":{"b":1},"c":[{"d":[6,4]},{"d":[9,7]}]};{"_id":4,"a":[{"b":[2]},{"b":[3,2]}],"c":{"d":4}};{"_id":5,"a":{"b":1},"c":[{"d":[2,3]},{"d":[7,6]}]};{"_id":6,"a":[{"b":[]},{"b":3}],"c":{"d":4}};{"_id":7,"a":{"b":2},"c":[{"d":[]},{"d":2}]};{"_id":8,"a":[{"b":[2]},{"b":[3]}],"c":{"d":3}};{"_id":9,"a":{"b":3},"c":[{"d":[8]},{"d":[6]}]}`,
			[][2]string{
				{`{"a.b":1,"c.d":1,"_id":1}`, "6,1,2,5,3,7,8,4,9"},
				{`{"a.b":1,"c.d":-1,"_id":1}`, "6,3,5,1,2,4,8,7,9"},
				{`{"a.b":-1,"c.d":1,"_id":1}`, "2,8,4,6,9,7,1,5,3"},
				{`{"a.b":-1,"c.d":-1,"_id":1}`, "2,9,4,6,8,7,3,5,1"},
			},
		},
		{
			`{"_id":1,"a":{"b":{"c":2}}};{"_id":2,"a":{"b":{"c":[]}}};{"_id":3,"a":[{"b":[]},{"b":{"c":[]}}]};{"_id":4,"a":[{"b":{"c":1}}]};{"_id":5,"a":{"b":[{"c":3},{"d":1}]}};{"_id":6,"a":{"b":[{"c":[5]}]}};{"_id":7,"a":[]};{"_id":8,"a":{"b":[{"c":[1,3]},{"c":[2,5]}]}};{"_id":9,"a":[{"b":[{"c":[]},{"c":[1,3]}]}]}`,
			[][2]string{
				{`{"a.b.c":1,"_id":1}`, "2,3,9,5,7,4,8,1,6"},
				{`{"a.b.c":1,"_id":-1}`, "9,3,2,7,5,8,4,1,6"},
				{`{"a.b.c":-1,"_id":1}`, "6,8,5,9,1,4,3,7,2"},
				{`{"a.b.c":-1,"_id":-1}`, "8,6,9,5,1,4,7,3,2"},
			},
		},
	}
	for _, set := range sets {
		var docs []bson.Raw
		for _, d := range strings.Split(set.docs, ";") {
			docs = append(docs, raw(t, d))
		}
		for _, s := range set.specs {
			got, err := sortIDs(t, s[0], docs)
			if err != nil {
				t.Errorf("sort %s: %v", s[0], err)
				continue
			}
			if got != s[1] {
				t.Errorf("sort %s = %s, want %s", s[0], got, s[1])
			}
		}
	}
}

func TestOrderParallelArrays(t *testing.T) {
	for _, c := range [][2]string{
		{`{"a":1,"b":1}`, `{"a":[],"b":[]}`},
		{`{"a.b":1,"a.c":1}`, `{"a":{"b":[1,2],"c":[3,4]}}`},
		{`{"a.b":1,"c.d":1}`, `{"a":{"b":[1,2]},"c":{"d":[3,4]}}`},
	} {
		o, err := order.Compile(raw(t, c[0]))
		if err != nil {
			t.Fatal(err)
		}
		if _, err := o.Key(raw(t, c[1])); !mongoerr.Is(err, mongoerr.BadValue) {
			t.Errorf("Key(%s) under %s = %v, want BadValue", c[1], c[0], err)
		}
	}
}

func TestOrderMixedTypes(t *testing.T) {
	docs := []string{
		`{"_id":"maxkey","a":{"$maxKey":1}}`, `{"_id":"regex","a":/x/}`, `{"_id":"ts","a":{"$timestamp":{"t":1,"i":1}}}`,
		`{"_id":"date","a":{"$date":"2020-01-01T00:00:00Z"}}`, `{"_id":"bool","a":true}`, `{"_id":"oid","a":{"$oid":"000000000000000000000001"}}`,
		`{"_id":"bin","a":{"$binary":{"base64":"AA==","subType":"00"}}}`, `{"_id":"obj","a":{"x":1}}`, `{"_id":"str","a":"x"}`,
		`{"_id":"num","a":{"$numberDecimal":"2"}}`, `{"_id":"nan","a":{"$numberDouble":"NaN"}}`, `{"_id":"null","a":null}`, `{"_id":"minkey","a":{"$minKey":1}}`,
	}
	var rs []bson.Raw
	for i := len(docs) - 1; i >= 0; i-- {
		rs = append(rs, raw(t, docs[len(docs)-1-i]))
	}
	got, err := sortIDs(t, `{"a":1}`, rs)
	if err != nil {
		t.Fatal(err)
	}
	want := `"minkey","null","nan","num","str","obj","bin","oid","bool","date","ts","regex","maxkey"`
	if got != want {
		t.Errorf("got %s\nwant %s", got, want)
	}
}

func TestCompileErrors(t *testing.T) {
	var many []string
	for i := 0; i < 33; i++ {
		many = append(many, fmt.Sprintf(`"f%d":1`, i))
	}
	for spec, code := range map[string]mongoerr.Code{
		`{"a":0}`:                           15975,
		`{"a":2}`:                           15975,
		`{"a":"asc"}`:                       15974,
		`{"a":{"$foo":1}}`:                  17312,
		`{"a":{"$meta":"textScore"}}`:       mongoerr.NotImplemented,
		`{"":1}`:                            40352,
		`{"a..b":1}`:                        15998,
		`{"$a":1}`:                          16410,
		"{" + strings.Join(many, ",") + "}": mongoerr.BadValue,
	} {
		if _, err := order.Compile(raw(t, spec)); !mongoerr.Is(err, code) {
			t.Errorf("Compile(%s) = %v, want %d", spec, err, code)
		}
	}
	o, err := order.Compile(raw(t, `{"$natural":-1}`))
	if err != nil {
		t.Fatal(err)
	}
	if d, ok := o.Natural(); !ok || d != -1 {
		t.Errorf("Natural() = %d, %v", d, ok)
	}
}
