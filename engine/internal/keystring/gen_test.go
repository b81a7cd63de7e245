package keystring

import (
	"math"
	"strconv"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/x/bsonx/bsoncore"
	"pgregory.net/rapid"
)

// mustValue marshals a Go value to a bson.RawValue.
func mustValue(x any) bson.RawValue {
	t, b, err := bson.MarshalValue(x)
	if err != nil {
		panic(err)
	}
	return bson.RawValue{Type: t, Value: b}
}

func dec(s string) bson.RawValue {
	d, err := bson.ParseDecimal128(s)
	if err != nil {
		panic(s + ": " + err.Error())
	}
	return mustValue(d)
}

// genNumber draws numbers of all four types, biased towards values that
// collide across types and towards the edges of each type.
func genNumber() *rapid.Generator[bson.RawValue] {
	small := rapid.IntRange(-300, 300)
	return rapid.Custom(func(t *rapid.T) bson.RawValue {
		switch rapid.IntRange(0, 9).Draw(t, "kind") {
		case 0:
			return mustValue(int32(small.Draw(t, "i32s")))
		case 1:
			return mustValue(rapid.Int32().Draw(t, "i32"))
		case 2:
			return mustValue(rapid.Int64().Draw(t, "i64"))
		case 3:
			return mustValue(float64(small.Draw(t, "fs")) / float64(rapid.SampledFrom([]int{1, 2, 4, 10, 3}).Draw(t, "div")))
		case 4:
			return mustValue(rapid.Float64().Draw(t, "f"))
		case 5:
			return mustValue(math.Float64frombits(rapid.Uint64().Draw(t, "fbits")))
		case 6:
			return mustValue(rapid.SampledFrom([]float64{
				math.NaN(), math.Inf(1), math.Inf(-1), 0, math.Copysign(0, -1),
				math.MaxFloat64, -math.MaxFloat64, math.SmallestNonzeroFloat64, -math.SmallestNonzeroFloat64,
				1 << 63, -(1 << 63), 1 << 53, 1<<53 + 2, 0.1, -0.1, 1e-300, 9007199254740993,
			}).Draw(t, "fspecial"))
		case 7:
			// decimal: random coefficient and exponent.
			coef := rapid.OneOf(rapid.Int64Range(-1000, 1000), rapid.Int64()).Draw(t, "coef")
			exp := rapid.OneOf(rapid.IntRange(-20, 20), rapid.IntRange(-6176, 6111)).Draw(t, "exp")
			s := strconv.FormatInt(coef, 10) + "E" + strconv.Itoa(exp)
			d, err := bson.ParseDecimal128(s)
			if err != nil {
				return mustValue(int32(coef))
			}
			return mustValue(d)
		case 8:
			return dec(rapid.SampledFrom([]string{
				"NaN", "-NaN", "Infinity", "-Infinity", "0", "-0", "0E-6176", "0E+6111",
				"1", "1.0", "1.00000000000000000000000000000000", "-1", "0.1", "-0.1",
				"9999999999999999999999999999999999E6111", "1E-6176", "-1E-6176",
				"9223372036854775807", "9223372036854775808", "-9223372036854775808",
				"0.1000000000000000055511151231257827", "0.1000000000000000055511151231257828",
				"2147483647", "2147483648", "-2147483648", "-2147483649",
			}).Draw(t, "dspecial"))
		default:
			// a random raw decimal128 bit pattern, including non-canonical ones.
			return mustValue(bson.NewDecimal128(rapid.Uint64().Draw(t, "dh"), rapid.Uint64().Draw(t, "dl")))
		}
	})
}

func genString() *rapid.Generator[string] {
	return rapid.StringOfN(rapid.SampledFrom([]rune{'a', 'b', 0, 1, 0x7F, 'é', 0xFFFD}), 0, 4, -1)
}

func genCString() *rapid.Generator[string] {
	return rapid.StringOfN(rapid.SampledFrom([]rune{'a', 'b', 1, 'é'}), 0, 3, -1)
}

// genValue draws any BSON value, nesting documents and arrays up to depth.
func genValue(depth int) *rapid.Generator[bson.RawValue] {
	return rapid.Custom(func(t *rapid.T) bson.RawValue {
		max := 18
		if depth <= 0 {
			max = 16
		}
		switch rapid.IntRange(0, max).Draw(t, "type") {
		case 0, 1, 2:
			return genNumber().Draw(t, "num")
		case 3:
			return mustValue(genString().Draw(t, "str"))
		case 4:
			return mustValue(bson.Symbol(genString().Draw(t, "sym")))
		case 5:
			return rapid.SampledFrom([]bson.RawValue{
				mustValue(bson.MinKey{}), mustValue(bson.MaxKey{}), mustValue(bson.Null{}), mustValue(bson.Undefined{}),
				mustValue(true), mustValue(false),
			}).Draw(t, "const")
		case 6:
			sub := rapid.SampledFrom([]byte{0, 1, 2, 4, 5, 0x80}).Draw(t, "subtype")
			data := rapid.SliceOfN(rapid.Byte(), 0, 4).Draw(t, "bin")
			return bson.RawValue{Type: bson.TypeBinary, Value: bsoncore.AppendBinary(nil, sub, data)}
		case 7:
			var oid bson.ObjectID
			copy(oid[:], rapid.SliceOfN(rapid.SampledFrom([]byte{0, 1, 0x7F, 0x80, 0xFF}), 12, 12).Draw(t, "oid"))
			return mustValue(oid)
		case 8:
			return mustValue(bson.DateTime(rapid.OneOf(rapid.Int64Range(-3, 3), rapid.Int64()).Draw(t, "date")))
		case 9:
			return mustValue(bson.Timestamp{T: rapid.Uint32Range(0, 3).Draw(t, "tt"), I: rapid.Uint32().Draw(t, "ti")})
		case 10:
			return mustValue(bson.Regex{Pattern: genCString().Draw(t, "pat"), Options: genCString().Draw(t, "opt")})
		case 11:
			var oid bson.ObjectID
			oid[11] = rapid.Byte().Draw(t, "dbpoid")
			return mustValue(bson.DBPointer{DB: genCString().Draw(t, "dbpns"), Pointer: oid})
		case 12:
			if depth > 0 && rapid.Bool().Draw(t, "cws") {
				scope := genDoc(depth-1).Draw(t, "scope")
				return bson.RawValue{Type: bson.TypeCodeWithScope, Value: bsoncore.AppendCodeWithScope(nil, genString().Draw(t, "code"), scope)}
			}
			return mustValue(bson.JavaScript(genString().Draw(t, "js")))
		case 13, 14, 15, 16:
			return genNumber().Draw(t, "num2")
		case 17:
			return bson.RawValue{Type: bson.TypeEmbeddedDocument, Value: genDoc(depth-1).Draw(t, "doc")}
		default:
			n := rapid.IntRange(0, 3).Draw(t, "alen")
			idx, arr := bsoncore.AppendArrayStart(nil)
			for i := 0; i < n; i++ {
				v := genValue(depth-1).Draw(t, "elem")
				arr = bsoncore.AppendHeader(arr, bsoncore.Type(v.Type), strconv.Itoa(i))
				arr = append(arr, v.Value...)
			}
			arr, _ = bsoncore.AppendArrayEnd(arr, idx)
			return bson.RawValue{Type: bson.TypeArray, Value: arr}
		}
	})
}

// genDoc draws a document of up to three fields with short names.
func genDoc(depth int) *rapid.Generator[[]byte] {
	return rapid.Custom(func(t *rapid.T) []byte {
		n := rapid.IntRange(0, 3).Draw(t, "dlen")
		idx, doc := bsoncore.AppendDocumentStart(nil)
		for i := 0; i < n; i++ {
			name := rapid.SampledFrom([]string{"a", "b", "ab", "", "_id"}).Draw(t, "name")
			v := genValue(depth).Draw(t, "field")
			doc = bsoncore.AppendHeader(doc, bsoncore.Type(v.Type), name)
			doc = append(doc, v.Value...)
		}
		doc, _ = bsoncore.AppendDocumentEnd(doc, idx)
		return doc
	})
}
