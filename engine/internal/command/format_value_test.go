package command

import (
	"encoding/binary"
	"strings"
	"testing"
	"time"

	"go.mongodb.org/mongo-driver/v2/bson"
)

// deepDoc returns {x: {x: … {x: 1}}} holding levels documents, built in one
// linear pass.
func deepDoc(levels int) bson.Raw {
	const leaf = 12
	out := make([]byte, 0, leaf+8*(levels-1))
	for l := levels; l > 1; l-- {
		out = binary.LittleEndian.AppendUint32(out, uint32(leaf+8*(l-1)))
		out = append(out, 0x03, 'x', 0)
	}
	out = binary.LittleEndian.AppendUint32(out, leaf)
	out = append(out, 0x10, 'x', 0, 1, 0, 0, 0, 0)
	for l := levels; l > 1; l-- {
		out = append(out, 0)
	}
	return out
}

// TestFormatValueDeepIsBoundedAndLinear: error messages render deep values
// (issue 13: 20k levels took 2.2 s, a million overflowed the stack) in
// linear time, stopping at maxFormatDepth.
func TestFormatValueDeepIsBoundedAndLinear(t *testing.T) {
	if got := formatValue(bson.RawValue{Type: bson.TypeEmbeddedDocument, Value: deepDoc(2)}); got != "{ x: { x: 1 } }" {
		t.Fatalf("shallow: %q", got)
	}
	doc := deepDoc(20_000)
	start := time.Now()
	got := formatValue(bson.RawValue{Type: bson.TypeEmbeddedDocument, Value: doc})
	t.Logf("20k levels: %v", time.Since(start)) // timing is a benchmark's business
	if !strings.Contains(got, "...") || len(got) > 10*maxFormatDepth {
		t.Errorf("output not bounded: %d bytes", len(got))
	}
}
