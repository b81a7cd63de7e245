package timeseries

import (
	"testing"

	"go.mongodb.org/mongo-driver/v2/bson"
)

// FuzzDecodeUnpack feeds arbitrary documents to Decode and Unpack, as a
// user's $_internalUnpackBucket over any collection may: an error or
// measurements, never a panic, and bounded work.
func FuzzDecodeUnpack(f *testing.F) {
	o := &Options{TimeField: "t", MetaField: "m", MaxSpan: 3600, Rounding: 3600}
	seed := func(d bson.D) {
		b, _ := bson.Marshal(d)
		f.Add([]byte(b))
	}
	seed(bson.D{{Key: "control", Value: bson.D{{Key: "version", Value: 1}}}, {Key: "data", Value: bson.D{{Key: "t", Value: bson.D{{Key: "0", Value: bson.DateTime(1)}, {Key: "5", Value: bson.DateTime(2)}}}}}})
	seed(bson.D{{Key: "control", Value: bson.D{{Key: "version", Value: 2}}}, {Key: "data", Value: bson.D{{Key: "t", Value: bson.Binary{Subtype: ColumnSubtype, Data: []byte{2, 0, 1, 9, 2, 0}}}}}})
	seed(bson.D{{Key: "control", Value: bson.D{{Key: "version", Value: 1}}}, {Key: "data", Value: bson.D{{Key: "t", Value: bson.D{{Key: "63999", Value: bson.DateTime(1)}}}}}})
	f.Fuzz(func(t *testing.T, doc []byte) {
		if bson.Raw(doc).Validate() != nil {
			return
		}
		b, err := o.Decode(doc)
		if err != nil {
			return
		}
		u := o.Unpack(b, nil)
		for i := 0; u.Next() != nil; i++ {
			if i > maxPositions {
				t.Fatal("unpacked more measurements than a bucket may hold")
			}
		}
	})
}
