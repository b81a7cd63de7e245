package expr

import (
	"bytes"
	"encoding/binary"

	"go.mongodb.org/mongo-driver/v2/bson"
)

// lookupField returns the first element of the document (or array) bytes
// doc named name, without allocating; ok is false when there is none or
// the bytes are malformed. It is the hot step of every field path.
func lookupField(doc []byte, name string) (v bson.RawValue, ok bool) {
	if len(doc) < 5 {
		return bson.RawValue{}, false
	}
	end := len(doc) - 1
	i := 4
	for i < end {
		t := doc[i]
		i++
		// Keys are short: a plain scan beats a call to IndexByte.
		k := i
		for i < end && doc[i] != 0 {
			i++
		}
		if i >= end {
			return bson.RawValue{}, false
		}
		match := i-k == len(name) && string(doc[k:i]) == name
		i++
		n := valueLen(t, doc[i:end])
		if n < 0 {
			return bson.RawValue{}, false
		}
		if match {
			return bson.RawValue{Type: bson.Type(t), Value: doc[i : i+n]}, true
		}
		i += n
	}
	return bson.RawValue{}, false
}

// valueLen returns the length of a value of type t at the start of b, or
// -1 when b is too short or t unknown.
func valueLen(t byte, b []byte) int {
	n := -1
	switch bson.Type(t) {
	case bson.TypeNull, bson.TypeUndefined, bson.TypeMinKey, bson.TypeMaxKey:
		n = 0
	case bson.TypeBoolean:
		n = 1
	case bson.TypeInt32:
		n = 4
	case bson.TypeDouble, bson.TypeInt64, bson.TypeDateTime, bson.TypeTimestamp:
		n = 8
	case bson.TypeObjectID:
		n = 12
	case bson.TypeDecimal128:
		n = 16
	case bson.TypeString, bson.TypeJavaScript, bson.TypeSymbol:
		if len(b) >= 4 {
			n = 4 + int(int32(binary.LittleEndian.Uint32(b)))
		}
	case bson.TypeEmbeddedDocument, bson.TypeArray, bson.TypeCodeWithScope:
		if len(b) >= 4 {
			n = int(int32(binary.LittleEndian.Uint32(b)))
		}
	case bson.TypeBinary:
		if len(b) >= 4 {
			n = 5 + int(int32(binary.LittleEndian.Uint32(b)))
		}
	case bson.TypeDBPointer:
		if len(b) >= 4 {
			n = 16 + int(int32(binary.LittleEndian.Uint32(b)))
		}
	case bson.TypeRegex:
		p := bytes.IndexByte(b, 0)
		if p >= 0 {
			q := bytes.IndexByte(b[p+1:], 0)
			if q >= 0 {
				n = p + q + 2
			}
		}
	}
	if n < 0 || n > len(b) {
		return -1
	}
	return n
}
