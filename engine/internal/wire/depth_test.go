package wire

import (
	"bytes"
	"encoding/binary"
	"errors"
	"testing"
	"time"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/x/bsonx/bsoncore"
)

// nestedDoc returns {x: {x: … {x: 1}}} holding levels documents, built in
// one pass so that a million levels cost linear time.
func nestedDoc(levels int) []byte {
	const leaf = 12 // {x: int32}
	size := leaf + 8*(levels-1)
	out := make([]byte, 0, size)
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

// findWithFilter frames a find whose filter is filter.
func findWithFilter(filter []byte) []byte {
	idx, body := bsoncore.AppendDocumentStart(nil)
	body = bsoncore.AppendStringElement(body, "find", "c")
	body = bsoncore.AppendDocumentElement(body, "filter", filter)
	body = bsoncore.AppendStringElement(body, "$db", "test")
	body, _ = bsoncore.AppendDocumentEnd(body, idx)
	return AppendRequest(nil, 1, 0, body, nil, false)
}

// TestDepthLimitedOnReceipt checks mongod's maxBSONDepth: a command whose
// filter nests 200 documents (the deepest at depth 200) is read, one more
// level is refused with Overflow (15) and mongod's message, and a million
// levels are refused as fast, without recursion.
func TestDepthLimitedOnReceipt(t *testing.T) {
	if err := bson.Raw(nestedDoc(3)).Validate(); err != nil {
		t.Fatalf("nestedDoc builds invalid BSON: %v", err)
	}
	if _, err := ReadMessage(bytes.NewReader(findWithFilter(nestedDoc(maxNesting)))); err != nil {
		t.Fatalf("depth %d: %v", maxNesting, err)
	}
	for _, levels := range []int{maxNesting + 1, 1_000_000} {
		start := time.Now()
		_, err := ReadMessage(bytes.NewReader(findWithFilter(nestedDoc(levels))))
		var pe *ParseError
		if !errors.As(err, &pe) || pe.Code != 15 || pe.Msg != "BSONObj exceeds maximum nested object depth" {
			t.Errorf("depth %d: err = %v, want Overflow", levels, err)
		}
		t.Logf("depth %d refused in %v", levels, time.Since(start))
	}
	// Arrays count as levels too.
	arr := nestedDoc(maxNesting + 1)
	for i := 4; i < len(arr); i++ {
		if arr[i] == 0x03 && arr[i+1] == 'x' {
			arr[i] = 0x04
		}
	}
	if _, err := ReadMessage(bytes.NewReader(findWithFilter(arr))); err == nil {
		t.Error("arrays nested past the limit were accepted")
	}
}
