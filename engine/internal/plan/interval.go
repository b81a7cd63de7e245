package plan

import (
	"bytes"
	"encoding/binary"
	"math"
	"sort"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/x/bsonx/bsoncore"

	"github.com/formworkdb/formwork/engine/internal/keystring"
)

// interval is a range of index values in ascending value order. An empty
// OIL (list of intervals) matches nothing.
type interval struct {
	lo, hi       bson.RawValue
	loInc, hiInc bool
}

// oil is an ordered interval list: sorted ascending, disjoint.
type oil []interval

func enc(v bson.RawValue) []byte { return keystring.AppendValue(nil, v, false) }

func cmpVal(a, b bson.RawValue) int { return bytes.Compare(enc(a), enc(b)) }

func point(v bson.RawValue) interval { return interval{lo: v, hi: v, loInc: true, hiInc: true} }

var (
	minKey    = bson.RawValue{Type: bson.TypeMinKey}
	maxKey    = bson.RawValue{Type: bson.TypeMaxKey}
	nullVal   = bson.RawValue{Type: bson.TypeNull}
	undefVal  = bson.RawValue{Type: bson.TypeUndefined}
	allValues = interval{lo: minKey, hi: maxKey, loInc: true, hiInc: true}
)

func doubleVal(f float64) bson.RawValue {
	return bson.RawValue{Type: bson.TypeDouble, Value: bsoncore.AppendDouble(nil, f)}
}

func stringVal(s string) bson.RawValue {
	return bson.RawValue{Type: bson.TypeString, Value: bsoncore.AppendString(nil, s)}
}

var (
	emptyDocVal = bson.RawValue{Type: bson.TypeEmbeddedDocument, Value: []byte{5, 0, 0, 0, 0}}
	emptyArrVal = bson.RawValue{Type: bson.TypeArray, Value: []byte{5, 0, 0, 0, 0}}
	emptyBinVal = bson.RawValue{Type: bson.TypeBinary, Value: []byte{0, 0, 0, 0, 0}}
)

func oidVal(b byte) bson.RawValue {
	v := make([]byte, 12)
	for i := range v {
		v[i] = b
	}
	return bson.RawValue{Type: bson.TypeObjectID, Value: v}
}

func boolVal(b bool) bson.RawValue {
	if b {
		return bson.RawValue{Type: bson.TypeBoolean, Value: []byte{1}}
	}
	return bson.RawValue{Type: bson.TypeBoolean, Value: []byte{0}}
}

func dateVal(ms int64) bson.RawValue {
	return bson.RawValue{Type: bson.TypeDateTime, Value: binary.LittleEndian.AppendUint64(nil, uint64(ms))}
}

func tsVal(t, i uint32) bson.RawValue {
	return bson.RawValue{Type: bson.TypeTimestamp, Value: bsoncore.AppendTimestamp(nil, t, i)}
}

// typeBounds returns the smallest and largest values of v's type bracket
// as mongod's appendMinForType/appendMaxForType do, and whether each is
// itself of the bracket (an inclusive end) or the first value of the next
// bracket (an exclusive end).
func typeBounds(t bson.Type) (lo, hi bson.RawValue, loInc, hiInc bool) {
	switch t {
	case bson.TypeDouble, bson.TypeInt32, bson.TypeInt64, bson.TypeDecimal128:
		return doubleVal(math.Inf(-1)), doubleVal(math.Inf(1)), true, true
	case bson.TypeString, bson.TypeSymbol:
		return stringVal(""), emptyDocVal, true, false
	case bson.TypeEmbeddedDocument:
		return emptyDocVal, emptyArrVal, true, false
	case bson.TypeArray:
		return emptyArrVal, emptyBinVal, true, false
	case bson.TypeBinary:
		return emptyBinVal, oidVal(0), true, false
	case bson.TypeObjectID:
		return oidVal(0), oidVal(0xff), true, true
	case bson.TypeBoolean:
		return boolVal(false), boolVal(true), true, true
	case bson.TypeDateTime:
		return dateVal(math.MinInt64), dateVal(math.MaxInt64), true, true
	case bson.TypeTimestamp:
		return tsVal(0, 0), tsVal(math.MaxUint32, math.MaxUint32), true, true
	}
	return minKey, maxKey, true, true
}

// isEmpty reports whether iv holds no value.
func (iv interval) isEmpty() bool {
	c := cmpVal(iv.lo, iv.hi)
	return c > 0 || (c == 0 && !(iv.loInc && iv.hiInc))
}

func (iv interval) isPoint() bool {
	return iv.loInc && iv.hiInc && cmpVal(iv.lo, iv.hi) == 0
}

func (iv interval) isAll() bool {
	return iv.loInc && iv.hiInc && iv.lo.Type == bson.TypeMinKey && iv.hi.Type == bson.TypeMaxKey
}

// unionize sorts and merges overlapping or touching intervals.
func unionize(o oil) oil {
	var in oil
	for _, iv := range o {
		if !iv.isEmpty() {
			in = append(in, iv)
		}
	}
	if len(in) == 0 {
		return oil{}
	}
	sort.SliceStable(in, func(i, j int) bool {
		c := cmpVal(in[i].lo, in[j].lo)
		if c != 0 {
			return c < 0
		}
		return in[i].loInc && !in[j].loInc
	})
	out := oil{in[0]}
	for _, iv := range in[1:] {
		last := &out[len(out)-1]
		c := cmpVal(last.hi, iv.lo)
		if c > 0 || (c == 0 && (last.hiInc || iv.loInc)) {
			h := cmpVal(iv.hi, last.hi)
			if h > 0 || (h == 0 && iv.hiInc) {
				last.hi, last.hiInc = iv.hi, iv.hiInc
			}
			continue
		}
		out = append(out, iv)
	}
	return out
}

// intersect returns the values in both a and b.
func intersect(a, b oil) oil {
	out := oil{}
	for _, x := range a {
		for _, y := range b {
			iv := x
			c := cmpVal(y.lo, iv.lo)
			if c > 0 || (c == 0 && !y.loInc) {
				iv.lo, iv.loInc = y.lo, y.loInc
			}
			c = cmpVal(y.hi, iv.hi)
			if c < 0 || (c == 0 && !y.hiInc) {
				iv.hi, iv.hiInc = y.hi, y.hiInc
			}
			if !iv.isEmpty() {
				out = append(out, iv)
			}
		}
	}
	return unionize(out)
}

// complement returns [MinKey, MaxKey] minus o.
func complement(o oil) oil {
	out := oil{}
	cur, curInc := minKey, true
	for _, iv := range o {
		gap := interval{lo: cur, loInc: curInc, hi: iv.lo, hiInc: !iv.loInc}
		if !gap.isEmpty() {
			out = append(out, gap)
		}
		cur, curInc = iv.hi, !iv.hiInc
	}
	tail := interval{lo: cur, loInc: curInc, hi: maxKey, hiInc: true}
	if !tail.isEmpty() {
		out = append(out, tail)
	}
	return out
}

// byteInterval is an interval over one field's encoded bytes (ascending
// byte order, whatever the field's direction).
type byteInterval struct {
	lo, hi       []byte
	loInc, hiInc bool
}

// toBytes converts o for a field with direction desc into byte order.
func (o oil) toBytes(desc bool) []byteInterval {
	out := make([]byteInterval, 0, len(o))
	for _, iv := range o {
		if desc {
			out = append(out, byteInterval{
				lo: keystring.AppendValue(nil, iv.hi, true), loInc: iv.hiInc,
				hi: keystring.AppendValue(nil, iv.lo, true), hiInc: iv.loInc,
			})
		} else {
			out = append(out, byteInterval{lo: enc(iv.lo), loInc: iv.loInc, hi: enc(iv.hi), hiInc: iv.hiInc})
		}
	}
	if desc {
		for i, j := 0, len(out)-1; i < j; i, j = i+1, j-1 {
			out[i], out[j] = out[j], out[i]
		}
	}
	return out
}

// position locates an encoded field value among ivs (ascending byte
// order): the index of the interval holding it (in true), or the index of
// the first interval after it (in false; len(ivs) when past the last).
func position(ivs []byteInterval, v []byte) (int, bool) {
	i := sort.Search(len(ivs), func(i int) bool {
		c := bytes.Compare(ivs[i].hi, v)
		return c > 0 || (c == 0 && ivs[i].hiInc)
	})
	if i == len(ivs) {
		return i, false
	}
	c := bytes.Compare(ivs[i].lo, v)
	if c < 0 || (c == 0 && ivs[i].loInc) {
		return i, true
	}
	return i, false
}
