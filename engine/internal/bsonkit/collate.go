package bsonkit

import (
	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/x/bsonx/bsoncore"

	"github.com/formworkdb/formwork/engine/internal/collation"
)

// maxCollateDepth bounds the nesting CollationKeyed rewrites; deeper
// values are kept as they are.
const maxCollateDepth = 200

// CollationKeyed returns v with every string and symbol, also inside
// documents and arrays, replaced by its sort key under c, as mongod's
// CollationIndexKey translates index keys: Compare on the results orders
// the originals as CompareWith(…, c) does. A nil c returns v unchanged.
// The result does not alias v when anything changed.
func CollationKeyed(v bson.RawValue, c *collation.Collator) bson.RawValue {
	if c == nil || !hasString(v, 0) {
		return v
	}
	return collationKeyed(v, c, 0)
}

func hasString(v bson.RawValue, depth int) bool {
	switch v.Type {
	case bson.TypeString, bson.TypeSymbol:
		return true
	case bson.TypeEmbeddedDocument, bson.TypeArray:
		if depth > maxCollateDepth {
			return false
		}
		found := false
		ForEach(v.Value, func(_ string, e bson.RawValue) bool {
			found = hasString(e, depth+1)
			return !found
		})
		return found
	}
	return false
}

func collationKeyed(v bson.RawValue, c *collation.Collator, depth int) bson.RawValue {
	switch v.Type {
	case bson.TypeString, bson.TypeSymbol:
		return bson.RawValue{Type: v.Type, Value: bsoncore.AppendString(nil, string(c.Key(stringOf(v))))}
	case bson.TypeEmbeddedDocument, bson.TypeArray:
		if depth > maxCollateDepth {
			return v
		}
		idx, out := bsoncore.AppendDocumentStart(nil)
		ForEach(v.Value, func(k string, e bson.RawValue) bool {
			e = collationKeyed(e, c, depth+1)
			out = bsoncore.AppendHeader(out, bsoncore.Type(e.Type), k)
			out = append(out, e.Value...)
			return true
		})
		out, _ = bsoncore.AppendDocumentEnd(out, idx)
		return bson.RawValue{Type: v.Type, Value: out}
	}
	return v
}
