package bsonkit

import (
	"testing"

	"go.mongodb.org/mongo-driver/v2/bson"
)

// FuzzValidate feeds arbitrary bytes to Validate: it never panics, and a
// document it accepts can be walked by the driver's accessors and
// compared with itself (equal) without panicking.
func FuzzValidate(f *testing.F) {
	for _, d := range []bson.D{
		{},
		{{Key: "a", Value: int32(1)}, {Key: "b", Value: "x"}},
		{{Key: "n", Value: bson.D{{Key: "m", Value: bson.A{1.5, nil, true, bson.D{{Key: "z", Value: int64(7)}}}}}}},
		{{Key: "bin", Value: bson.Binary{Subtype: 4, Data: make([]byte, 16)}}, {Key: "re", Value: bson.Regex{Pattern: "a.*", Options: "i"}}},
		{{Key: "cws", Value: bson.CodeWithScope{Code: "f()", Scope: bson.D{{Key: "x", Value: 1}}}}},
	} {
		b, err := bson.Marshal(d)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b)
	}
	f.Add([]byte{5, 0, 0, 0})
	f.Add([]byte{0xff, 0xff, 0xff, 0x7f, 0})
	f.Fuzz(func(t *testing.T, b []byte) {
		if Validate(b) != nil {
			return
		}
		raw := bson.Raw(b)
		elems, err := raw.Elements()
		if err != nil {
			t.Fatalf("Validate accepted %x but Elements fails: %v", b, err)
		}
		for _, e := range elems {
			_ = e.Key()
			_ = e.Value().String()
		}
		v := bson.RawValue{Type: bson.TypeEmbeddedDocument, Value: b}
		if Compare(v, v) != 0 {
			t.Fatalf("document %x is not equal to itself", b)
		}
	})
}
