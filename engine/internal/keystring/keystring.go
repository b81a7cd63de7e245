package keystring

import (
	"encoding/binary"
	"math"

	"go.mongodb.org/mongo-driver/v2/bson"
)

// Value tags: the first byte of every encoded value (I2). Tags of one
// canonical type bracket sit together, and brackets are in MongoDB's type
// order, so comparing tags compares canonical types first.
const (
	tagMinKey    byte = 0x0A
	tagUndefined byte = 0x14
	tagNull      byte = 0x15
	tagNaN       byte = 0x1E
	tagNegInf    byte = 0x1F
	tagNeg       byte = 0x20
	tagZero      byte = 0x21
	tagPos       byte = 0x22
	tagPosInf    byte = 0x23
	tagString    byte = 0x28
	tagObject    byte = 0x32
	tagArray     byte = 0x3C
	tagBinary    byte = 0x46
	tagObjectID  byte = 0x50
	tagFalse     byte = 0x5A
	tagTrue      byte = 0x5B
	tagDate      byte = 0x64
	tagTimestamp byte = 0x6E
	tagRegex     byte = 0x78
	tagDBPointer byte = 0x82
	tagCode      byte = 0x8C
	tagCodeScope byte = 0x96
	tagMaxKey    byte = 0xF0

	// tagEnd closes an object or array; it is below every tag and every
	// canonical-type byte, so a shorter container sorts first (I4).
	tagEnd byte = 0x00
)

// canonical returns the canonical-type byte of t, written before each field
// name inside an encoded object (I5). It is the lowest tag of t's bracket.
// Unknown types get tagInvalid's bracket, which sorts above MaxKey.
func canonical(t bson.Type) byte {
	switch t {
	case bson.TypeMinKey:
		return tagMinKey
	case bson.TypeUndefined:
		return tagUndefined
	case bson.TypeNull:
		return tagNull
	case bson.TypeDouble, bson.TypeInt32, bson.TypeInt64, bson.TypeDecimal128:
		return tagNaN
	case bson.TypeString, bson.TypeSymbol:
		return tagString
	case bson.TypeEmbeddedDocument:
		return tagObject
	case bson.TypeArray:
		return tagArray
	case bson.TypeBinary:
		return tagBinary
	case bson.TypeObjectID:
		return tagObjectID
	case bson.TypeBoolean:
		return tagFalse
	case bson.TypeDateTime:
		return tagDate
	case bson.TypeTimestamp:
		return tagTimestamp
	case bson.TypeRegex:
		return tagRegex
	case bson.TypeDBPointer:
		return tagDBPointer
	case bson.TypeJavaScript:
		return tagCode
	case bson.TypeCodeWithScope:
		return tagCodeScope
	case bson.TypeMaxKey:
		return tagMaxKey
	}
	return tagInvalid
}

// tagInvalid marks a value of an unknown BSON type or a truncated value. It
// sorts above MaxKey and carries no payload. Valid documents never produce
// it; it exists so that AppendValue never panics on bad input.
const tagInvalid byte = 0xFA

// AppendValue appends the order-preserving encoding of v to dst and returns
// the extended slice. For any two values a and b,
// bytes.Compare(AppendValue(nil, a, false), AppendValue(nil, b, false)) has
// the sign of MongoDB's BSON comparison of a and b (field names of embedded
// documents included); values MongoDB compares equal (1, 1.0, NumberLong(1),
// NumberDecimal("1.00"); -0 and 0; every NaN) encode to equal bytes. With
// desc set the bytes of the encoding are inverted, which reverses the order
// (I3). Encodings are self-delimiting and no encoding is a proper prefix of
// another (I1), so encodings of the fields of a compound key may be
// concatenated.
//
// v.Value must hold one well-formed value of type v.Type (as read from a
// validated document). On malformed input AppendValue does not panic, but the
// encoding of the malformed part is unspecified. AppendValue does not retain
// v or dst beyond the call and is safe for concurrent use.
func AppendValue(dst []byte, v bson.RawValue, desc bool) []byte {
	start := len(dst)
	dst = appendValue(dst, v.Type, v.Value, 0)
	if desc {
		invert(dst[start:])
	}
	return dst
}

// maxDepth bounds recursion into nested documents. BSON documents accepted by
// the server nest at most 100 levels deep (plus the wire envelope); deeper
// values are encoded as tagInvalid rather than overflowing the stack.
const maxDepth = 200

func invert(b []byte) {
	for i := range b {
		b[i] = ^b[i]
	}
}

func appendValue(dst []byte, t bson.Type, b []byte, depth int) []byte {
	switch t {
	case bson.TypeMinKey:
		return append(dst, tagMinKey)
	case bson.TypeMaxKey:
		return append(dst, tagMaxKey)
	case bson.TypeUndefined:
		return append(dst, tagUndefined)
	case bson.TypeNull:
		return append(dst, tagNull)
	case bson.TypeDouble:
		if len(b) < 8 {
			break
		}
		return appendDouble(dst, math.Float64frombits(binary.LittleEndian.Uint64(b)))
	case bson.TypeInt32:
		if len(b) < 4 {
			break
		}
		return appendInt64(dst, int64(int32(binary.LittleEndian.Uint32(b))))
	case bson.TypeInt64:
		if len(b) < 8 {
			break
		}
		return appendInt64(dst, int64(binary.LittleEndian.Uint64(b)))
	case bson.TypeDecimal128:
		if len(b) < 16 {
			break
		}
		return appendDecimal128(dst, binary.LittleEndian.Uint64(b[8:]), binary.LittleEndian.Uint64(b))
	case bson.TypeString, bson.TypeSymbol, bson.TypeJavaScript:
		s, ok := readString(b)
		if !ok {
			break
		}
		tag := tagString
		if t == bson.TypeJavaScript {
			tag = tagCode
		}
		return appendString(append(dst, tag), s)
	case bson.TypeEmbeddedDocument:
		if depth >= maxDepth {
			break
		}
		return appendObject(append(dst, tagObject), b, depth+1)
	case bson.TypeArray:
		if depth >= maxDepth {
			break
		}
		return appendArray(append(dst, tagArray), b, depth+1)
	case bson.TypeBinary:
		// MongoDB orders binData by length, then subtype, then the bytes
		// after the subtype (for subtype 2 these include the inner length).
		if len(b) < 5 {
			break
		}
		n := binary.LittleEndian.Uint32(b)
		if uint64(len(b)-5) < uint64(n) {
			break
		}
		dst = append(dst, tagBinary)
		dst = binary.BigEndian.AppendUint32(dst, n)
		return append(dst, b[4:5+n]...)
	case bson.TypeObjectID:
		if len(b) < 12 {
			break
		}
		return append(append(dst, tagObjectID), b[:12]...)
	case bson.TypeBoolean:
		if len(b) < 1 {
			break
		}
		if b[0] != 0 {
			return append(dst, tagTrue)
		}
		return append(dst, tagFalse)
	case bson.TypeDateTime:
		if len(b) < 8 {
			break
		}
		dst = append(dst, tagDate)
		return binary.BigEndian.AppendUint64(dst, binary.LittleEndian.Uint64(b)^(1<<63))
	case bson.TypeTimestamp:
		if len(b) < 8 {
			break
		}
		dst = append(dst, tagTimestamp)
		return binary.BigEndian.AppendUint64(dst, binary.LittleEndian.Uint64(b))
	case bson.TypeRegex:
		pat, rest, ok := readCString(b)
		if !ok {
			break
		}
		flags, _, ok := readCString(rest)
		if !ok {
			break
		}
		dst = append(append(dst, tagRegex), pat...)
		dst = append(append(dst, 0), flags...)
		return append(dst, 0)
	case bson.TypeDBPointer:
		// MongoDB compares the raw values: by size (so by namespace length),
		// then bytewise: namespace, then ObjectId.
		s, ok := readString(b)
		if !ok || len(b) < 4+len(s)+1+12 {
			break
		}
		dst = append(dst, tagDBPointer)
		dst = binary.BigEndian.AppendUint32(dst, uint32(len(s)))
		dst = append(dst, s...)
		return append(dst, b[4+len(s)+1:4+len(s)+1+12]...)
	case bson.TypeCodeWithScope:
		if len(b) < 4 || depth >= maxDepth {
			break
		}
		code, ok := readString(b[4:])
		if !ok {
			break
		}
		scope := b[4+4+len(code)+1:]
		dst = appendString(append(dst, tagCodeScope), code)
		return appendObject(dst, scope, depth+1)
	}
	return append(dst, tagInvalid)
}

// readString reads a BSON string (int32 length including the NUL, bytes,
// NUL) from the front of b and returns its bytes without the NUL.
func readString(b []byte) ([]byte, bool) {
	if len(b) < 4 {
		return nil, false
	}
	n := int64(int32(binary.LittleEndian.Uint32(b)))
	if n < 1 || n > int64(len(b)-4) {
		return nil, false
	}
	return b[4 : 4+n-1], true
}

// readCString reads a NUL-terminated string from the front of b.
func readCString(b []byte) (s, rest []byte, ok bool) {
	for i, c := range b {
		if c == 0 {
			return b[:i], b[i+1:], true
		}
	}
	return nil, nil, false
}

// appendString appends s with each 0x00 escaped as 0x00 0xFF and the
// terminator 0x00 0x01 (I6): binary order, a prefix sorts first, and no
// encoding is a prefix of another.
func appendString(dst, s []byte) []byte {
	for {
		i := indexByte(s, 0)
		if i < 0 {
			dst = append(dst, s...)
			break
		}
		dst = append(dst, s[:i]...)
		dst = append(dst, 0x00, 0xFF)
		s = s[i+1:]
	}
	return append(dst, 0x00, 0x01)
}

func indexByte(s []byte, c byte) int {
	for i, x := range s {
		if x == c {
			return i
		}
	}
	return -1
}

// appendObject appends the elements of the BSON document b: for each, the
// canonical-type byte, the field name and NUL, the value; then tagEnd.
// MongoDB compares embedded documents element by element on canonical type,
// then field name, then value, and a prefix sorts first (I5).
func appendObject(dst, b []byte, depth int) []byte {
	elems, ok := docElems(b)
	if !ok {
		return append(dst, tagInvalid)
	}
	for len(elems) > 1 {
		t := bson.Type(elems[0])
		name, rest, ok := readCString(elems[1:])
		if !ok {
			return append(dst, tagInvalid)
		}
		n, ok := valueSize(t, rest)
		if !ok {
			return append(dst, tagInvalid)
		}
		dst = append(dst, canonical(t))
		dst = append(append(dst, name...), 0)
		dst = appendValue(dst, t, rest[:n], depth)
		elems = rest[n:]
	}
	return append(dst, tagEnd)
}

// appendArray appends the elements of the BSON array b (values only: the
// field names of an array are its indexes and never differ at the same
// position), then tagEnd.
func appendArray(dst, b []byte, depth int) []byte {
	elems, ok := docElems(b)
	if !ok {
		return append(dst, tagInvalid)
	}
	for len(elems) > 1 {
		t := bson.Type(elems[0])
		_, rest, ok := readCString(elems[1:])
		if !ok {
			return append(dst, tagInvalid)
		}
		n, ok := valueSize(t, rest)
		if !ok {
			return append(dst, tagInvalid)
		}
		dst = appendValue(dst, t, rest[:n], depth)
		elems = rest[n:]
	}
	return append(dst, tagEnd)
}

// docElems returns the element bytes of document b including the final NUL.
func docElems(b []byte) ([]byte, bool) {
	if len(b) < 5 {
		return nil, false
	}
	n := int64(int32(binary.LittleEndian.Uint32(b)))
	if n < 5 || n > int64(len(b)) || b[n-1] != 0 {
		return nil, false
	}
	return b[4:n], true
}

// valueSize returns the size of the value of type t at the front of b.
func valueSize(t bson.Type, b []byte) (int, bool) {
	fixed := func(n int) (int, bool) { return n, len(b) >= n }
	lenPrefixed := func(extra int64) (int, bool) {
		if len(b) < 4 {
			return 0, false
		}
		n := int64(int32(binary.LittleEndian.Uint32(b))) + extra
		if n < 4 || n > int64(len(b)) {
			return 0, false
		}
		return int(n), true
	}
	switch t {
	case bson.TypeMinKey, bson.TypeMaxKey, bson.TypeNull, bson.TypeUndefined:
		return 0, true
	case bson.TypeBoolean:
		return fixed(1)
	case bson.TypeInt32:
		return fixed(4)
	case bson.TypeDouble, bson.TypeInt64, bson.TypeDateTime, bson.TypeTimestamp:
		return fixed(8)
	case bson.TypeObjectID:
		return fixed(12)
	case bson.TypeDecimal128:
		return fixed(16)
	case bson.TypeString, bson.TypeSymbol, bson.TypeJavaScript:
		return lenPrefixed(4)
	case bson.TypeDBPointer:
		return lenPrefixed(4 + 12)
	case bson.TypeBinary:
		return lenPrefixed(4 + 1)
	case bson.TypeEmbeddedDocument, bson.TypeArray, bson.TypeCodeWithScope:
		return lenPrefixed(0)
	case bson.TypeRegex:
		_, rest, ok := readCString(b)
		if !ok {
			return 0, false
		}
		_, rest, ok = readCString(rest)
		if !ok {
			return 0, false
		}
		return len(b) - len(rest), true
	}
	return 0, false
}
