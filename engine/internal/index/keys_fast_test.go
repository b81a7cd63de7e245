package index

import (
	"bytes"
	"reflect"
	"testing"
)

// TestKeysSingleFieldFastPath checks that the single-field shortcut of
// KeysValidated answers exactly what the general key generation answers,
// for values, missing fields, nested paths, arrays on the path and sparse
// indexes.
func TestKeysSingleFieldFastPath(t *testing.T) {
	specs := []string{
		`{"key": {"a": 1}, "name": "a_1"}`,
		`{"key": {"a": -1}, "name": "a_-1"}`,
		`{"key": {"a": 1}, "name": "a_1", "sparse": true}`,
		`{"key": {"a.b": 1}, "name": "a.b_1"}`,
		`{"key": {"a.b": 1}, "name": "a.b_1", "sparse": true}`,
		`{"key": {"a.0": 1}, "name": "a.0_1"}`,
		`{"key": {"_id": 1}, "name": "_id_"}`,
		`{"key": {"a": 1}, "name": "a_1", "collation": {"locale": "en", "strength": 2}}`,
	}
	docs := []string{
		`{"_id": 1, "a": 5}`,
		`{"_id": "x"}`,
		`{"_id": {"k": 1}, "a": null}`,
		`{"a": "Hello"}`,
		`{"a": {"b": 2}}`,
		`{"a": {"b": [1, 2]}}`,
		`{"a": {"b": []}}`,
		`{"a": [1, 2, 2]}`,
		`{"a": []}`,
		`{"a": [{"b": 1}, {"b": 3}]}`,
		`{"a": 3, "b": {"c": 1}}`,
		`{"a": {"c": 1}}`,
		`{"a": {"b": {"c": [1]}}}`,
	}
	for _, sp := range specs {
		ix := mustIndex(t, sp)
		for _, ds := range docs {
			doc := ej(t, ds)
			got, gmk, gerr := ix.KeysValidated(doc)
			want, wmk, werr := ix.keysFromTuples(doc)
			if (gerr == nil) != (werr == nil) || len(got) != len(want) || !reflect.DeepEqual(gmk, wmk) {
				t.Fatalf("%s %s: got %x %v %v, want %x %v %v", sp, ds, got, gmk, gerr, want, wmk, werr)
			}
			for i := range got {
				if !bytes.Equal(got[i], want[i]) {
					t.Fatalf("%s %s: key %d %x, want %x", sp, ds, i, got[i], want[i])
				}
			}
		}
	}
}
