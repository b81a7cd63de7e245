package index

import (
	"reflect"
	"sort"
	"strings"
	"testing"

	"go.mongodb.org/mongo-driver/v2/bson"

	"github.com/formworkdb/formwork/engine/internal/keystring"
	"github.com/formworkdb/formwork/engine/internal/mongoerr"
)

// ej parses relaxed Extended JSON into a document.
func ej(t testing.TB, s string) bson.Raw {
	t.Helper()
	var d bson.Raw
	if err := bson.UnmarshalExtJSON([]byte(s), false, &d); err != nil {
		t.Fatalf("%s: %v", s, err)
	}
	return d
}

func mustIndex(t testing.TB, spec string) *Index {
	t.Helper()
	s, err := ParseSpec(ej(t, spec))
	if err != nil {
		t.Fatalf("ParseSpec(%s): %v", spec, err)
	}
	ix, err := Compile(s)
	if err != nil {
		t.Fatalf("Compile(%s): %v", spec, err)
	}
	return ix
}

// keyStrings decodes keys into mongod-style strings for comparison.
func keyStrings(t testing.TB, ix *Index, keys [][]byte) []string {
	t.Helper()
	var out []string
	for _, k := range keys {
		vals, rest, err := keystring.Decode(k, ix.Columns())
		if err != nil || len(rest) != 0 {
			t.Fatalf("Decode(%x) = %v, %x, %v", k, vals, rest, err)
		}
		var parts []string
		for _, v := range vals {
			parts = append(parts, formatValue(v))
		}
		out = append(out, strings.Join(parts, ", "))
	}
	sort.Strings(out)
	return out
}

// TestKeysBtree follows mongod's btree_key_generator_test cases.
func TestKeysBtree(t *testing.T) {
	tests := []struct {
		key, doc string
		sparse   bool
		want     []string
		mk       [][]int
	}{
		{`{"a": 1}`, `{"a": 5}`, false, []string{"5"}, [][]int{nil}},
		{`{"a": 1}`, `{"b": 1}`, false, []string{"null"}, [][]int{nil}},
		{`{"a": 1}`, `{"b": 1}`, true, nil, [][]int{nil}},
		{`{"a": 1, "b": -1, "c": 1}`, `{"a": 1, "b": 2, "c": 3}`, false, []string{"1, 2, 3"}, [][]int{nil, nil, nil}},
		{`{"a": 1}`, `{"a": [1, 2]}`, false, []string{"1", "2"}, [][]int{{0}}},
		{`{"a": 1}`, `{"a": [1]}`, false, []string{"1"}, [][]int{nil}},
		{`{"a": 1}`, `{"a": []}`, false, []string{"undefined"}, [][]int{nil}},
		{`{"a": 1}`, `{"a": [[1, 2], [3, 4]]}`, false, []string{"[ 1, 2 ]", "[ 3, 4 ]"}, [][]int{{0}}},
		{`{"a": 1}`, `{"a": [1, 1.0, {"$numberLong": "1"}]}`, false, []string{"1"}, [][]int{{0}}},
		{`{"a.b": 1}`, `{"a": [{"foo": 41}, {"b": 1}, {"b": 2}]}`, false, []string{"1", "2", "null"}, [][]int{{0}}},
		{`{"a.b": 1}`, `{"a": [1, 2]}`, false, []string{"null"}, [][]int{{0}}},
		{`{"a.b": 1}`, `{"a": []}`, false, []string{"null"}, [][]int{nil}},
		{`{"a.b": 1}`, `{"a": []}`, true, nil, [][]int{nil}},
		{`{"a.b": 1}`, `{"a": [1, {"b": 1}]}`, true, []string{"1"}, [][]int{{0}}},
		{`{"a.b": 1}`, `{"a": [{"b": 1}, {"b": [1, 2, 3]}]}`, false, []string{"1", "2", "3"}, [][]int{{0, 1}}},
		{`{"a.b": 1}`, `{"a": [{"b": [2]}]}`, false, []string{"2"}, [][]int{nil}},
		{`{"a.b": 1, "a.c": 1}`, `{"a": [{"b": 1}, {"c": 2}]}`, false, []string{"1, null", "null, 2"}, [][]int{{0}, {0}}},
		{`{"a": 1, "a.b": 1}`, `{"a": [1, {"b": [2, 3, 4]}]}`, false, []string{"1, null", "{ b: [ 2, 3, 4 ] }, 2", "{ b: [ 2, 3, 4 ] }, 3", "{ b: [ 2, 3, 4 ] }, 4"}, [][]int{{0}, {0, 1}}},
		{`{"a": 1, "a.b": 1}`, `{"a": []}`, false, []string{"undefined, null"}, [][]int{nil, nil}},
		{`{"a.b.c": 1}`, `{"a": [1, 2, {"b": {"c": [3, 4]}}]}`, false, []string{"3", "4", "null"}, [][]int{{0, 2}}},
		{`{"a.0": 1}`, `{"a": [1]}`, false, []string{"1"}, [][]int{nil}},
		{`{"a.0": 1}`, `{"a": [[1]]}`, false, []string{"[ 1 ]"}, [][]int{nil}},
		{`{"a.0": 1}`, `{"a": [[]]}`, false, []string{"undefined"}, [][]int{nil}},
		{`{"a.0": 1}`, `{"a": {"0": 1}}`, false, []string{"1"}, [][]int{nil}},
		{`{"a.0.b": 1}`, `{"a": [[{"b": 1}]]}`, false, []string{"1"}, [][]int{nil}},
		{`{"a.0.0.b": 1}`, `{"a": [[{"b": [1, 2, 3]}]]}`, false, []string{"1", "2", "3"}, [][]int{{3}}},
		{`{"a.2": 1}`, `{"a": [{"2": 5}]}`, false, []string{"5"}, [][]int{nil}},
		{`{"a.2": 1}`, `{"a": [[1, 2, 5]]}`, false, []string{"null"}, [][]int{nil}},
		{`{"a.2": 1}`, `{"a": [[1, 2, 5], [3, 4, 6], [0, 1, 2]]}`, false, []string{"[ 0, 1, 2 ]"}, [][]int{nil}},
		{`{"a.2": 1}`, `{"a": [[1, 2, 5], {"2": 6}]}`, false, []string{"6", "null"}, [][]int{{0}}},
		{`{"a": 1, "b": 1}`, `{"a": 1, "b": [1, 2]}`, false, []string{"1, 1", "1, 2"}, [][]int{nil, {0}}},
	}
	for _, tt := range tests {
		spec := `{"key": ` + tt.key + `, "name": "x"`
		if tt.sparse {
			spec += `, "sparse": true`
		}
		ix := mustIndex(t, spec+`}`)
		keys, mk, err := ix.Keys(ej(t, tt.doc))
		if err != nil {
			t.Errorf("%s on %s: %v", tt.key, tt.doc, err)
			continue
		}
		if got := keyStrings(t, ix, keys); !reflect.DeepEqual(got, tt.want) {
			t.Errorf("%s sparse=%v on %s: keys %q, want %q", tt.key, tt.sparse, tt.doc, got, tt.want)
		}
		if !reflect.DeepEqual(mk.Paths, tt.mk) {
			t.Errorf("%s on %s: multikey %v, want %v", tt.key, tt.doc, mk.Paths, tt.mk)
		}
	}
}

func TestKeysErrors(t *testing.T) {
	tests := []struct {
		key, doc string
		code     mongoerr.Code
		msg      string
	}{
		{`{"a": 1, "b": 1}`, `{"a": [1, 2], "b": [1, 2]}`, mongoerr.CannotIndexParallelArrays, "cannot index parallel arrays [b] [a]"},
		{`{"a": 1, "b": 1}`, `{"a": [], "b": []}`, mongoerr.CannotIndexParallelArrays, ""},
		{`{"a.b": 1, "a.c": 1}`, `{"a": [{"b": [1], "c": [2]}]}`, mongoerr.CannotIndexParallelArrays, ""},
		{`{"a.a": 1, "b.a": 1}`, `{"a": {"a": [1]}, "b": {"a": [1]}}`, mongoerr.CannotIndexParallelArrays, ""},
		{`{"a": 1, "b.0": 1}`, `{"a": [1], "b": [2]}`, mongoerr.CannotIndexParallelArrays, ""},
		{`{"a.0": 1}`, `{"a": [{"0": 1}]}`, mongoerr.Code(16746), ""},
		{`{"a.0": 1}`, `{"a": [1, {"0": 2}]}`, mongoerr.Code(16746), ""},
	}
	for _, tt := range tests {
		ix := mustIndex(t, `{"key": `+tt.key+`, "name": "x"}`)
		_, _, err := ix.Keys(ej(t, tt.doc))
		if !mongoerr.Is(err, tt.code) {
			t.Errorf("%s on %s: err %v, want code %d", tt.key, tt.doc, err, tt.code)
			continue
		}
		if tt.msg != "" && mongoerr.As(err).Msg != tt.msg {
			t.Errorf("%s on %s: msg %q, want %q", tt.key, tt.doc, mongoerr.As(err).Msg, tt.msg)
		}
	}
}

// TestKeysWildcard follows mongod's wildcard key generator golden cases.
func TestKeysWildcard(t *testing.T) {
	tests := []struct {
		spec, doc string
		want      []string
		arrays    []string
	}{
		{`{"key": {"$**": 1}, "name": "w"}`, `{"a": 1, "b": "hello", "c": true}`, []string{`"a", 1`, `"b", "hello"`, `"c", true`}, nil},
		{`{"key": {"$**": 1}, "name": "w"}`, `{"a": {"b": 1, "c": 2}}`, []string{`"a.b", 1`, `"a.c", 2`}, nil},
		{`{"key": {"$**": 1}, "name": "w"}`, `{"a": [1, 2, 3]}`, []string{`"a", 1`, `"a", 2`, `"a", 3`}, []string{"a"}},
		{`{"key": {"$**": 1}, "name": "w"}`, `{}`, nil, nil},
		{`{"key": {"$**": 1}, "name": "w"}`, `{"a": {}}`, []string{`"a", {}`}, nil},
		{`{"key": {"$**": 1}, "name": "w"}`, `{"a": []}`, []string{`"a", undefined`}, []string{"a"}},
		{`{"key": {"$**": 1}, "name": "w"}`, `{"a": [[1, 2], [3, 4]]}`, []string{`"a", [ 1, 2 ]`, `"a", [ 3, 4 ]`}, []string{"a"}},
		{`{"key": {"$**": 1}, "name": "w"}`, `{"a": [{"b": [1, 2]}, {"b": [3, 4]}]}`, []string{`"a.b", 1`, `"a.b", 2`, `"a.b", 3`, `"a.b", 4`}, []string{"a", "a.b"}},
		{`{"key": {"$**": 1}, "name": "w"}`, `{"_id": 1, "a": 2}`, []string{`"a", 2`}, nil},
		{`{"key": {"a.$**": 1}, "name": "w"}`, `{"a": {"x": 1, "y": 2}, "b": 3}`, []string{`"a.x", 1`, `"a.y", 2`}, nil},
		{`{"key": {"$**": 1}, "name": "w", "wildcardProjection": {"a": 1, "b": 1}}`, `{"a": 1, "b": 2, "c": 3}`, []string{`"a", 1`, `"b", 2`}, nil},
		{`{"key": {"$**": 1}, "name": "w", "wildcardProjection": {"a": 0, "b": 0}}`, `{"a": 1, "b": 2, "c": 3, "d": 4}`, []string{`"c", 3`, `"d", 4`}, nil},
		{`{"key": {"$**": 1}, "name": "w", "wildcardProjection": {"_id": 1, "a": 1}}`, `{"_id": 7, "a": 1, "b": 2}`, []string{`"_id", 7`, `"a", 1`}, nil},
		{`{"key": {"a": 1, "$**": 1}, "name": "w", "wildcardProjection": {"b": 1}}`, `{"a": 5, "b": {"c": 1}}`, []string{`5, "b.c", 1`}, nil},
		{`{"key": {"a": 1, "$**": 1}, "name": "w", "wildcardProjection": {"b": 1}}`, `{"a": 5}`, []string{`5, MinKey, MinKey`}, nil},
	}
	for _, tt := range tests {
		ix := mustIndex(t, tt.spec)
		keys, mk, err := ix.Keys(ej(t, tt.doc))
		if err != nil {
			t.Errorf("%s on %s: %v", tt.spec, tt.doc, err)
			continue
		}
		if got := keyStrings(t, ix, keys); !reflect.DeepEqual(got, tt.want) {
			t.Errorf("%s on %s: keys %q, want %q", tt.spec, tt.doc, got, tt.want)
		}
		if !reflect.DeepEqual(mk.Wildcard, tt.arrays) {
			t.Errorf("%s on %s: multikey %q, want %q", tt.spec, tt.doc, mk.Wildcard, tt.arrays)
		}
	}
}

func TestKeysPartial(t *testing.T) {
	ix := mustIndex(t, `{"key": {"a": 1}, "name": "p", "partialFilterExpression": {"b": {"$gt": 5}, "c": {"$exists": true}}}`)
	tests := []struct {
		doc  string
		want int
	}{
		{`{"a": 1, "b": 6, "c": null}`, 1},
		{`{"a": 1, "b": 5, "c": 1}`, 0},
		{`{"a": 1, "b": "z", "c": 1}`, 0},
		{`{"a": 1, "b": [1, 7], "c": 1}`, 1},
		{`{"a": 1, "b": 6}`, 0},
	}
	for _, tt := range tests {
		keys, _, err := ix.Keys(ej(t, tt.doc))
		if err != nil || len(keys) != tt.want {
			t.Errorf("partial on %s: %d keys, %v; want %d", tt.doc, len(keys), err, tt.want)
		}
	}
	or := mustIndex(t, `{"key": {"a": 1}, "name": "p", "partialFilterExpression": {"$or": [{"s": {"$in": ["x", {"$regularExpression": {"pattern": "^y", "options": ""}}]}}, {"t": {"$type": "number"}}, {"n": null}]}}`)
	for doc, want := range map[string]int{
		`{"s": "x", "n": 1}`: 1, `{"s": "yes", "n": 1}`: 1, `{"s": "no", "n": 1}`: 0,
		`{"t": 1.5, "n": 1}`: 1, `{"t": "1", "n": 1}`: 0, `{"s": "no"}`: 1,
	} {
		keys, _, err := or.Keys(ej(t, doc))
		if err != nil || len(keys) != want {
			t.Errorf("partial $or on %s: %d keys, %v; want %d", doc, len(keys), err, want)
		}
	}
}

func TestUniqueEqualNumbers(t *testing.T) {
	ix := mustIndex(t, `{"key": {"a": 1}, "name": "a_1", "unique": true}`)
	k1, _, _ := ix.Keys(ej(t, `{"a": 1}`))
	k2, _, _ := ix.Keys(ej(t, `{"a": 1.0}`))
	k3, _, _ := ix.Keys(ej(t, `{"a": {"$numberDecimal": "1.00"}}`))
	if !reflect.DeepEqual(k1, k2) || !reflect.DeepEqual(k1, k3) {
		t.Errorf("1, 1.0, 1.00 give different keys: %x %x %x", k1, k2, k3)
	}
}

func TestDuplicateKeyError(t *testing.T) {
	ix := mustIndex(t, `{"key": {"name": 1, "tags": -1}, "name": "name_1_tags_-1", "unique": true}`)
	doc := ej(t, `{"_id": 1, "name": "x", "tags": [2.5, "b"]}`)
	keys, _, err := ix.Keys(doc)
	if err != nil || len(keys) != 2 {
		t.Fatalf("Keys: %v, %v", keys, err)
	}
	e := ix.DuplicateKeyError("db.coll", doc, keys[0])
	want := `E11000 duplicate key error collection: db.coll index: name_1_tags_-1 dup key: { name: "x", tags: "b" }`
	if e.Code != mongoerr.DuplicateKey || e.Msg != want {
		t.Errorf("got %d %q, want %q", e.Code, e.Msg, want)
	}
	if len(e.Extra) != 2 || e.Extra[0].Key != "keyPattern" || e.Extra[1].Key != "keyValue" {
		t.Errorf("extra = %v", e.Extra)
	}
	// A key from another document is decoded.
	other := ix.KeyValue(ej(t, `{}`), keys[1])
	if got := formatDoc(other); got != `{ name: "x", tags: 2.5 }` {
		t.Errorf("decoded keyValue = %s", got)
	}
	id := mustIndex(t, `{"key": {"_id": 1}, "name": "_id_"}`)
	d := ej(t, `{"_id": {"$oid": "650000000000000000000001"}}`)
	k, _, _ := id.Keys(d)
	if got := id.DuplicateKeyError("test.c", d, k[0]).Msg; got != `E11000 duplicate key error collection: test.c index: _id_ dup key: { _id: ObjectId('650000000000000000000001') }` {
		t.Errorf("_id dup = %s", got)
	}
	missing := mustIndex(t, `{"key": {"a": 1}, "name": "a_1", "unique": true}`)
	k, _, _ = missing.Keys(ej(t, `{}`))
	if got := formatDoc(missing.KeyValue(ej(t, `{}`), k[0])); got != `{ a: null }` {
		t.Errorf("missing keyValue = %s", got)
	}
}
