package keystring

import (
	"bytes"
	"encoding/binary"
	"math"
	"math/big"

	"go.mongodb.org/mongo-driver/v2/bson"
)

// refCompare is a deliberately naive implementation of MongoDB's BSON
// comparison (BSONElement::woCompare with field names, no collation), used
// as the oracle for the order property until bsonkit.Compare exists and
// alongside it afterwards. Numbers compare as exact rationals.
func refCompare(a, b bson.RawValue) int {
	ra, rb := refRank(a.Type), refRank(b.Type)
	if ra != rb {
		return cmpInt(ra, rb)
	}
	switch a.Type {
	case bson.TypeMinKey, bson.TypeMaxKey, bson.TypeNull, bson.TypeUndefined:
		return 0
	case bson.TypeDouble, bson.TypeInt32, bson.TypeInt64, bson.TypeDecimal128:
		return refNumCompare(a, b)
	case bson.TypeString, bson.TypeSymbol:
		return bytes.Compare(rawStr(a), rawStr(b))
	case bson.TypeJavaScript:
		return bytes.Compare(rawStr(a), rawStr(b))
	case bson.TypeEmbeddedDocument:
		return refDocCompare(a.Value, b.Value, true)
	case bson.TypeArray:
		return refDocCompare(a.Value, b.Value, false)
	case bson.TypeBinary:
		la, lb := binary.LittleEndian.Uint32(a.Value), binary.LittleEndian.Uint32(b.Value)
		if la != lb {
			return cmpInt(int(la), int(lb))
		}
		return bytes.Compare(a.Value[4:], b.Value[4:])
	case bson.TypeObjectID:
		return bytes.Compare(a.Value, b.Value)
	case bson.TypeBoolean:
		return cmpInt(int(a.Value[0]), int(b.Value[0]))
	case bson.TypeDateTime:
		x, y := a.DateTime(), b.DateTime()
		return cmpInt64(x, y)
	case bson.TypeTimestamp:
		x, y := binary.LittleEndian.Uint64(a.Value), binary.LittleEndian.Uint64(b.Value)
		switch {
		case x < y:
			return -1
		case x > y:
			return 1
		}
		return 0
	case bson.TypeRegex:
		pa, fa := a.Regex()
		pb, fb := b.Regex()
		if c := bytes.Compare([]byte(pa), []byte(pb)); c != 0 {
			return c
		}
		return bytes.Compare([]byte(fa), []byte(fb))
	case bson.TypeDBPointer:
		if len(a.Value) != len(b.Value) {
			return cmpInt(len(a.Value), len(b.Value))
		}
		return bytes.Compare(a.Value, b.Value)
	case bson.TypeCodeWithScope:
		ca, sa := a.CodeWithScope()
		cb, sb := b.CodeWithScope()
		if c := bytes.Compare([]byte(ca), []byte(cb)); c != 0 {
			return c
		}
		return refDocCompare(sa, sb, true)
	}
	panic("refCompare: type " + a.Type.String())
}

func rawStr(v bson.RawValue) []byte {
	n := binary.LittleEndian.Uint32(v.Value)
	return v.Value[4 : 4+n-1]
}

func refDocCompare(a, b []byte, names bool) int {
	ea, _ := bson.Raw(a).Elements()
	eb, _ := bson.Raw(b).Elements()
	for i := 0; ; i++ {
		switch {
		case i == len(ea) && i == len(eb):
			return 0
		case i == len(ea):
			return -1
		case i == len(eb):
			return 1
		}
		va, vb := ea[i].Value(), eb[i].Value()
		if ra, rb := refRank(va.Type), refRank(vb.Type); ra != rb {
			return cmpInt(ra, rb)
		}
		if names {
			if c := bytes.Compare([]byte(ea[i].Key()), []byte(eb[i].Key())); c != 0 {
				return c
			}
		}
		if c := refCompare(va, vb); c != 0 {
			return c
		}
	}
}

// refRank is MongoDB's canonicalizeBSONType.
func refRank(t bson.Type) int {
	switch t {
	case bson.TypeMinKey:
		return -1
	case bson.TypeUndefined:
		return 0
	case bson.TypeNull:
		return 5
	case bson.TypeDouble, bson.TypeInt32, bson.TypeInt64, bson.TypeDecimal128:
		return 10
	case bson.TypeString, bson.TypeSymbol:
		return 15
	case bson.TypeEmbeddedDocument:
		return 20
	case bson.TypeArray:
		return 25
	case bson.TypeBinary:
		return 30
	case bson.TypeObjectID:
		return 35
	case bson.TypeBoolean:
		return 40
	case bson.TypeDateTime:
		return 45
	case bson.TypeTimestamp:
		return 47
	case bson.TypeRegex:
		return 50
	case bson.TypeDBPointer:
		return 55
	case bson.TypeJavaScript:
		return 60
	case bson.TypeCodeWithScope:
		return 65
	case bson.TypeMaxKey:
		return 127
	}
	panic("refRank")
}

// refNum is a number as NaN, ±Inf or an exact rational.
type refNum struct {
	nan bool
	inf int
	r   *big.Rat
}

func toRefNum(v bson.RawValue) refNum {
	switch v.Type {
	case bson.TypeInt32:
		return refNum{r: new(big.Rat).SetInt64(int64(v.Int32()))}
	case bson.TypeInt64:
		return refNum{r: new(big.Rat).SetInt64(v.Int64())}
	case bson.TypeDouble:
		f := v.Double()
		switch {
		case math.IsNaN(f):
			return refNum{nan: true}
		case math.IsInf(f, 1):
			return refNum{inf: 1}
		case math.IsInf(f, -1):
			return refNum{inf: -1}
		}
		return refNum{r: new(big.Rat).SetFloat64(f)}
	case bson.TypeDecimal128:
		d := v.Decimal128()
		if d.IsNaN() {
			return refNum{nan: true}
		}
		if s := d.IsInf(); s != 0 {
			return refNum{inf: s}
		}
		c, e, err := d.BigInt()
		if err != nil {
			panic(err)
		}
		// IEEE 754-2008: a coefficient above 10^34-1 is non-canonical and
		// reads as zero (the driver's BigInt does not apply this rule).
		if new(big.Int).Abs(c).Cmp(new(big.Int).Exp(big.NewInt(10), big.NewInt(34), nil)) >= 0 {
			c.SetInt64(0)
		}
		r := new(big.Rat).SetInt(c)
		p := new(big.Rat).SetInt(new(big.Int).Exp(big.NewInt(10), big.NewInt(int64(abs(e))), nil))
		if e >= 0 {
			r.Mul(r, p)
		} else {
			r.Quo(r, p)
		}
		return refNum{r: r}
	}
	panic("toRefNum")
}

func refNumCompare(a, b bson.RawValue) int {
	x, y := toRefNum(a), toRefNum(b)
	switch {
	case x.nan && y.nan:
		return 0
	case x.nan:
		return -1
	case y.nan:
		return 1
	case x.inf != 0 || y.inf != 0:
		return cmpInt(x.inf, y.inf)
	}
	return x.r.Cmp(y.r)
}

func abs(x int) int {
	if x < 0 {
		return -x
	}
	return x
}

func cmpInt(a, b int) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

func cmpInt64(a, b int64) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}
