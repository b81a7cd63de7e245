package keystring

import (
	"bytes"
	"math"
	"testing"

	"go.mongodb.org/mongo-driver/v2/bson"
	"pgregory.net/rapid"
)

func enc(v bson.RawValue) []byte { return AppendValue(nil, v, false) }

func sign(x int) int {
	switch {
	case x < 0:
		return -1
	case x > 0:
		return 1
	}
	return 0
}

func TestAppendValueEqualNumbers(t *testing.T) {
	groups := [][]bson.RawValue{
		{mustValue(int32(1)), mustValue(int64(1)), mustValue(1.0), dec("1"), dec("1.0"), dec("1.00000000000000000000000000000000"), dec("0.001E3")},
		{mustValue(int32(0)), mustValue(int64(0)), mustValue(0.0), mustValue(math.Copysign(0, -1)), dec("0"), dec("-0"), dec("0E-6176"), dec("-0E+6111")},
		{mustValue(math.NaN()), mustValue(-math.NaN()), dec("NaN"), dec("-NaN")},
		{mustValue(math.Inf(1)), dec("Infinity")},
		{mustValue(math.Inf(-1)), dec("-Infinity")},
		{mustValue(int32(-2147483648)), mustValue(int64(-2147483648)), mustValue(-2147483648.0), dec("-2147483648")},
		{mustValue(int64(math.MinInt64)), mustValue(float64(math.MinInt64)), dec("-9223372036854775808")},
		{mustValue(0.5), dec("0.5"), dec("5E-1")},
		{mustValue(1e22), dec("1" + zeros(22))},
		{mustValue(0x1p100), dec("1267650600228229401496703205376")},
		{mustValue("abc"), mustValue(bson.Symbol("abc"))},
	}
	for _, g := range groups {
		want := enc(g[0])
		for _, v := range g[1:] {
			if got := enc(v); !bytes.Equal(got, want) {
				t.Errorf("%v encodes to %x, want %x as for %v", v, got, want, g[0])
			}
		}
	}
}

func zeros(n int) string { return string(bytes.Repeat([]byte{'0'}, n)) }

// TestAppendValueOrder lists values in strictly ascending MongoDB order.
func TestAppendValueOrder(t *testing.T) {
	vals := []bson.RawValue{
		mustValue(bson.MinKey{}),
		mustValue(bson.Undefined{}),
		mustValue(bson.Null{}),
		mustValue(math.NaN()),
		mustValue(math.Inf(-1)),
		dec("-9999999999999999999999999999999999E6111"),
		mustValue(-math.MaxFloat64),
		mustValue(float64(math.MinInt64) * 2),
		mustValue(int64(math.MinInt64)),
		mustValue(int64(math.MinInt64 + 1)),
		mustValue(int32(-10)),
		dec("-1.5"),
		mustValue(int32(-1)),
		mustValue(-0.1),
		dec("-0.1"),
		mustValue(-math.SmallestNonzeroFloat64),
		dec("-1E-6176"),
		mustValue(0.0),
		dec("1E-6176"),
		mustValue(math.SmallestNonzeroFloat64),
		dec("0.01"),
		dec("0.0999999999999999999999999999999999"),
		dec("0.1"),
		mustValue(0.1),
		dec("0.1000000000000000055511151231257828"),
		dec("0.9"),
		dec("0.99"),
		mustValue(int32(1)),
		dec("1.000000000000000000000000000000001"),
		mustValue(1.5),
		mustValue(int32(2)),
		mustValue(int32(9)),
		mustValue(int32(10)),
		mustValue(int32(11)),
		mustValue(int32(100)),
		mustValue(int64(1) << 53),
		mustValue(float64(1<<53) + 2),
		mustValue(int64(math.MaxInt64)),
		mustValue(float64(1 << 63)),
		mustValue(math.MaxFloat64),
		dec("9999999999999999999999999999999999E6111"),
		mustValue(math.Inf(1)),
		mustValue(""),
		mustValue("\x00"),
		mustValue("\x00\x00"),
		mustValue("\x00a"),
		mustValue("\x01"),
		mustValue("a"),
		mustValue("a\x00"),
		mustValue("a\x00b"),
		mustValue("a\x01"),
		mustValue("ab"),
		mustValue("b"),
		mustValue("\xff"),
		mustValue(bson.D{}),
		mustValue(bson.D{{Key: "a", Value: nil}}),
		mustValue(bson.D{{Key: "b", Value: nil}}),
		mustValue(bson.D{{Key: "a", Value: int32(1)}}),
		mustValue(bson.D{{Key: "a", Value: int32(1)}, {Key: "a", Value: int32(1)}}),
		mustValue(bson.D{{Key: "a", Value: 2.0}}),
		mustValue(bson.D{{Key: "b", Value: math.NaN()}}),
		mustValue(bson.D{{Key: "a", Value: "x"}}),
		mustValue(bson.D{{Key: "a", Value: false}}),
		mustValue(bson.D{{Key: "a", Value: true}}),
		mustValue(bson.D{{Key: "b", Value: false}}),
		mustValue(bson.A{}),
		mustValue(bson.A{nil}),
		mustValue(bson.A{int32(1)}),
		mustValue(bson.A{int32(1), bson.MinKey{}}),
		mustValue(bson.A{int32(1), int32(1)}),
		mustValue(bson.A{int32(2)}),
		mustValue(bson.A{bson.A{}}),
		mustValue(bson.Binary{Subtype: 0x80, Data: nil}),
		mustValue(bson.Binary{Subtype: 0, Data: []byte{0xFF}}),
		mustValue(bson.Binary{Subtype: 1, Data: []byte{0x00}}),
		mustValue(bson.Binary{Subtype: 0, Data: []byte{0, 0}}),
		mustValue(bson.ObjectID{}),
		mustValue(bson.ObjectID{11: 1}),
		mustValue(bson.ObjectID{0: 0xFF}),
		mustValue(false),
		mustValue(true),
		mustValue(bson.DateTime(math.MinInt64)),
		mustValue(bson.DateTime(-1)),
		mustValue(bson.DateTime(0)),
		mustValue(bson.DateTime(math.MaxInt64)),
		mustValue(bson.Timestamp{T: 0, I: 0}),
		mustValue(bson.Timestamp{T: 0, I: math.MaxUint32}),
		mustValue(bson.Timestamp{T: 1, I: 0}),
		mustValue(bson.Timestamp{T: math.MaxUint32, I: 0}),
		mustValue(bson.Regex{Pattern: "", Options: "i"}),
		mustValue(bson.Regex{Pattern: "a", Options: ""}),
		mustValue(bson.Regex{Pattern: "a", Options: "i"}),
		mustValue(bson.Regex{Pattern: "ab", Options: ""}),
		mustValue(bson.DBPointer{DB: "z", Pointer: bson.ObjectID{}}),
		mustValue(bson.DBPointer{DB: "ab", Pointer: bson.ObjectID{}}),
		mustValue(bson.DBPointer{DB: "ab", Pointer: bson.ObjectID{11: 1}}),
		mustValue(bson.JavaScript("")),
		mustValue(bson.JavaScript("a")),
		mustValue(bson.CodeWithScope{Code: "", Scope: bson.D{{Key: "z", Value: int32(1)}}}),
		mustValue(bson.CodeWithScope{Code: "a", Scope: bson.D{}}),
		mustValue(bson.CodeWithScope{Code: "a", Scope: bson.D{{Key: "a", Value: int32(1)}}}),
		mustValue(bson.MaxKey{}),
	}
	for i := 1; i < len(vals); i++ {
		a, b := vals[i-1], vals[i]
		if c := refCompare(a, b); c >= 0 {
			t.Fatalf("test table: refCompare(%v, %v) = %d, want < 0", a, b, c)
		}
		if c := bytes.Compare(enc(a), enc(b)); c >= 0 {
			t.Errorf("enc(%v) = %x not below enc(%v) = %x", a, enc(a), b, enc(b))
		}
		if c := bytes.Compare(AppendValue(nil, a, true), AppendValue(nil, b, true)); c <= 0 {
			t.Errorf("desc enc(%v) not above desc enc(%v)", a, b)
		}
	}
}

// TestAppendValueOrderProperty checks I2 against the reference comparator.
func TestAppendValueOrderProperty(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		a := genValue(2).Draw(t, "a")
		b := genValue(2).Draw(t, "b")
		want := sign(refCompare(a, b))
		if got := bytes.Compare(enc(a), enc(b)); got != want {
			t.Fatalf("bytes.Compare(enc(%v), enc(%v)) = %d, want %d\n%x\n%x", a, b, got, want, enc(a), enc(b))
		}
		if got := bytes.Compare(AppendValue(nil, a, true), AppendValue(nil, b, true)); got != -want {
			t.Fatalf("desc: got %d, want %d", got, -want)
		}
	})
}

// TestAppendValueNumberOrderProperty focuses the order property on numbers.
func TestAppendValueNumberOrderProperty(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		a := genNumber().Draw(t, "a")
		b := genNumber().Draw(t, "b")
		want := sign(refCompare(a, b))
		if got := bytes.Compare(enc(a), enc(b)); got != want {
			t.Fatalf("bytes.Compare(enc(%v), enc(%v)) = %d, want %d\n%x\n%x", a, b, got, want, enc(a), enc(b))
		}
	})
}

// TestCompoundOrderProperty checks I1 and I3: concatenated fields with mixed
// directions, followed by a record ID, compare field by field.
func TestCompoundOrderProperty(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		n := rapid.IntRange(1, 3).Draw(t, "n")
		desc := rapid.SliceOfN(rapid.Bool(), n, n).Draw(t, "desc")
		var ka, kb []byte
		want := 0
		for i := 0; i < n; i++ {
			a := genValue(1).Draw(t, "a")
			b := a
			if rapid.Bool().Draw(t, "differ") {
				b = genValue(1).Draw(t, "b")
			}
			ka = AppendValue(ka, a, desc[i])
			kb = AppendValue(kb, b, desc[i])
			if want == 0 {
				want = sign(refCompare(a, b))
				if desc[i] {
					want = -want
				}
			}
		}
		ka = append(ka, rapid.SliceOfN(rapid.Byte(), 0, 8).Draw(t, "ridA")...)
		kb = append(kb, rapid.SliceOfN(rapid.Byte(), 0, 8).Draw(t, "ridB")...)
		if want != 0 {
			if got := bytes.Compare(ka, kb); got != want {
				t.Fatalf("compound compare = %d, want %d\n%x\n%x", got, want, ka, kb)
			}
		}
	})
}

// TestPrefixFreeProperty checks I1 directly.
func TestPrefixFreeProperty(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		a := genValue(2).Draw(t, "a")
		b := genValue(2).Draw(t, "b")
		desc := rapid.Bool().Draw(t, "desc")
		ea, eb := AppendValue(nil, a, desc), AppendValue(nil, b, desc)
		if len(ea) < len(eb) && bytes.HasPrefix(eb, ea) || len(eb) < len(ea) && bytes.HasPrefix(ea, eb) {
			t.Fatalf("%x and %x: one is a proper prefix of the other", ea, eb)
		}
	})
}

// TestDecodeRoundTripProperty checks that decoding yields a value that
// compares equal and re-encodes to the same bytes, in both directions.
func TestDecodeRoundTripProperty(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		v := genValue(2).Draw(t, "v")
		desc := rapid.Bool().Draw(t, "desc")
		rid := rapid.SliceOfN(rapid.Byte(), 0, 4).Draw(t, "rid")
		key := append(AppendValue(nil, v, desc), rid...)
		got, rest, err := DecodeValue(key, desc)
		if err != nil {
			t.Fatalf("DecodeValue(%x): %v", key, err)
		}
		if !bytes.Equal(rest, rid) {
			t.Fatalf("rest = %x, want %x", rest, rid)
		}
		if err := got.Validate(); err != nil {
			t.Fatalf("decoded %v invalid: %v", got, err)
		}
		if refCompare(got, v) != 0 {
			t.Fatalf("decoded %v, want %v", got, v)
		}
		if re := AppendValue(nil, got, desc); !bytes.Equal(re, key[:len(key)-len(rid)]) {
			t.Fatalf("re-encoded %x, want %x", re, key)
		}
	})
}

func TestDecodeValueTypes(t *testing.T) {
	tests := []struct {
		in   bson.RawValue
		want bson.RawValue
	}{
		{mustValue(int64(5)), mustValue(int32(5))},
		{mustValue(5.0), mustValue(int32(5))},
		{dec("-2147483648"), mustValue(int32(-2147483648))},
		{mustValue(int64(-2147483649)), mustValue(int64(-2147483649))},
		{mustValue(int64(math.MinInt64)), mustValue(int64(math.MinInt64))},
		{mustValue(float64(1 << 63)), mustValue(float64(1 << 63))},
		{mustValue(0.1), mustValue(0.1)},
		{dec("0.1"), dec("0.1")},
		{dec("-1.25"), mustValue(-1.25)},
		{dec("1E-6176"), dec("1E-6176")},
		{dec("9999999999999999999999999999999999E6111"), dec("9999999999999999999999999999999999E6111")},
		{mustValue(math.SmallestNonzeroFloat64), mustValue(math.SmallestNonzeroFloat64)},
		{mustValue(math.Copysign(0, -1)), mustValue(int32(0))},
		{mustValue(bson.Symbol("s")), mustValue("s")},
		{mustValue(bson.D{{Key: "a", Value: bson.A{int64(1), "x\x00y"}}}), mustValue(bson.D{{Key: "a", Value: bson.A{int32(1), "x\x00y"}}})},
	}
	for _, tt := range tests {
		for _, desc := range []bool{false, true} {
			got, rest, err := DecodeValue(AppendValue(nil, tt.in, desc), desc)
			if err != nil || len(rest) != 0 {
				t.Fatalf("DecodeValue(%v) = %v, %x, %v", tt.in, got, rest, err)
			}
			if !got.Equal(tt.want) {
				t.Errorf("DecodeValue(enc(%v), desc=%v) = %v (%v), want %v (%v)", tt.in, desc, got, got.Type, tt.want, tt.want.Type)
			}
		}
	}
}

func TestDecodeCompound(t *testing.T) {
	vals := []bson.RawValue{mustValue("x"), mustValue(int32(3)), mustValue(bson.Null{})}
	desc := []bool{false, true, false}
	var key []byte
	for i, v := range vals {
		key = AppendValue(key, v, desc[i])
	}
	key = append(key, 0xDE, 0xAD)
	got, rest, err := Decode(key, desc)
	if err != nil {
		t.Fatal(err)
	}
	for i := range vals {
		if !got[i].Equal(vals[i]) {
			t.Errorf("field %d = %v, want %v", i, got[i], vals[i])
		}
	}
	if !bytes.Equal(rest, []byte{0xDE, 0xAD}) {
		t.Errorf("rest = %x", rest)
	}
}

func TestDecodeValueCorrupt(t *testing.T) {
	for _, k := range [][]byte{nil, {0x00}, {tagPos}, {tagPos, 0x80, 0x00}, {tagString, 'a'}, {tagString, 0, 7}, {tagObject, tagNaN, 'a', 0, tagString}, {tagInvalid}, {tagBinary, 0, 0, 0, 9, 0}} {
		if v, _, err := DecodeValue(k, false); err == nil {
			t.Errorf("DecodeValue(%x) = %v, want ErrCorrupt", k, v)
		}
	}
}

func TestAppendValueMalformed(t *testing.T) {
	// Truncated or foreign values must not panic.
	for _, v := range []bson.RawValue{
		{Type: bson.TypeDouble, Value: []byte{1}},
		{Type: bson.TypeString, Value: []byte{9, 0, 0, 0, 'a'}},
		{Type: bson.TypeString, Value: []byte{0xFF, 0xFF, 0xFF, 0xFF, 'a'}},
		{Type: bson.TypeEmbeddedDocument, Value: []byte{7, 0, 0, 0, 0x10, 'a', 0}},
		{Type: bson.TypeBinary, Value: []byte{0xFF, 0xFF, 0xFF, 0xFF, 0}},
		{Type: bson.TypeCodeWithScope, Value: []byte{20, 0, 0, 0, 2, 0, 0, 0, 'a', 0}},
		{Type: bson.TypeDBPointer, Value: []byte{2, 0, 0, 0, 'a', 0}},
		{Type: bson.TypeRegex, Value: []byte{'a'}},
		{Type: 0x42, Value: nil},
	} {
		_ = AppendValue(nil, v, true)
	}
}

func TestPrefixEndAndSuccessor(t *testing.T) {
	if got := PrefixEnd([]byte{1, 0xFF, 0xFF}); !bytes.Equal(got, []byte{2}) {
		t.Errorf("PrefixEnd = %x", got)
	}
	if got := PrefixEnd([]byte{0xFF}); got != nil {
		t.Errorf("PrefixEnd(ff) = %x, want nil", got)
	}
	if got := Successor([]byte{1}); !bytes.Equal(got, []byte{1, 0}) {
		t.Errorf("Successor = %x", got)
	}
}

func TestTypeRangeProperty(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		v := genValue(1).Draw(t, "v")
		u := genValue(1).Draw(t, "u")
		desc := rapid.Bool().Draw(t, "desc")
		lo, hi := TypeRange(u.Type, desc)
		e := AppendValue(nil, v, desc)
		in := bytes.Compare(lo, e) <= 0 && bytes.Compare(e, hi) < 0
		if want := refRank(u.Type) == refRank(v.Type); in != want {
			t.Fatalf("%v in TypeRange(%v) = %v, want %v", v, u.Type, in, want)
		}
	})
}
