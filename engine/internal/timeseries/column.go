package timeseries

import (
	"bytes"
	"encoding/binary"
	"errors"
	"math"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/x/bsonx/bsoncore"
)

// column is one field's values in a bucket: pos[i] is the measurement
// position of vals[i], increasing.
type column struct {
	pos  []int32
	vals []bson.RawValue
}

// Column encodings of a compressed bucket (the payload of one data
// field's BinData). A column starts with uvarint n, a position mode (0:
// dense 0..n-1, 1: n uvarint gaps) and a value kind:
const (
	kindGeneric = 0 // per value: 0 = same as the previous, else type byte + BSON value
	kindDoD     = 1 // one integer type (date, int32, int64): zigzag first, then deltas of deltas
	kindDelta   = 2 // one integer type: zigzag deltas
	kindScaled  = 3 // doubles that are decimals: exponent k, then zigzag deltas of v·10^k
	kindOID     = 4 // ObjectIds: per value 0 + zigzag Δtime + zigzag Δcounter when the middle 5 bytes repeat, else 1 + 12 bytes
)

// ColumnSubtype is the BinData subtype of a compressed column.
//
// Divergence: mongod 7.0 compresses columns in its BSONColumn format
// (BinData subtype 7); the engine uses its own columnar encoding (integer
// deltas, deltas of deltas, decimal scaling of doubles, ObjectId deltas,
// run-length of repeated values) under the user-defined subtype 0x80, so
// a compressed bucket read raw from system.buckets is not decodable by
// mongod's tools. Tested by TestColumnRoundTrip.
const ColumnSubtype = 0x80

// errCorrupt is the error of a compressed column that does not decode.
var errCorrupt = errors.New("timeseries: corrupt compressed column")

// zig maps signed to unsigned integers, small magnitudes to small values.
func zig(v int64) uint64 { return uint64(v<<1) ^ uint64(v>>63) }

// unzig reverses zig.
func unzig(u uint64) int64 { return int64(u>>1) ^ -int64(u&1) }

// encode returns the compressed form of c.
func (c *column) encode() []byte {
	out := binary.AppendUvarint(nil, uint64(len(c.vals)))
	dense := true
	for i, p := range c.pos {
		if int(p) != i {
			dense = false
			break
		}
	}
	if dense {
		out = append(out, 0)
	} else {
		out = append(out, 1)
		prev := int32(-1)
		for _, p := range c.pos {
			out = binary.AppendUvarint(out, uint64(p-prev))
			prev = p
		}
	}
	return append(out, c.encodeValues()...)
}

// encodeValues picks the smallest encoding the values allow.
func (c *column) encodeValues() []byte {
	best := c.generic()
	try := func(b []byte) {
		if b != nil && len(b) < len(best) {
			best = b
		}
	}
	if len(c.vals) > 0 {
		t := c.vals[0].Type
		same := true
		for _, v := range c.vals {
			if v.Type != t {
				same = false
				break
			}
		}
		if same {
			switch t {
			case bson.TypeDateTime, bson.TypeInt64, bson.TypeInt32:
				ints := make([]int64, len(c.vals))
				for i, v := range c.vals {
					ints[i] = intOf(v)
				}
				try(integers(kindDoD, t, ints, true))
				try(integers(kindDelta, t, ints, false))
			case bson.TypeDouble:
				try(scaled(c.vals))
			case bson.TypeObjectID:
				try(objectIDs(c.vals))
			}
		}
	}
	return best
}

// intOf is the integer held by a date, int32 or int64 value.
func intOf(v bson.RawValue) int64 {
	switch v.Type {
	case bson.TypeDateTime:
		return v.DateTime()
	case bson.TypeInt32:
		return int64(v.Int32())
	}
	return v.Int64()
}

// generic is the encoding any values allow: each value typed, with a
// one-byte marker for a repeat of the previous one.
func (c *column) generic() []byte {
	out := []byte{kindGeneric}
	for i, v := range c.vals {
		if i > 0 && v.Type == c.vals[i-1].Type && bytes.Equal(v.Value, c.vals[i-1].Value) {
			out = append(out, 0)
			continue
		}
		out = append(out, byte(v.Type))
		out = append(out, v.Value...)
	}
	return out
}

// integers encodes integers of one type as deltas (or deltas of deltas).
func integers(kind byte, t bson.Type, ints []int64, dod bool) []byte {
	out := []byte{kind, byte(t)}
	seq := make([]int64, len(ints))
	var prev, prevDelta int64
	for i, n := range ints {
		switch {
		case i == 0:
			seq[i] = n
		case dod:
			d := n - prev
			seq[i] = d - prevDelta
			prevDelta = d
		default:
			seq[i] = n - prev
		}
		prev = n
	}
	return appendRuns(out, seq)
}

// appendRuns appends a sequence of integers: a non-zero value as its
// zigzag uvarint, a run of zeros as a 0 byte and the run's length - 1.
func appendRuns(out []byte, seq []int64) []byte {
	for i := 0; i < len(seq); {
		if seq[i] != 0 {
			out = binary.AppendUvarint(out, zig(seq[i]))
			i++
			continue
		}
		j := i
		for j < len(seq) && seq[j] == 0 {
			j++
		}
		out = append(out, 0)
		out = binary.AppendUvarint(out, uint64(j-i-1))
		i = j
	}
	return out
}

// readRuns reads n integers written by appendRuns.
func readRuns(b []byte, n int) ([]int64, []byte, error) {
	out := make([]int64, 0, n)
	for len(out) < n {
		u, k := binary.Uvarint(b)
		if k <= 0 {
			return nil, nil, errCorrupt
		}
		b = b[k:]
		if u != 0 {
			out = append(out, unzig(u))
			continue
		}
		r, k := binary.Uvarint(b)
		if k <= 0 || r >= uint64(n-len(out)) {
			return nil, nil, errCorrupt
		}
		b = b[k:]
		for range r + 1 {
			out = append(out, 0)
		}
	}
	return out, b, nil
}

// scaled encodes doubles that are exact decimals with at most 4 places as
// integer deltas; nil when some value is not (NaN, ±Inf, -0, more digits).
func scaled(vals []bson.RawValue) []byte {
	for k := 0; k <= 4; k++ {
		p := math.Pow10(k)
		ints := make([]int64, len(vals))
		ok := true
		for i, v := range vals {
			f := v.Double()
			x := math.Round(f * p)
			if math.Abs(x) > 1<<53 || math.Float64bits(x/p) != math.Float64bits(f) {
				ok = false
				break
			}
			ints[i] = int64(x)
		}
		if ok {
			seq := make([]int64, len(ints))
			var prev int64
			for i, n := range ints {
				seq[i] = n - prev
				prev = n
			}
			return appendRuns([]byte{kindScaled, byte(k)}, seq)
		}
	}
	return nil
}

// objectIDs encodes ObjectIds as deltas of their time and counter when
// their process part repeats.
func objectIDs(vals []bson.RawValue) []byte {
	out := []byte{kindOID}
	var prev []byte
	for _, v := range vals {
		b := v.Value
		if prev != nil && bytes.Equal(b[4:9], prev[4:9]) {
			out = append(out, 0)
			out = binary.AppendUvarint(out, zig(int64(binary.BigEndian.Uint32(b))-int64(binary.BigEndian.Uint32(prev))))
			out = binary.AppendUvarint(out, zig(counter(b)-counter(prev)))
		} else {
			out = append(out, 1)
			out = append(out, b[:12]...)
		}
		prev = b
	}
	return out
}

// counter is the 3-byte counter of ObjectId bytes b.
func counter(b []byte) int64 { return int64(b[9])<<16 | int64(b[10])<<8 | int64(b[11]) }

// decodeColumn reverses encode. It never panics on corrupt input: it
// returns errCorrupt.
func decodeColumn(b []byte) (*column, error) {
	n, k := binary.Uvarint(b)
	if k <= 0 || n > maxPositions {
		return nil, errCorrupt
	}
	b = b[k:]
	c := &column{pos: make([]int32, n), vals: make([]bson.RawValue, 0, n)}
	if len(b) == 0 {
		return nil, errCorrupt
	}
	mode := b[0]
	b = b[1:]
	switch mode {
	case 0:
		for i := range c.pos {
			c.pos[i] = int32(i)
		}
	case 1:
		prev := int64(-1)
		for i := range c.pos {
			g, k := binary.Uvarint(b)
			if k <= 0 || g == 0 || g > maxPositions {
				return nil, errCorrupt
			}
			b = b[k:]
			prev += int64(g)
			if prev >= maxPositions {
				return nil, errCorrupt
			}
			c.pos[i] = int32(prev)
		}
	default:
		return nil, errCorrupt
	}
	if len(b) == 0 {
		if n == 0 {
			return c, nil
		}
		return nil, errCorrupt
	}
	kind := b[0]
	b = b[1:]
	var err error
	switch kind {
	case kindGeneric:
		err = c.decodeGeneric(b, int(n))
	case kindDoD, kindDelta:
		err = c.decodeIntegers(b, int(n), kind == kindDoD)
	case kindScaled:
		err = c.decodeScaled(b, int(n))
	case kindOID:
		err = c.decodeOIDs(b, int(n))
	default:
		err = errCorrupt
	}
	if err != nil {
		return nil, err
	}
	return c, nil
}

// decodeGeneric reads n values written by generic.
func (c *column) decodeGeneric(b []byte, n int) error {
	for range n {
		if len(b) == 0 {
			return errCorrupt
		}
		t := b[0]
		b = b[1:]
		if t == 0 {
			if len(c.vals) == 0 {
				return errCorrupt
			}
			c.vals = append(c.vals, c.vals[len(c.vals)-1])
			continue
		}
		v, rest, ok := bsoncore.ReadValue(b, bsoncore.Type(t))
		if !ok {
			return errCorrupt
		}
		c.vals = append(c.vals, bson.RawValue{Type: bson.Type(t), Value: v.Data})
		b = rest
	}
	return nil
}

// decodeIntegers reads n values written by integers.
func (c *column) decodeIntegers(b []byte, n int, dod bool) error {
	if len(b) == 0 {
		return errCorrupt
	}
	t := bson.Type(b[0])
	seq, _, err := readRuns(b[1:], n)
	if err != nil {
		return err
	}
	var prev, prevDelta int64
	for i, x := range seq {
		var v int64
		switch {
		case i == 0:
			v = x
		case dod:
			prevDelta += x
			v = prev + prevDelta
		default:
			v = prev + x
		}
		prev = v
		var raw []byte
		switch t {
		case bson.TypeInt32:
			raw = binary.LittleEndian.AppendUint32(nil, uint32(int32(v)))
		case bson.TypeDateTime, bson.TypeInt64:
			raw = binary.LittleEndian.AppendUint64(nil, uint64(v))
		default:
			return errCorrupt
		}
		c.vals = append(c.vals, bson.RawValue{Type: t, Value: raw})
	}
	return nil
}

// decodeScaled reads n values written by scaled.
func (c *column) decodeScaled(b []byte, n int) error {
	if len(b) == 0 || b[0] > 4 {
		return errCorrupt
	}
	p := math.Pow10(int(b[0]))
	seq, _, err := readRuns(b[1:], n)
	if err != nil {
		return err
	}
	var prev int64
	for _, x := range seq {
		prev += x
		f := float64(prev) / p
		c.vals = append(c.vals, bson.RawValue{Type: bson.TypeDouble, Value: binary.LittleEndian.AppendUint64(nil, math.Float64bits(f))})
	}
	return nil
}

// decodeOIDs reads n values written by objectIDs.
func (c *column) decodeOIDs(b []byte, n int) error {
	var prev []byte
	for range n {
		if len(b) == 0 {
			return errCorrupt
		}
		tag := b[0]
		b = b[1:]
		var cur []byte
		switch {
		case tag == 1 && len(b) >= 12:
			cur = append([]byte(nil), b[:12]...)
			b = b[12:]
		case tag == 0 && prev != nil:
			u1, k1 := binary.Uvarint(b)
			if k1 <= 0 {
				return errCorrupt
			}
			b = b[k1:]
			u2, k2 := binary.Uvarint(b)
			if k2 <= 0 {
				return errCorrupt
			}
			b = b[k2:]
			cur = append([]byte(nil), prev...)
			binary.BigEndian.PutUint32(cur, uint32(int64(binary.BigEndian.Uint32(prev))+unzig(u1)))
			ctr := counter(prev) + unzig(u2)
			cur[9], cur[10], cur[11] = byte(ctr>>16), byte(ctr>>8), byte(ctr)
		default:
			return errCorrupt
		}
		c.vals = append(c.vals, bson.RawValue{Type: bson.TypeObjectID, Value: cur})
		prev = cur
	}
	return nil
}
