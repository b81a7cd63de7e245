package plan

import (
	"encoding/hex"
	"fmt"
	"strconv"
	"strings"

	"go.mongodb.org/mongo-driver/v2/bson"

	"github.com/formworkdb/formwork/engine/internal/bsonkit"
)

// String renders an interval as mongod's Interval::toString does, in the
// direction it is scanned: "[\"a\", \"a\"]", "(10000, inf.0]".
func (iv interval) String() string { return iv.format(false) }

// format renders the interval; keyed prints strings as the collation
// keys a collated index holds, as mongod does: CollationKey(0x…).
func (iv interval) format(keyed bool) string {
	var b strings.Builder
	if iv.loInc {
		b.WriteByte('[')
	} else {
		b.WriteByte('(')
	}
	formatValueOpt(&b, iv.lo, keyed)
	b.WriteString(", ")
	formatValueOpt(&b, iv.hi, keyed)
	if iv.hiInc {
		b.WriteByte(']')
	} else {
		b.WriteByte(')')
	}
	return b.String()
}

// reversed returns the interval with its ends swapped, as mongod prints
// bounds of a descending field or a backward scan.
func (iv interval) reversed() interval {
	return interval{lo: iv.hi, hi: iv.lo, loInc: iv.hiInc, hiInc: iv.loInc}
}

// formatDouble follows mongod's StringBuilder::appendDoubleNice: %.16g,
// then ".0" when the result has no '.', 'E' or 'N' (so "inf.0").
func formatDouble(f float64) string {
	s := strconv.FormatFloat(f, 'g', 16, 64)
	switch s {
	case "+Inf":
		s = "inf"
	case "-Inf":
		s = "-inf"
	case "NaN":
		s = "nan"
	}
	if strings.Contains(s, "e") {
		// %g writes two-digit exponents at least: 1e+20.
		mant, exp, _ := strings.Cut(s, "e")
		sign := exp[:1]
		digits := strings.TrimLeft(exp[1:], "0")
		for len(digits) < 2 {
			digits = "0" + digits
		}
		s = mant + "e" + sign + digits
	}
	if !strings.ContainsAny(s, ".EN") {
		s += ".0"
	}
	return s
}

func formatValue(b *strings.Builder, v bson.RawValue) { formatValueOpt(b, v, false) }

// maxFormatDepth is how deep formatValue descends into documents and
// arrays; deeper levels print as "...", as mongod's BSONObj::toString
// stops at its recursion limit. It bounds the recursion whatever the
// input (documents reaching the planner are at most 200 levels deep).
const maxFormatDepth = 100

// formatValueOpt is formatValue; keyed prints strings as collation keys.
func formatValueOpt(b *strings.Builder, v bson.RawValue, keyed bool) {
	formatValueDepth(b, v, keyed, 0)
}

// formatValueDepth is formatValueOpt at nesting depth.
func formatValueDepth(b *strings.Builder, v bson.RawValue, keyed bool, depth int) {
	switch v.Type {
	case bson.TypeMinKey:
		b.WriteString("MinKey")
	case bson.TypeMaxKey:
		b.WriteString("MaxKey")
	case bson.TypeNull:
		b.WriteString("null")
	case bson.TypeUndefined:
		b.WriteString("undefined")
	case bson.TypeDouble:
		b.WriteString(formatDouble(v.Double()))
	case bson.TypeInt32:
		b.WriteString(strconv.FormatInt(int64(v.Int32()), 10))
	case bson.TypeInt64:
		b.WriteString(strconv.FormatInt(v.Int64(), 10))
	case bson.TypeDecimal128:
		fmt.Fprintf(b, "NumberDecimal(\"%s\")", v.Decimal128().String())
	case bson.TypeString, bson.TypeSymbol:
		s, _ := v.StringValueOK()
		if v.Type == bson.TypeSymbol {
			s = v.Symbol()
		}
		if keyed {
			b.WriteString("CollationKey(0x" + hex.EncodeToString([]byte(s)) + ")")
			return
		}
		b.WriteByte('"')
		b.WriteString(escape(s))
		b.WriteByte('"')
	case bson.TypeBoolean:
		b.WriteString(strconv.FormatBool(v.Boolean()))
	case bson.TypeDateTime:
		fmt.Fprintf(b, "new Date(%d)", v.DateTime())
	case bson.TypeObjectID:
		fmt.Fprintf(b, "ObjectId('%s')", v.ObjectID().Hex())
	case bson.TypeRegex:
		p, o := v.Regex()
		fmt.Fprintf(b, "/%s/%s", p, o)
	case bson.TypeTimestamp:
		t, i := v.Timestamp()
		fmt.Fprintf(b, "Timestamp(%d, %d)", t, i)
	case bson.TypeBinary:
		st, data := v.Binary()
		fmt.Fprintf(b, "BinData(%d, %s)", st, strings.ToUpper(hex.EncodeToString(data)))
	case bson.TypeEmbeddedDocument, bson.TypeArray:
		if depth >= maxFormatDepth {
			b.WriteString("...")
			return
		}
		open, closeCh := "{", "}"
		if v.Type == bson.TypeArray {
			open, closeCh = "[", "]"
		}
		n := 0
		bsonkit.ForEach(v.Value, func(k string, e bson.RawValue) bool {
			if n == 0 {
				b.WriteString(open + " ")
			} else {
				b.WriteString(", ")
			}
			n++
			if v.Type == bson.TypeEmbeddedDocument {
				b.WriteString(k + ": ")
			}
			formatValueDepth(b, e, keyed, depth+1)
			return true
		})
		if n == 0 {
			b.WriteString(open + closeCh)
		} else {
			b.WriteString(" " + closeCh)
		}
	default:
		b.WriteString(v.String())
	}
}

func escape(s string) string {
	if !strings.ContainsAny(s, "\"\\\n\r\t") {
		return s
	}
	r := strings.NewReplacer(`\`, `\\`, `"`, `\"`, "\n", `\n`, "\r", `\r`, "\t", `\t`)
	return r.Replace(s)
}
