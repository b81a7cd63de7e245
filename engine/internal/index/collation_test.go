package index

import (
	"bytes"
	"testing"

	"go.mongodb.org/mongo-driver/v2/bson"
	"pgregory.net/rapid"

	"github.com/formworkdb/formwork/engine/internal/bsonkit"
	"github.com/formworkdb/formwork/engine/internal/collation"
)

func sign(n int) int {
	switch {
	case n < 0:
		return -1
	case n > 0:
		return 1
	}
	return 0
}

// TestCollatedKeysOrder checks that a collated index orders its keys as
// the collator orders the values, strings nested in documents and arrays
// included, and gives equal keys exactly to values equal under it (so a
// unique index is unique under the collation).
func TestCollatedKeysOrder(t *testing.T) {
	alphabet := []rune("aAbBéÉ -1ß")
	str := rapid.Custom(func(t *rapid.T) string {
		return string(rapid.SliceOfN(rapid.SampledFrom(alphabet), 0, 5).Draw(t, "s"))
	})
	val := rapid.Custom(func(t *rapid.T) any {
		switch rapid.IntRange(0, 3).Draw(t, "kind") {
		case 0:
			return str.Draw(t, "str")
		case 1:
			return bson.D{{Key: "k", Value: str.Draw(t, "k")}, {Key: "n", Value: rapid.IntRange(0, 2).Draw(t, "n")}}
		case 2:
			return bson.A{str.Draw(t, "e0"), str.Draw(t, "e1")}
		}
		return rapid.IntRange(-2, 2).Draw(t, "int")
	})
	rapid.Check(t, func(t *rapid.T) {
		strength := rapid.IntRange(1, 3).Draw(t, "strength")
		spec, _ := bson.Marshal(bson.D{{Key: "locale", Value: "en"}, {Key: "strength", Value: strength}})
		coll, err := collation.Parse(spec)
		if err != nil {
			t.Fatal(err)
		}
		raw, _ := bson.Marshal(bson.D{{Key: "key", Value: bson.D{{Key: "v", Value: 1}}}, {Key: "name", Value: "v_1"}, {Key: "collation", Value: bson.Raw(spec)}})
		sp, err := ParseSpec(raw)
		if err != nil {
			t.Fatal(err)
		}
		ix, err := Compile(sp)
		if err != nil {
			t.Fatal(err)
		}
		a, b := val.Draw(t, "a"), val.Draw(t, "b")
		da, _ := bson.Marshal(bson.D{{Key: "v", Value: a}})
		db, _ := bson.Marshal(bson.D{{Key: "v", Value: b}})
		va, vb := bson.Raw(da).Lookup("v"), bson.Raw(db).Lookup("v")
		want := sign(bsonkit.CompareWith(va, vb, coll))
		if got := sign(bsonkit.Compare(bsonkit.CollationKeyed(va, coll), bsonkit.CollationKeyed(vb, coll))); got != want {
			t.Fatalf("CollationKeyed order %d, CompareWith %d for %v, %v", got, want, va, vb)
		}
		if va.Type == bson.TypeArray || vb.Type == bson.TypeArray {
			return // multikey: one key per element
		}
		ka, _, err := ix.Keys(da)
		if err != nil {
			t.Fatal(err)
		}
		kb, _, err := ix.Keys(db)
		if err != nil {
			t.Fatal(err)
		}
		if got := sign(bytes.Compare(ka[0], kb[0])); got != want {
			t.Fatalf("index key order %d, collator %d for %v, %v", got, want, va, vb)
		}
	})
}
