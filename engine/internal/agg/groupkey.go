package agg

import (
	"encoding/binary"
	"math"
	"math/big"

	"go.mongodb.org/mongo-driver/v2/bson"

	"github.com/formworkdb/formwork/engine/internal/bsonkit"
	"github.com/formworkdb/formwork/engine/internal/collation"
)

// maxKeyDepth bounds the nesting keyOf follows; BSON nesting is already
// bounded by the document size, this keeps the stack small.
const maxKeyDepth = 200

// keyOf encodes v so that two values get the same bytes exactly when they
// compare equal in BSON order: 1, 1.0, NumberLong(1) and
// NumberDecimal("1.0") are one key; documents compare field names and
// values in order. $group, $addToSet, $bucket and the set logic use it.
func keyOf(v bson.RawValue) string {
	return string(appendKey(nil, v, 0))
}

func appendKey(b []byte, v bson.RawValue, depth int) []byte { return appendKeyWith(b, v, depth, nil) }

// keyOfWith is keyOf with strings encoded by their sort key under coll,
// so values equal under the collation share a key (nil: simple).
func keyOfWith(v bson.RawValue, coll *collation.Collator) string {
	return string(appendKeyWith(nil, v, 0, coll))
}

// appendKeyWith appends v's key, strings by their sort key under coll.
func appendKeyWith(b []byte, v bson.RawValue, depth int, coll *collation.Collator) []byte {
	if v.Type == 0 {
		v = bson.RawValue{Type: bson.TypeNull}
	}
	b = append(b, byte(bsonkit.CanonicalType(v.Type)+64))
	if depth > maxKeyDepth {
		return append(b, v.Value...)
	}
	switch v.Type {
	case bson.TypeNull, bson.TypeUndefined, bson.TypeMinKey, bson.TypeMaxKey:
		return b
	case bson.TypeInt32, bson.TypeInt64, bson.TypeDouble, bson.TypeDecimal128:
		return appendNumKey(b, v)
	case bson.TypeString, bson.TypeSymbol:
		s, _ := v.StringValueOK()
		if v.Type == bson.TypeSymbol {
			s = v.Symbol()
		}
		if coll != nil {
			k := coll.Key(s)
			b = binary.AppendUvarint(b, uint64(len(k)))
			return append(b, k...)
		}
		b = binary.AppendUvarint(b, uint64(len(s)))
		return append(b, s...)
	case bson.TypeEmbeddedDocument:
		for _, el := range mustElems(v.Document()) {
			k := el.Key()
			b = binary.AppendUvarint(b, uint64(len(k))+1)
			b = append(b, k...)
			b = appendKeyWith(b, el.Value(), depth+1, coll)
		}
		return append(b, 0)
	case bson.TypeArray:
		vals, _ := v.Array().Values()
		for _, el := range vals {
			b = append(b, 1)
			b = appendKeyWith(b, el, depth+1, coll)
		}
		return append(b, 0)
	}
	// Other types compare by their bytes within their type.
	b = append(b, byte(v.Type))
	b = binary.AppendUvarint(b, uint64(len(v.Value)))
	return append(b, v.Value...)
}

// appendNumKey encodes a number by value: an integral value in int64
// range as the integer, any other finite value as its exact rational,
// NaN and the infinities as markers.
func appendNumKey(b []byte, v bson.RawValue) []byte {
	if i, ok := bsonkit.ExactInt64(v); ok {
		b = append(b, 'i')
		return binary.AppendVarint(b, i)
	}
	if v.Type == bson.TypeDouble {
		f := v.Double()
		switch {
		case math.IsNaN(f):
			return append(b, 'n')
		case math.IsInf(f, 1):
			return append(b, '+')
		case math.IsInf(f, -1):
			return append(b, '-')
		}
		r := new(big.Rat)
		r.SetFloat64(f)
		return append(append(b, 'r'), r.RatString()...)
	}
	if v.Type == bson.TypeDecimal128 {
		s := v.Decimal128().String()
		switch s {
		case "NaN", "-NaN":
			return append(b, 'n')
		case "Infinity", "Inf":
			return append(b, '+')
		case "-Infinity", "-Inf":
			return append(b, '-')
		}
		r, ok := new(big.Rat).SetString(s)
		if ok {
			if r.IsInt() && r.Num().IsInt64() {
				return binary.AppendVarint(append(b, 'i'), r.Num().Int64())
			}
			return append(append(b, 'r'), r.RatString()...)
		}
		return append(append(b, 'd'), s...)
	}
	f, _ := bsonkit.Float64(v)
	r := new(big.Rat)
	r.SetFloat64(f)
	return append(append(b, 'r'), r.RatString()...)
}
