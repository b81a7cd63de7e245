package update

import (
	"testing"

	"go.mongodb.org/mongo-driver/v2/bson"
)

func rawOf(t *testing.T, v any) bson.RawValue {
	t.Helper()
	b, err := bson.Marshal(bson.D{{Key: "v", Value: v}})
	if err != nil {
		t.Fatal(err)
	}
	return bson.Raw(b).Lookup("v")
}

// TestValueSetEquality: the set follows MongoDB's equality: numbers of
// different types equal by value, field order in documents significant.
func TestValueSetEquality(t *testing.T) {
	s := newValueSet(0)
	for _, v := range []any{int32(1), bson.D{{Key: "a", Value: 1}, {Key: "b", Value: 2}}, "x"} {
		if !s.add(rawOf(t, v)) {
			t.Fatalf("%v not added", v)
		}
	}
	d, _ := bson.ParseDecimal128("1.00")
	for _, v := range []any{int64(1), 1.0, d, bson.D{{Key: "a", Value: 1.0}, {Key: "b", Value: int64(2)}}, bson.Symbol("x")} {
		if !s.contains(rawOf(t, v)) || s.add(rawOf(t, v)) {
			t.Errorf("%v should be present", v)
		}
	}
	for _, v := range []any{int32(2), bson.D{{Key: "b", Value: 2}, {Key: "a", Value: 1}}, bson.A{1}, "X"} {
		if s.contains(rawOf(t, v)) {
			t.Errorf("%v should be absent", v)
		}
	}
}

// TestManyFieldsKeepDuplicateNames: a document with repeated names falls
// back to scanning, and $set still finds the first of them.
func TestManyFieldsKeepDuplicateNames(t *testing.T) {
	d := bson.D{{Key: "_id", Value: 1}}
	for i := range 40 {
		d = append(d, bson.E{Key: "f" + itoa(i), Value: i})
	}
	d = append(d, bson.E{Key: "f3", Value: "dup"})
	doc, _ := bson.Marshal(d)
	u, err := Compile(rawOf(t, bson.D{{Key: "$set", Value: bson.D{{Key: "f3", Value: "new"}, {Key: "g", Value: 1}}}}), nil)
	if err != nil {
		t.Fatal(err)
	}
	out, _, err := u.Apply(doc, -1, scriptNow)
	if err != nil {
		t.Fatal(err)
	}
	elems, _ := bson.Raw(out).Elements()
	if elems[4].Key() != "f3" || elems[4].Value().StringValue() != "new" || elems[41].Value().StringValue() != "dup" || elems[42].Key() != "g" {
		t.Errorf("got %v", bson.Raw(out))
	}
}
