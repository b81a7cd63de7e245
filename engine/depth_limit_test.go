package engine_test

import (
	"encoding/binary"
	"testing"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/x/bsonx/bsoncore"

	"github.com/formworkdb/formwork/engine/internal/wire"
)

// nestedFilter returns {x: {x: … {x: 1}}} holding levels documents, built
// in one linear pass.
func nestedFilter(levels int) []byte {
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

// TestDeepDocumentRefusedOnReceipt is issue 13's crash: a createIndexes
// whose partialFilterExpression nests a million levels (8 MB) overflowed
// the stack while its error message was formatted. mongod refuses
// anything nested deeper than maxBSONDepth (200) when it reads the
// message, with Overflow (15); so does the engine, and the connection
// keeps serving.
func TestDeepDocumentRefusedOnReceipt(t *testing.T) {
	db, _ := newDB(t)
	rc := dialRaw(t, db)
	for _, levels := range []int{201, 1_000_000} {
		idx, ix := bsoncore.AppendDocumentStart(nil)
		ix = bsoncore.AppendDocumentElement(ix, "key", bsoncore.NewDocumentBuilder().AppendInt32("x", 1).Build())
		ix = bsoncore.AppendStringElement(ix, "name", "x_1")
		ix = bsoncore.AppendDocumentElement(ix, "partialFilterExpression", nestedFilter(levels))
		ix, _ = bsoncore.AppendDocumentEnd(ix, idx)
		bidx, body := bsoncore.AppendDocumentStart(nil)
		body = bsoncore.AppendStringElement(body, "createIndexes", "c")
		aidx, body := bsoncore.AppendArrayElementStart(body, "indexes")
		body = bsoncore.AppendDocumentElement(body, "0", ix)
		body, _ = bsoncore.AppendArrayEnd(body, aidx)
		body = bsoncore.AppendStringElement(body, "$db", "test")
		body, _ = bsoncore.AppendDocumentEnd(body, bidx)
		rc.id++
		rc.send(wire.AppendRequest(nil, rc.id, 0, body, nil, false))
		reply := rc.recv()
		if code, _ := reply.Lookup("code").AsInt64OK(); code != 15 || reply.Lookup("errmsg").StringValue() != "BSONObj exceeds maximum nested object depth" {
			t.Errorf("%d levels: %v", levels, reply)
		}
	}
	// Within the limit a command is read and run: a find filter nesting
	// 199 documents (the deepest at depth 199 of the command).
	if reply := rc.run(bson.D{{Key: "find", Value: "c"}, {Key: "filter", Value: bson.Raw(nestedFilter(199))}, {Key: "$db", Value: "test"}}); reply.Lookup("ok").Double() != 1 {
		t.Errorf("199-level filter: %v", reply)
	}
}
