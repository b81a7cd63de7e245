package plan

import (
	"fmt"
	"reflect"
	"sort"
	"testing"

	"go.mongodb.org/mongo-driver/v2/bson"

	"github.com/formworkdb/formwork/engine/internal/index"
)

func wildSpec(t *testing.T, js string) index.Spec {
	t.Helper()
	var raw bson.Raw
	if err := bson.UnmarshalExtJSON([]byte(js), false, &raw); err != nil {
		t.Fatal(err)
	}
	sp, err := index.ParseSpec(raw)
	if err != nil {
		t.Fatal(err)
	}
	return sp
}

func TestWildProjHolds(t *testing.T) {
	cases := []struct {
		spec string
		in   []string
		out  []string
	}{
		{`{"key": {"$**": 1}, "name": "w"}`, []string{"a", "a.b", "b.0"}, []string{"_id", "_id.x"}},
		{`{"key": {"a.$**": 1}, "name": "w"}`, []string{"a", "a.b"}, []string{"b", "ab", "_id"}},
		{`{"key": {"$**": 1}, "name": "w", "wildcardProjection": {"a.b": 1, "c": 1}}`, []string{"a.b", "a.b.c", "c.d"}, []string{"a", "a.c", "b"}},
		{`{"key": {"$**": 1}, "name": "w", "wildcardProjection": {"a.b": 0}}`, []string{"a.c", "b"}, []string{"a", "a.b", "a.b.c", "_id"}},
		{`{"key": {"$**": 1}, "name": "w", "wildcardProjection": {"_id": 1, "a": 1}}`, []string{"_id", "a.x"}, []string{"b"}},
	}
	for _, c := range cases {
		p := newWildProj(wildSpec(t, c.spec))
		for _, path := range c.in {
			if !p.holds(path) {
				t.Errorf("%s: holds(%q) = false", c.spec, path)
			}
		}
		for _, path := range c.out {
			if p.holds(path) {
				t.Errorf("%s: holds(%q) = true", c.spec, path)
			}
		}
	}
}

func TestWildMultikey(t *testing.T) {
	all := newWildProj(index.Spec{Fields: []index.Field{{Wildcard: true}}})
	under := &wildProj{paths: []string{"a.b"}}
	cases := []struct {
		path   string
		arrays []string
		proj   *wildProj
		mk     []int
		arrIdx []int
	}{
		{"a.b", nil, all, nil, nil},
		{"a.b", []string{"a"}, all, []int{0}, nil},
		{"a.0.b", []string{"a"}, all, []int{0}, []int{1}},
		{"a.0.b", []string{"a", "a.b"}, all, []int{0, 2}, []int{1}},
		{"a.0.b.1", []string{"a", "a.b"}, all, []int{0, 2}, []int{1, 3}},
		{"a.01", []string{"a"}, all, []int{0}, nil},
		{"a.b.c", nil, under, []int{0}, nil}, // "a" is not held: assumed multikey
	}
	for _, c := range cases {
		set := map[string]bool{}
		for _, a := range c.arrays {
			set[a] = true
		}
		mk := wildMultikey(c.path, set, c.proj)
		idx := arrayIndexes(splitPath(c.path), mk)
		if fmt.Sprint(mk) != fmt.Sprint(c.mk) || fmt.Sprint(idx) != fmt.Sprint(c.arrIdx) {
			t.Errorf("%s with arrays %v: multikey %v positions %v, want %v %v", c.path, c.arrays, mk, idx, c.mk, c.arrIdx)
		}
	}
}

func splitPath(p string) []string {
	var out []string
	cur := ""
	for i := 0; i < len(p); i++ {
		if p[i] == '.' {
			out, cur = append(out, cur), ""
			continue
		}
		cur += string(p[i])
	}
	return append(out, cur)
}

func TestWildPathOK(t *testing.T) {
	all := &wildProj{exclusion: true}
	cases := []struct {
		path string
		idx  []int
		proj *wildProj
		ok   bool
	}{
		{"a.0.b", []int{1}, all, true},
		{"a.0.1", []int{1}, all, false},                               // successive positions
		{"a.0.b", []int{1}, &wildProj{paths: []string{"a.0"}}, false}, // projection through a position
		{"a.0.b", []int{1}, &wildProj{paths: []string{"a"}}, true},
		{"a.1.b.2.c.3.d.4.e.5.f.6.g.7.h.8.i", []int{1, 3, 5, 7, 9, 11, 13, 15, 17}, all, false},
	}
	for _, c := range cases {
		if got := wildPathOK(splitPath(c.path), c.idx, c.proj); got != c.ok {
			t.Errorf("wildPathOK(%s, %v) = %v", c.path, c.idx, got)
		}
	}
}

func TestWildVariantsAndPathBounds(t *testing.T) {
	w := &wildEntry{path: "a.0.b.1.c", arrayIdx: []int{1, 3}}
	var got []string
	for p := range w.variants() {
		got = append(got, p)
	}
	sort.Strings(got)
	want := []string{"a", "a.0.b", "a.0.b.1.c", "a.0.b.c", "a.b", "a.b.1.c", "a.b.c"}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("variants = %v, want %v", got, want)
	}
	o, dedup := (&wildEntry{path: "a.b"}).pathBounds(oil{point(stringVal("x"))})
	if fmt.Sprint(o) != `[["a.b", "a.b"]]` || dedup {
		t.Errorf("point bounds = %v dedup %v", o, dedup)
	}
	o, dedup = (&wildEntry{path: "a.b"}).pathBounds(oil{allValues})
	if fmt.Sprint(o) != `[["a.b", "a.b"] ["a.b.", "a.b/")]` || !dedup {
		t.Errorf("subpath bounds = %v dedup %v", o, dedup)
	}
	// With subpaths, a path under another's range is dropped.
	o, _ = (&wildEntry{path: "a.0", arrayIdx: []int{1}}).pathBounds(oil{allValues})
	if fmt.Sprint(o) != `[["a", "a"] ["a.", "a/")]` {
		t.Errorf("positional subpath bounds = %v", o)
	}
}

func TestOverlapsObjects(t *testing.T) {
	cases := []struct {
		o    oil
		want bool
	}{
		{oil{allValues}, true},
		{oil{point(emptyDocVal)}, false},
		{oil{point(emptyArrVal)}, false},
		{oil{{lo: stringVal("a"), hi: emptyDocVal, loInc: true}}, false},
		{oil{{lo: emptyDocVal, hi: emptyArrVal, loInc: true}}, true},
		{oil{arrayBracket}, false},
		{oil{point(nullVal), {lo: doubleVal(1), hi: maxKey, hiInc: true}}, true},
	}
	for _, c := range cases {
		if got := overlapsObjects(c.o); got != c.want {
			t.Errorf("overlapsObjects(%v) = %v", c.o, got)
		}
	}
}

func TestWildSupports(t *testing.T) {
	cases := map[string]bool{
		`{"a": 1}`:                   true,
		`{"a": null}`:                false,
		`{"a": {}}`:                  true,
		`{"a": {"b": 1}}`:            false,
		`{"a": []}`:                  true,
		`{"a": [1]}`:                 false,
		`{"a": {"$lte": {}}}`:        true,
		`{"a": {"$gte": {}}}`:        false,
		`{"a": {"$gte": null}}`:      false,
		`{"a": {"$in": [1, null]}}`:  false,
		`{"a": {"$in": [1, "x"]}}`:   true,
		`{"a": {"$ne": null}}`:       true,
		`{"a": {"$ne": 1}}`:          false,
		`{"a": {"$nin": [1]}}`:       false,
		`{"a": {"$exists": true}}`:   true,
		`{"a": {"$exists": false}}`:  false,
		`{"a": {"$type": "object"}}`: true,
		`{"a": {"$regularExpression": {"pattern": "^x", "options": ""}}}`: true,
		`{"a": {"$elemMatch": {"$gt": 1}}}`:                               true,
		`{"a": {"$elemMatch": {"$eq": null}}}`:                            false,
	}
	for js, want := range cases {
		var raw bson.Raw
		if err := bson.UnmarshalExtJSON([]byte(js), false, &raw); err != nil {
			t.Fatal(err)
		}
		p := parseFilter(raw)
		if got := wildSupports(p, false); got != want {
			t.Errorf("wildSupports(%s) = %v, want %v", js, got, want)
		}
	}
	ne := parseFilter(bson.Raw(mustMarshal(t, bson.D{{Key: "a", Value: bson.D{{Key: "$ne", Value: nil}}}})))
	if wildSupports(ne, true) {
		t.Error("{$ne: null} on a multikey path is supported")
	}
}

func mustMarshal(t *testing.T, v any) []byte {
	t.Helper()
	b, err := bson.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return b
}
