package keystring

import (
	"math"
	"testing"

	"go.mongodb.org/mongo-driver/v2/bson"
)

func BenchmarkAppendValue(b *testing.B) {
	cases := []struct {
		name string
		v    bson.RawValue
	}{
		{"type=int32", mustValue(int32(123456))},
		{"type=int64", mustValue(int64(1) << 50)},
		{"type=double", mustValue(3.25)},
		{"type=double-frac", mustValue(0.1)},
		{"type=double-tiny", mustValue(math.SmallestNonzeroFloat64)},
		{"type=decimal", dec("1234.5678")},
		{"type=string", mustValue("hello, world")},
		{"type=objectid", mustValue(bson.NewObjectID())},
		{"type=document", mustValue(bson.D{{Key: "a", Value: int32(1)}, {Key: "b", Value: "x"}})},
	}
	for _, c := range cases {
		b.Run(c.name, func(b *testing.B) {
			buf := make([]byte, 0, 1024)
			b.ReportAllocs()
			for i := 0; i < b.N; i++ {
				buf = AppendValue(buf[:0], c.v, false)
			}
		})
	}
}

func BenchmarkDecodeValue(b *testing.B) {
	key := AppendValue(nil, mustValue(bson.D{{Key: "a", Value: int32(1)}, {Key: "b", Value: "x"}}), false)
	b.ReportAllocs()
	for i := 0; i < b.N; i++ {
		if _, _, err := DecodeValue(key, false); err != nil {
			b.Fatal(err)
		}
	}
}
