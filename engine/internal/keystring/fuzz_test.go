package keystring

import (
	"bytes"
	"testing"

	"go.mongodb.org/mongo-driver/v2/bson"
)

// FuzzDecodeValue feeds arbitrary bytes to DecodeValue: it must not panic,
// and whatever it decodes must re-encode to the bytes it consumed.
func FuzzDecodeValue(f *testing.F) {
	for _, v := range []bson.RawValue{
		mustValue(int32(5)), mustValue(-0.1), dec("1E-6176"), mustValue("a\x00b"),
		mustValue(bson.D{{Key: "a", Value: bson.A{int64(1), nil}}}),
		mustValue(bson.CodeWithScope{Code: "c", Scope: bson.D{{Key: "x", Value: true}}}),
	} {
		f.Add(AppendValue(nil, v, false), false)
		f.Add(AppendValue(nil, v, true), true)
	}
	f.Fuzz(func(t *testing.T, key []byte, desc bool) {
		v, rest, err := DecodeValue(key, desc)
		if err != nil {
			return
		}
		if err := v.Validate(); err != nil {
			t.Fatalf("decoded invalid value %v: %v", v, err)
		}
		consumed := key[:len(key)-len(rest)]
		if re := AppendValue(nil, v, desc); !bytes.Equal(re, consumed) {
			// Non-canonical digit encodings (a trailing zero pair) decode
			// but re-encode shorter; anything else is a bug.
			v2, _, err := DecodeValue(re, desc)
			if err != nil || !bytes.Equal(AppendValue(nil, v2, desc), re) {
				t.Fatalf("re-encoding %x gives %x", consumed, re)
			}
		}
	})
}
