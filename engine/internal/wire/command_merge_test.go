package wire

import (
	"bytes"
	"strconv"
	"testing"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/x/bsonx/bsoncore"
)

// TestCommandMergesLongSequenceExactly checks that a sequence of more than
// ten and a hundred documents merges into the array mongod would build:
// keys "0", "1", … in order, each document byte for byte.
func TestCommandMergesLongSequenceExactly(t *testing.T) {
	body := mustDoc(t, bson.D{{Key: "insert", Value: "c"}, {Key: "$db", Value: "test"}})
	var docs []bson.Raw
	for i := range 123 {
		docs = append(docs, mustDoc(t, bson.D{{Key: "_id", Value: i}, {Key: "s", Value: "x"}}))
	}
	m := &Message{Body: body, Sequences: []Sequence{{Identifier: "documents", Documents: docs}}}
	cmd, err := m.Command()
	if err != nil {
		t.Fatal(err)
	}
	aidx, arr := bsoncore.AppendArrayStart(nil)
	for i, d := range docs {
		arr = bsoncore.AppendDocumentElement(arr, strconv.Itoa(i), d)
	}
	arr, _ = bsoncore.AppendArrayEnd(arr, aidx)
	got, ok := cmd.Lookup("documents").ArrayOK()
	if !ok || !bytes.Equal(got, arr) {
		t.Fatalf("merged documents differ")
	}
	if err := cmd.Validate(); err != nil {
		t.Fatal(err)
	}
}
