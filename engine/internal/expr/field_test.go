package expr

import (
	"testing"

	"go.mongodb.org/mongo-driver/v2/bson"
)

// TestLookupField checks lookupField against the driver's lookup for
// every BSON type, and that malformed bytes answer not found.
func TestLookupField(t *testing.T) {
	doc, err := bson.Marshal(bson.D{
		{Key: "d", Value: 1.5}, {Key: "s", Value: "x"}, {Key: "o", Value: bson.D{{Key: "a", Value: 1}}},
		{Key: "a", Value: bson.A{1, 2}}, {Key: "b", Value: bson.Binary{Subtype: 0, Data: []byte{1, 2}}},
		{Key: "u", Value: bson.Undefined{}}, {Key: "id", Value: bson.NewObjectID()}, {Key: "t", Value: true},
		{Key: "dt", Value: bson.DateTime(5)}, {Key: "n", Value: nil}, {Key: "re", Value: bson.Regex{Pattern: "a", Options: "i"}},
		{Key: "dbp", Value: bson.DBPointer{DB: "x", Pointer: bson.NewObjectID()}}, {Key: "js", Value: bson.JavaScript("f")},
		{Key: "sym", Value: bson.Symbol("y")}, {Key: "cws", Value: bson.CodeWithScope{Code: "c", Scope: bson.D{}}},
		{Key: "i", Value: int32(3)}, {Key: "ts", Value: bson.Timestamp{T: 1, I: 2}}, {Key: "l", Value: int64(4)},
		{Key: "dec", Value: bson.NewDecimal128(1, 2)}, {Key: "min", Value: bson.MinKey{}}, {Key: "max", Value: bson.MaxKey{}},
		{Key: "s", Value: "second"},
	})
	if err != nil {
		t.Fatal(err)
	}
	for _, k := range []string{"d", "s", "o", "a", "b", "u", "id", "t", "dt", "n", "re", "dbp", "js", "sym", "cws", "i", "ts", "l", "dec", "min", "max", "nope", ""} {
		want, werr := bson.Raw(doc).LookupErr(k)
		got, ok := lookupField(doc, k)
		if ok != (werr == nil) || got.Type != want.Type || string(got.Value) != string(want.Value) {
			t.Errorf("%q: got %v %v, want %v %v", k, got, ok, want, werr)
		}
	}
	for n := 0; n < len(doc); n++ {
		lookupField(doc[:n], "max") // must not panic on truncated bytes
	}
}
