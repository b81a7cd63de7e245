package keystring

import (
	"bytes"
	"encoding/binary"
	"testing"

	"go.mongodb.org/mongo-driver/v2/bson"

	"github.com/formworkdb/formwork/engine/internal/bsonkit"
	"pgregory.net/rapid"
)

// TestAppendValueMatchesBsonkit checks I2 against the engine's comparator:
// sign(bytes.Compare(enc(a), enc(b))) == sign(bsonkit.Compare(a, b)).
func TestAppendValueMatchesBsonkit(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		a := genValue(2).Draw(t, "a")
		b := genValue(2).Draw(t, "b")
		if nonCanonicalDecimal(a) || nonCanonicalDecimal(b) {
			// bsonkit reads a decimal128 coefficient >= 10^34 as its
			// face value; IEEE 754-2008 (and mongod) read it as zero, as
			// AppendValue does. Reported to the bsonkit owner.
			t.Skip("non-canonical decimal128")
		}
		want := sign(bsonkit.Compare(a, b))
		if got := bytes.Compare(enc(a), enc(b)); got != want {
			t.Fatalf("bytes.Compare(enc(%v), enc(%v)) = %d, bsonkit.Compare = %d (reference %d)\n%x\n%x",
				a, b, got, want, sign(refCompare(a, b)), enc(a), enc(b))
		}
	})
}

// nonCanonicalDecimal reports whether v holds, at any depth, a finite
// decimal128 whose coefficient is 10^34 or more.
func nonCanonicalDecimal(v bson.RawValue) bool {
	switch v.Type {
	case bson.TypeDecimal128:
		hi := binary.LittleEndian.Uint64(v.Value[8:])
		lo := binary.LittleEndian.Uint64(v.Value)
		if hi>>58&0x1E == 0x1E {
			return false // NaN or Inf
		}
		if hi>>61&3 == 3 {
			return true
		}
		chi := hi & (1<<49 - 1)
		return chi > pow10_34hi || chi == pow10_34hi && lo >= pow10_34lo
	case bson.TypeEmbeddedDocument, bson.TypeArray:
		elems, _ := bson.Raw(v.Value).Elements()
		for _, e := range elems {
			if nonCanonicalDecimal(e.Value()) {
				return true
			}
		}
	case bson.TypeCodeWithScope:
		_, scope := v.CodeWithScope()
		return nonCanonicalDecimal(bson.RawValue{Type: bson.TypeEmbeddedDocument, Value: scope})
	}
	return false
}
