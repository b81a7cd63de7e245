package schema

import (
	"sort"

	"go.mongodb.org/mongo-driver/v2/bson"

	"github.com/formworkdb/formwork/engine/internal/bsonkit"
)

// maxNormalizeDepth bounds normalize's recursion; deeper values compare
// as they are.
const maxNormalizeDepth = 200

// normalize returns v with the fields of every embedded document sorted
// by name, so that bsonkit.Compare treats documents as mongod's
// unordered-fields comparator does.
func normalize(v bson.RawValue, depth int) bson.RawValue {
	if depth > maxNormalizeDepth || (v.Type != bson.TypeEmbeddedDocument && v.Type != bson.TypeArray) {
		return v
	}
	type field struct {
		key string
		v   bson.RawValue
	}
	var fs []field
	bsonkit.ForEach(v.Value, func(k string, e bson.RawValue) bool {
		fs = append(fs, field{k, normalize(e, depth+1)})
		return true
	})
	if v.Type == bson.TypeEmbeddedDocument {
		sort.SliceStable(fs, func(i, j int) bool { return fs[i].key < fs[j].key })
	}
	out := []byte{0, 0, 0, 0}
	for _, f := range fs {
		out = append(out, byte(f.v.Type))
		out = append(out, f.key...)
		out = append(out, 0)
		out = append(out, f.v.Value...)
	}
	out = append(out, 0)
	n := len(out)
	out[0], out[1], out[2], out[3] = byte(n), byte(n>>8), byte(n>>16), byte(n>>24)
	return bson.RawValue{Type: v.Type, Value: out}
}

// equalUnordered reports whether a and b are equal, documents compared
// without regard to the order of their fields.
func equalUnordered(a, b bson.RawValue) bool {
	return bsonkit.Compare(normalize(a, 0), normalize(b, 0)) == 0
}
