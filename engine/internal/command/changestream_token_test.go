package command

import (
	"strings"
	"testing"

	"go.mongodb.org/mongo-driver/v2/bson"
)

// TestResumeTokenRoundTripAndOrder encodes tokens, decodes them back, and
// checks that their _data strings sort as the positions they name: by
// clusterTime, then high-water mark before event, then txnOpIndex, then
// the fragments of a split event after it, and the invalidate after its
// event (the Divergence on resumeToken: the
// bytes differ from mongod's, the order does not).
func TestResumeTokenRoundTripAndOrder(t *testing.T) {
	uuid := make([]byte, 16)
	eid, _ := bson.Marshal(bson.D{{Key: "operationType", Value: "insert"}})
	toks := []resumeToken{
		highWater(bson.Timestamp{T: 10, I: 1}),
		{ts: bson.Timestamp{T: 10, I: 1}, tokenType: tokenEvent, uuid: uuid, eventID: eid},
		{ts: bson.Timestamp{T: 10, I: 1}, tokenType: tokenEvent, txnOpIndex: 1, uuid: uuid, eventID: eid},
		{ts: bson.Timestamp{T: 10, I: 1}, tokenType: tokenEvent, txnOpIndex: 1, uuid: uuid, eventID: eid, fragment: 1},
		{ts: bson.Timestamp{T: 10, I: 1}, tokenType: tokenEvent, txnOpIndex: 1, uuid: uuid, eventID: eid, fragment: 2},
		{ts: bson.Timestamp{T: 10, I: 1}, tokenType: tokenEvent, txnOpIndex: 1, fromInvalidate: true, uuid: uuid, eventID: eid},
		highWater(bson.Timestamp{T: 10, I: 2}),
		{ts: bson.Timestamp{T: 11, I: 0}, tokenType: tokenEvent},
	}
	prev := ""
	for i, tok := range toks {
		d := tok.doc()
		data := d.Lookup("_data").StringValue()
		if !strings.HasPrefix(data, "82") || strings.ToUpper(data) != data {
			t.Fatalf("token %d: _data %q", i, data)
		}
		if data <= prev {
			t.Fatalf("token %d sorts before token %d", i, i-1)
		}
		prev = data
		back, err := parseResumeToken("resumeAfter", bson.RawValue{Type: bson.TypeEmbeddedDocument, Value: d})
		if err != nil {
			t.Fatal(err)
		}
		if !back.sameEvent(tok) || string(back.uuid) != string(tok.uuid) || string(back.eventID) != string(tok.eventID) || back.fragment != tok.fragment {
			t.Fatalf("token %d: decoded %+v, want %+v", i, back, tok)
		}
		if i > 0 && !toks[i-1].before(tok) {
			t.Fatalf("token %d not after token %d", i, i-1)
		}
	}
	for _, bad := range []bson.D{{{Key: "_data", Value: "zz"}}, {{Key: "_data", Value: 1}}, {}} {
		raw, _ := bson.Marshal(bad)
		if _, err := parseResumeToken("resumeAfter", bson.RawValue{Type: bson.TypeEmbeddedDocument, Value: raw}); err == nil {
			t.Fatalf("token %v accepted", bad)
		}
	}
}
