package keystring

import (
	"encoding/binary"
	"errors"
	"math"
	"strconv"

	"go.mongodb.org/mongo-driver/v2/bson"
)

// ErrCorrupt is returned by Decode and DecodeValue for bytes that are not an
// encoding produced by AppendValue.
var ErrCorrupt = errors.New("keystring: corrupt key")

// DecodeValue decodes the value encoded at the front of key with direction
// desc and returns it together with the bytes that follow it (the next
// field, or the record ID of a non-unique index entry).
//
// The value equals the encoded one as MongoDB compares values, and its type
// is the encoded one with these exceptions, since the encoding holds values,
// not types: a number decodes as int32 if it is an integer in int32's range,
// else as int64 if it is an integer in int64's range, else as a double if it
// is exactly a double, else as decimal128; zero decodes as int32 0 (sign and
// decimal exponent are lost); NaN and ±Inf decode as doubles; a symbol
// decodes as a string. A truncated or foreign key returns ErrCorrupt.
//
// The returned value owns fresh memory; rest aliases key.
func DecodeValue(key []byte, desc bool) (v bson.RawValue, rest []byte, err error) {
	r := reader{b: key}
	if desc {
		r.mask = 0xFF
	}
	t, val, err := r.value(nil, 0)
	if err != nil {
		return bson.RawValue{}, nil, err
	}
	return bson.RawValue{Type: t, Value: val}, key[r.pos:], nil
}

// Decode decodes len(desc) consecutive values, the i-th with direction
// desc[i], as DecodeValue does, and returns them with the remaining bytes.
func Decode(key []byte, desc []bool) ([]bson.RawValue, []byte, error) {
	vals := make([]bson.RawValue, len(desc))
	for i, d := range desc {
		v, rest, err := DecodeValue(key, d)
		if err != nil {
			return nil, nil, err
		}
		vals[i] = v
		key = rest
	}
	return vals, key, nil
}

type reader struct {
	b    []byte
	pos  int
	mask byte
}

func (r *reader) next() (byte, error) {
	if r.pos >= len(r.b) {
		return 0, ErrCorrupt
	}
	c := r.b[r.pos] ^ r.mask
	r.pos++
	return c, nil
}

func (r *reader) peek() (byte, error) {
	if r.pos >= len(r.b) {
		return 0, ErrCorrupt
	}
	return r.b[r.pos] ^ r.mask, nil
}

// bytes appends the next n bytes, unmasked, to dst.
func (r *reader) bytes(dst []byte, n int) ([]byte, error) {
	if n < 0 || n > len(r.b)-r.pos {
		return nil, ErrCorrupt
	}
	for _, c := range r.b[r.pos : r.pos+n] {
		dst = append(dst, c^r.mask)
	}
	r.pos += n
	return dst, nil
}

func (r *reader) uint64() (uint64, error) {
	var buf [8]byte
	b, err := r.bytes(buf[:0], 8)
	if err != nil {
		return 0, err
	}
	return binary.BigEndian.Uint64(b), nil
}

// cstring appends the bytes up to the next 0x00 to dst and consumes the 0x00.
func (r *reader) cstring(dst []byte) ([]byte, error) {
	for {
		c, err := r.next()
		if err != nil {
			return nil, err
		}
		if c == 0 {
			return dst, nil
		}
		dst = append(dst, c)
	}
}

// string appends the unescaped bytes of an appendString encoding to dst.
func (r *reader) string(dst []byte) ([]byte, error) {
	for {
		c, err := r.next()
		if err != nil {
			return nil, err
		}
		if c != 0 {
			dst = append(dst, c)
			continue
		}
		c, err = r.next()
		switch {
		case err != nil:
			return nil, err
		case c == 0x01:
			return dst, nil
		case c == 0xFF:
			dst = append(dst, 0)
		default:
			return nil, ErrCorrupt
		}
	}
}

// bsonString appends a BSON string (length, bytes, NUL) read as string does.
func (r *reader) bsonString(dst []byte) ([]byte, error) {
	at := len(dst)
	dst = append(dst, 0, 0, 0, 0)
	dst, err := r.string(dst)
	if err != nil {
		return nil, err
	}
	binary.LittleEndian.PutUint32(dst[at:], uint32(len(dst)-at-4+1))
	return append(dst, 0), nil
}

// value decodes one value and appends its BSON value bytes to dst.
func (r *reader) value(dst []byte, depth int) (bson.Type, []byte, error) {
	if depth > maxDepth {
		return 0, nil, ErrCorrupt
	}
	tag, err := r.next()
	if err != nil {
		return 0, nil, err
	}
	switch tag {
	case tagMinKey:
		return bson.TypeMinKey, dst, nil
	case tagMaxKey:
		return bson.TypeMaxKey, dst, nil
	case tagUndefined:
		return bson.TypeUndefined, dst, nil
	case tagNull:
		return bson.TypeNull, dst, nil
	case tagNaN:
		return bson.TypeDouble, binary.LittleEndian.AppendUint64(dst, math.Float64bits(math.NaN())), nil
	case tagNegInf:
		return bson.TypeDouble, binary.LittleEndian.AppendUint64(dst, math.Float64bits(math.Inf(-1))), nil
	case tagPosInf:
		return bson.TypeDouble, binary.LittleEndian.AppendUint64(dst, math.Float64bits(math.Inf(1))), nil
	case tagZero:
		return bson.TypeInt32, append(dst, 0, 0, 0, 0), nil
	case tagPos, tagNeg:
		return r.number(dst, tag == tagNeg)
	case tagString:
		dst, err = r.bsonString(dst)
		return bson.TypeString, dst, err
	case tagCode:
		dst, err = r.bsonString(dst)
		return bson.TypeJavaScript, dst, err
	case tagObject:
		dst, err = r.document(dst, depth)
		return bson.TypeEmbeddedDocument, dst, err
	case tagArray:
		dst, err = r.array(dst, depth)
		return bson.TypeArray, dst, err
	case tagBinary:
		var lb [4]byte
		l, err := r.bytes(lb[:0], 4)
		if err != nil {
			return 0, nil, err
		}
		n := binary.BigEndian.Uint32(l)
		if uint64(n) > uint64(len(r.b)-r.pos) {
			return 0, nil, ErrCorrupt
		}
		dst = binary.LittleEndian.AppendUint32(dst, n)
		dst, err = r.bytes(dst, int(n)+1)
		return bson.TypeBinary, dst, err
	case tagObjectID:
		dst, err = r.bytes(dst, 12)
		return bson.TypeObjectID, dst, err
	case tagFalse:
		return bson.TypeBoolean, append(dst, 0), nil
	case tagTrue:
		return bson.TypeBoolean, append(dst, 1), nil
	case tagDate:
		u, err := r.uint64()
		return bson.TypeDateTime, binary.LittleEndian.AppendUint64(dst, u^(1<<63)), err
	case tagTimestamp:
		u, err := r.uint64()
		return bson.TypeTimestamp, binary.LittleEndian.AppendUint64(dst, u), err
	case tagRegex:
		if dst, err = r.cstring(dst); err != nil {
			return 0, nil, err
		}
		dst = append(dst, 0)
		if dst, err = r.cstring(dst); err != nil {
			return 0, nil, err
		}
		return bson.TypeRegex, append(dst, 0), nil
	case tagDBPointer:
		var lb [4]byte
		l, err := r.bytes(lb[:0], 4)
		if err != nil {
			return 0, nil, err
		}
		n := binary.BigEndian.Uint32(l)
		if uint64(n) > uint64(len(r.b)-r.pos) {
			return 0, nil, ErrCorrupt
		}
		dst = binary.LittleEndian.AppendUint32(dst, n+1)
		if dst, err = r.bytes(dst, int(n)); err != nil {
			return 0, nil, err
		}
		dst, err = r.bytes(append(dst, 0), 12)
		return bson.TypeDBPointer, dst, err
	case tagCodeScope:
		at := len(dst)
		dst = append(dst, 0, 0, 0, 0)
		if dst, err = r.bsonString(dst); err != nil {
			return 0, nil, err
		}
		if dst, err = r.document(dst, depth); err != nil {
			return 0, nil, err
		}
		binary.LittleEndian.PutUint32(dst[at:], uint32(len(dst)-at))
		return bson.TypeCodeWithScope, dst, nil
	}
	return 0, nil, ErrCorrupt
}

// document decodes the elements of an encoded object up to its tagEnd and
// appends them as a BSON document.
func (r *reader) document(dst []byte, depth int) ([]byte, error) {
	at := len(dst)
	dst = append(dst, 0, 0, 0, 0)
	for {
		c, err := r.next()
		if err != nil {
			return nil, err
		}
		if c == tagEnd {
			break
		}
		tpos := len(dst)
		dst = append(dst, 0)
		if dst, err = r.cstring(dst); err != nil {
			return nil, err
		}
		var t bson.Type
		t, dst, err = r.value(append(dst, 0), depth+1)
		if err != nil {
			return nil, err
		}
		if canonical(t) != c {
			return nil, ErrCorrupt
		}
		dst[tpos] = byte(t)
	}
	dst = append(dst, 0)
	binary.LittleEndian.PutUint32(dst[at:], uint32(len(dst)-at))
	return dst, nil
}

// array decodes the elements of an encoded array up to its tagEnd and
// appends them as a BSON array.
func (r *reader) array(dst []byte, depth int) ([]byte, error) {
	at := len(dst)
	dst = append(dst, 0, 0, 0, 0)
	for i := 0; ; i++ {
		c, err := r.peek()
		if err != nil {
			return nil, err
		}
		if c == tagEnd {
			r.pos++
			break
		}
		tpos := len(dst)
		dst = append(dst, 0)
		dst = strconv.AppendInt(dst, int64(i), 10)
		var t bson.Type
		t, dst, err = r.value(append(dst, 0), depth+1)
		if err != nil {
			return nil, err
		}
		dst[tpos] = byte(t)
	}
	dst = append(dst, 0)
	binary.LittleEndian.PutUint32(dst[at:], uint32(len(dst)-at))
	return dst, nil
}

// number decodes a magnitude (see number.go) and appends the value as the
// narrowest BSON number type that holds it exactly.
func (r *reader) number(dst []byte, neg bool) (bson.Type, []byte, error) {
	mask := byte(0)
	if neg {
		mask = 0xFF
	}
	e0, err := r.next()
	if err != nil {
		return 0, nil, err
	}
	e1, err := r.next()
	if err != nil {
		return 0, nil, err
	}
	e := int(uint16(e0^mask)<<8|uint16(e1^mask)) - expBias
	var buf [64]byte
	d := buf[:0]
	for {
		c, err := r.next()
		if err != nil {
			return 0, nil, err
		}
		c ^= mask
		if c == 0 {
			break
		}
		if c > 100 || len(d) >= maxDigits {
			return 0, nil, ErrCorrupt
		}
		d = append(d, '0'+(c-1)/10, '0'+(c-1)%10)
	}
	for len(d) > 0 && d[len(d)-1] == '0' {
		d = d[:len(d)-1]
	}
	if len(d) == 0 || d[0] == '0' {
		return 0, nil, ErrCorrupt
	}
	return appendNumber(dst, neg, d, e)
}

// appendNumber appends ±0.d × 10^e as int32, int64, double or decimal128,
// the first that holds it exactly.
func appendNumber(dst []byte, neg bool, d []byte, e int) (bson.Type, []byte, error) {
	exp10 := e - len(d)
	if exp10 >= 0 && e <= 19 {
		u, ok := uint64(0), true
		for i := 0; i < e && ok; i++ {
			digit := uint64(0)
			if i < len(d) {
				digit = uint64(d[i] - '0')
			}
			hi, lo := bits64Mul10Add(u, digit)
			u, ok = lo, !hi
		}
		if ok {
			switch {
			case !neg && u <= math.MaxInt32:
				return bson.TypeInt32, binary.LittleEndian.AppendUint32(dst, uint32(u)), nil
			case neg && u <= 1<<31:
				return bson.TypeInt32, binary.LittleEndian.AppendUint32(dst, uint32(-int64(u))), nil
			case !neg && u <= math.MaxInt64:
				return bson.TypeInt64, binary.LittleEndian.AppendUint64(dst, u), nil
			case neg && u <= 1<<63:
				return bson.TypeInt64, binary.LittleEndian.AppendUint64(dst, -u), nil
			}
		}
	}
	if f, ok := exactDouble(d, e); ok {
		if neg {
			f = -f
		}
		return bson.TypeDouble, binary.LittleEndian.AppendUint64(dst, math.Float64bits(f)), nil
	}
	if exp10 > 6111 && len(d)+exp10-6111 <= 34 {
		// Too large an exponent for the stripped digits: give the
		// coefficient back its trailing zeros.
		d = append(d[:len(d):len(d)], decZeros[:exp10-6111]...)
		exp10 = 6111
	}
	if len(d) > 34 || exp10 < -6176 || exp10 > 6111 {
		return 0, nil, ErrCorrupt
	}
	var hi, lo uint64
	for _, c := range d {
		// (hi, lo) = (hi, lo) × 10 + c; cannot overflow for ≤ 34 digits.
		h1, l1 := mul64(lo, 10)
		hi = hi*10 + h1
		var carry uint64
		lo, carry = add64(l1, uint64(c-'0'))
		hi += carry
	}
	hi |= uint64(exp10+6176) << 49
	if neg {
		hi |= 1 << 63
	}
	dst = binary.LittleEndian.AppendUint64(dst, lo)
	return bson.TypeDecimal128, binary.LittleEndian.AppendUint64(dst, hi), nil
}

const decZeros = "0000000000000000000000000000000000"

// exactDouble returns the double equal to 0.d × 10^e if there is one.
func exactDouble(d []byte, e int) (float64, bool) {
	if e > 310 || e < -330 {
		return 0, false
	}
	s := make([]byte, 0, len(d)+10)
	s = append(s, "0."...)
	s = append(s, d...)
	s = append(s, 'e')
	s = strconv.AppendInt(s, int64(e), 10)
	f, err := strconv.ParseFloat(string(s), 64)
	if err != nil || f == 0 || math.IsInf(f, 0) {
		return 0, false
	}
	var buf [32]byte
	_, fd, fe := doubleDigits(buf[:0], f)
	for len(fd) > 0 && fd[len(fd)-1] == '0' {
		fd = fd[:len(fd)-1]
	}
	return f, fe == e && string(fd) == string(d)
}
