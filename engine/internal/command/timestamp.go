package command

import (
	"encoding/binary"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/x/bsonx/bsoncore"
)

// fillEmptyTimestamps replaces each top-level Timestamp(0, 0) of doc, other
// than _id, with a fresh cluster time from tick, as mongod's
// fixDocumentForInsert does; nested and _id timestamps are kept. doc is
// returned as is when it has none (or is malformed: prepareInsert reports
// that).
// https://www.mongodb.com/docs/v7.0/reference/bson-types/#timestamps
func fillEmptyTimestamps(doc bson.Raw, tick func() bson.Timestamp) bson.Raw {
	if len(doc) < 5 {
		return doc
	}
	found := false
	for rest := doc[4 : len(doc)-1]; len(rest) > 0 && !found; {
		e, r, ok := bsoncore.ReadElement(rest)
		if !ok {
			return doc
		}
		found, rest = isEmptyTimestamp(bson.RawElement(e)), r
	}
	if !found {
		return doc
	}
	out := make([]byte, 4, len(doc))
	for rest := doc[4 : len(doc)-1]; len(rest) > 0; {
		e, r, ok := bsoncore.ReadElement(rest)
		if !ok {
			return doc
		}
		rest = r
		if !isEmptyTimestamp(bson.RawElement(e)) {
			out = append(out, e...)
			continue
		}
		ts := tick()
		out = append(out, e[:len(e)-8]...)
		out = binary.LittleEndian.AppendUint32(out, ts.I)
		out = binary.LittleEndian.AppendUint32(out, ts.T)
	}
	out = append(out, 0)
	putLen(out)
	return out
}

// isEmptyTimestamp reports a top-level Timestamp(0, 0) outside _id.
func isEmptyTimestamp(e bson.RawElement) bool {
	v := e.Value()
	if v.Type != bson.TypeTimestamp || e.Key() == "_id" {
		return false
	}
	t, i := v.Timestamp()
	return t == 0 && i == 0
}
