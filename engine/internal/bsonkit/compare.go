package bsonkit

import (
	"bytes"
	"encoding/binary"
	"strings"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/x/bsonx/bsoncore"

	"github.com/formworkdb/formwork/engine/internal/collation"
)

// Compare orders a and b as mongod's woCompare does under the simple
// collation, returning -1, 0 or 1. Values of different canonical types
// order by CanonicalType; numbers compare by value across types (see
// CompareNumbers); strings and symbols compare bytewise; documents compare
// element by element, each element by canonical type, then field name, then
// value, the shorter document first when one is a prefix of the other;
// arrays likewise; binData by length, then subtype, then bytes; regexes by
// pattern, then flags; timestamps unsigned; dates signed. Missing (the zero
// RawValue) equals undefined. Both arguments must be valid BSON (I1).
func Compare(a, b bson.RawValue) int { return CompareWith(a, b, nil) }

// CompareWith is Compare under collation c: strings and symbols, also
// inside documents and arrays, compare with c (nil is the simple,
// binary collation); field names and everything else compare as Compare
// does, as mongod's BSONElement comparison with a StringDataComparator.
func CompareWith(a, b bson.RawValue, c *collation.Collator) int {
	ca, cb := CanonicalType(a.Type), CanonicalType(b.Type)
	if ca != cb {
		return cmp3(ca, cb)
	}
	switch a.Type {
	case TypeMissing, bson.TypeUndefined, bson.TypeNull, bson.TypeMinKey, bson.TypeMaxKey:
		return 0
	case bson.TypeDouble, bson.TypeInt32, bson.TypeInt64, bson.TypeDecimal128:
		return CompareNumbers(a, b)
	case bson.TypeString, bson.TypeSymbol:
		if c != nil {
			return c.Compare(stringOf(a), stringOf(b))
		}
		return strings.Compare(stringOf(a), stringOf(b))
	case bson.TypeEmbeddedDocument, bson.TypeArray:
		return CompareDocsWith(a.Value, b.Value, c)
	case bson.TypeBinary:
		la := int32(binary.LittleEndian.Uint32(a.Value))
		lb := int32(binary.LittleEndian.Uint32(b.Value))
		if la != lb {
			return cmp3(int64(la), int64(lb))
		}
		return bytes.Compare(a.Value[4:], b.Value[4:])
	case bson.TypeObjectID:
		return bytes.Compare(a.Value[:12], b.Value[:12])
	case bson.TypeBoolean:
		return cmp3(boolInt(a.Boolean()), boolInt(b.Boolean()))
	case bson.TypeDateTime:
		return cmp3(a.DateTime(), b.DateTime())
	case bson.TypeTimestamp:
		at, ai := a.Timestamp()
		bt, bi := b.Timestamp()
		return cmp3(uint64(at)<<32|uint64(ai), uint64(bt)<<32|uint64(bi))
	case bson.TypeRegex:
		ap, ao := a.Regex()
		bp, bo := b.Regex()
		if c := strings.Compare(ap, bp); c != 0 {
			return c
		}
		return strings.Compare(ao, bo)
	case bson.TypeDBPointer:
		if len(a.Value) != len(b.Value) {
			return cmp3(len(a.Value), len(b.Value))
		}
		return bytes.Compare(a.Value, b.Value)
	case bson.TypeJavaScript:
		return strings.Compare(a.JavaScript(), b.JavaScript())
	case bson.TypeCodeWithScope:
		ac, as := a.CodeWithScope()
		bc, bs := b.CodeWithScope()
		if c := strings.Compare(ac, bc); c != 0 {
			return c
		}
		return CompareDocs(as, bs)
	}
	return bytes.Compare(a.Value, b.Value)
}

func stringOf(v bson.RawValue) string {
	if v.Type == bson.TypeSymbol {
		return v.Symbol()
	}
	return v.StringValue()
}

func boolInt(b bool) int {
	if b {
		return 1
	}
	return 0
}

// CompareDocs orders two documents (or two arrays, given as their document
// bytes) as mongod's BSONObj::woCompare with field names considered.
func CompareDocs(a, b []byte) int { return CompareDocsWith(a, b, nil) }

// CompareDocsWith is CompareDocs with string values compared under c.
func CompareDocsWith(a, b []byte, c *collation.Collator) int {
	ra, rb := body(a), body(b)
	for {
		ea, resta, oka := bsoncore.ReadElement(ra)
		eb, restb, okb := bsoncore.ReadElement(rb)
		switch {
		case !oka && !okb:
			return 0
		case !oka:
			return -1
		case !okb:
			return 1
		}
		va, vb := ea.Value(), eb.Value()
		ta, tb := bson.Type(va.Type), bson.Type(vb.Type)
		if r := cmp3(CanonicalType(ta), CanonicalType(tb)); r != 0 {
			return r
		}
		if r := bytes.Compare(ea.KeyBytes(), eb.KeyBytes()); r != 0 {
			return r
		}
		if r := CompareWith(bson.RawValue{Type: ta, Value: va.Data}, bson.RawValue{Type: tb, Value: vb.Data}, c); r != 0 {
			return r
		}
		ra, rb = resta, restb
	}
}

// Equal reports whether a and b compare equal (Compare(a, b) == 0).
func Equal(a, b bson.RawValue) bool { return Compare(a, b) == 0 }

// EqualWith reports whether a and b compare equal under collation c.
func EqualWith(a, b bson.RawValue, c *collation.Collator) bool { return CompareWith(a, b, c) == 0 }

// body returns the element bytes of a document: without the length prefix
// and the trailing zero. It returns nil for anything shorter than 5 bytes.
func body(doc []byte) []byte {
	if len(doc) < 5 {
		return nil
	}
	return doc[4 : len(doc)-1]
}
