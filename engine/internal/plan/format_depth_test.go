package plan

import (
	"strings"
	"testing"

	"go.mongodb.org/mongo-driver/v2/bson"
)

// TestFormatValueDepthBounded: a value nested far deeper than any stored
// document prints in bounded work, its levels past maxFormatDepth as
// "...".
func TestFormatValueDepthBounded(t *testing.T) {
	var v any = int32(1)
	for range 5000 {
		v = bson.D{{Key: "a", Value: v}}
	}
	raw, err := bson.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	var b strings.Builder
	formatValue(&b, bson.RawValue{Type: bson.TypeEmbeddedDocument, Value: raw})
	out := b.String()
	if got := strings.Count(out, "{"); got != maxFormatDepth {
		t.Fatalf("printed %d levels, want %d", got, maxFormatDepth)
	}
	if !strings.Contains(out, "a: ... }") {
		t.Fatalf("no ellipsis at the limit: %s", out[len(out)-120:])
	}
	b.Reset()
	formatValue(&b, bson.RawValue{Type: bson.TypeEmbeddedDocument, Value: mustRaw(t, bson.D{{Key: "x", Value: bson.A{int32(1), bson.D{{Key: "y", Value: "s"}}}}})})
	if b.String() != `{ x: [ 1, { y: "s" } ] }` {
		t.Fatalf("shallow value: %s", b.String())
	}
}

func mustRaw(t *testing.T, d bson.D) bson.Raw {
	t.Helper()
	raw, err := bson.Marshal(d)
	if err != nil {
		t.Fatal(err)
	}
	return raw
}
