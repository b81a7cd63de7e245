package index

import (
	"bytes"
	"testing"

	"go.mongodb.org/mongo-driver/v2/bson"

	"github.com/formworkdb/formwork/engine/internal/keystring"
)

var fuzzSpecs = []string{
	`{"key": {"a": 1}, "name": "a"}`,
	`{"key": {"a.b": 1, "c": -1}, "name": "abc", "sparse": true}`,
	`{"key": {"a": 1, "a.b": -1}, "name": "aab"}`,
	`{"key": {"a.0.b": 1}, "name": "pos"}`,
	`{"key": {"$**": 1}, "name": "w"}`,
	`{"key": {"a.$**": -1}, "name": "wa"}`,
	`{"key": {"x": 1, "$**": 1}, "name": "cw", "wildcardProjection": {"a": 1, "b.c": 1}}`,
	`{"key": {"a": 1}, "name": "p", "partialFilterExpression": {"b": {"$gte": 1}, "$or": [{"c": null}, {"d": {"$in": [1, "x"]}}]}}`,
}

// FuzzKeys feeds arbitrary bytes as documents to every kind of index: Keys
// must not panic, and every key it returns must decode to its columns.
func FuzzKeys(f *testing.F) {
	for _, s := range []string{
		`{"a": [1, {"b": [2, 3]}, []], "c": {"$numberDecimal": "1E+6000"}, "x": 5}`,
		`{"a": {"b": [{"c": 1}, 2]}, "b": {"c": [[1]]}, "d": "s"}`,
		`{"a": [[{"b": 1}]], "_id": {"$oid": "650000000000000000000001"}}`,
	} {
		var d bson.Raw
		if err := bson.UnmarshalExtJSON([]byte(s), false, &d); err != nil {
			f.Fatal(err)
		}
		f.Add([]byte(d))
	}
	f.Add([]byte{5, 0, 0, 0, 0})
	var ixs []*Index
	for _, s := range fuzzSpecs {
		ixs = append(ixs, mustIndex(f, s))
	}
	f.Fuzz(func(t *testing.T, doc []byte) {
		for _, ix := range ixs {
			keys, _, err := ix.Keys(doc)
			if err != nil {
				continue
			}
			for i, k := range keys {
				if i > 0 && bytes.Compare(keys[i-1], k) >= 0 {
					t.Fatalf("%s: keys not sorted and unique", ix.Spec().Name)
				}
				if _, rest, err := keystring.Decode(k, ix.Columns()); err != nil || len(rest) != 0 {
					t.Fatalf("%s: key %x does not decode: %v", ix.Spec().Name, k, err)
				}
			}
			if len(keys) > 0 {
				_ = ix.DuplicateKeyError("db.c", doc, keys[0])
			}
		}
	})
}
