package command

import (
	"bytes"
	"encoding/binary"
	"encoding/hex"
	"strings"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/x/bsonx/bsoncore"

	"github.com/formworkdb/formwork/engine/internal/mongoerr"
	"github.com/formworkdb/formwork/engine/internal/storage"
)

// Resume token kinds, as mongod's ResumeTokenData::TokenType.
const (
	tokenHighWater = 0   // a point in the oplog between events
	tokenEvent     = 128 // one event
)

// resumeToken is the content of a change stream's resume token.
//
// Divergence: mongod encodes the token as a KeyString of its fields; the
// token here is its own fixed-width encoding of the same fields in the
// same order (clusterTime, version, tokenType, txnOpIndex,
// fromInvalidate, uuid, event identifier, fragment number), so tokens
// compare as mongod's do, but a token from one server is not accepted by
// the other.
type resumeToken struct {
	ts             bson.Timestamp
	tokenType      byte
	txnOpIndex     uint32
	fromInvalidate bool
	uuid           []byte // nil: none
	eventID        bson.Raw
	// fragment is 1 + the index of the fragment this token names, for
	// the fragments of a split event ($changeStreamSplitLargeEvent); 0
	// for a whole event.
	fragment uint32
}

// tokenMagic starts every token (mongod's tokens start with 0x82 too,
// the KeyString type of a Timestamp).
const tokenMagic = 0x82

// tokenVersion is the token format version (mongod 7.0 writes 2).
const tokenVersion = 2

// doc returns the token as the {_data: "<hex>"} document clients see.
func (t resumeToken) doc() bson.Raw {
	b := []byte{tokenMagic}
	b = binary.BigEndian.AppendUint64(b, uint64(storage.PackTS(t.ts)))
	b = append(b, tokenVersion, t.tokenType)
	b = binary.BigEndian.AppendUint32(b, t.txnOpIndex)
	if t.fromInvalidate {
		b = append(b, 1)
	} else {
		b = append(b, 0)
	}
	if len(t.uuid) == 16 {
		b = append(b, 1)
		b = append(b, t.uuid...)
	} else {
		b = append(b, 0)
	}
	b = append(b, t.eventID...)
	if t.fragment > 0 {
		b = append(b, 1)
		b = binary.BigEndian.AppendUint32(b, t.fragment-1)
	}
	d := bsoncore.AppendStringElement(nil, "_data", strings.ToUpper(hex.EncodeToString(b)))
	return bson.Raw(bsoncore.BuildDocument(nil, d))
}

// position orders tokens of events and high-water marks in the oplog:
// an event sorts after the high-water mark at its ts, and the invalidate
// after the event that caused it.
func (t resumeToken) before(o resumeToken) bool {
	if t.ts != o.ts {
		return t.ts.T < o.ts.T || (t.ts.T == o.ts.T && t.ts.I < o.ts.I)
	}
	if t.tokenType != o.tokenType {
		return t.tokenType < o.tokenType
	}
	if t.txnOpIndex != o.txnOpIndex {
		return t.txnOpIndex < o.txnOpIndex
	}
	if t.fromInvalidate != o.fromInvalidate {
		return !t.fromInvalidate
	}
	return t.fragment < o.fragment
}

// sameEvent reports whether t and o name the same event (or fragments
// of it).
func (t resumeToken) sameEvent(o resumeToken) bool {
	return t.ts == o.ts && t.tokenType == o.tokenType && t.txnOpIndex == o.txnOpIndex &&
		t.fromInvalidate == o.fromInvalidate
}

// highWater returns the high-water-mark token at ts.
func highWater(ts bson.Timestamp) resumeToken { return resumeToken{ts: ts, tokenType: tokenHighWater} }

// parseResumeToken decodes the value of resumeAfter or startAfter.
func parseResumeToken(field string, v bson.RawValue) (resumeToken, error) {
	var t resumeToken
	d, ok := v.DocumentOK()
	if !ok {
		return t, mongoerr.Newf(mongoerr.TypeMismatch, "BSON field '$changeStream.%s' is the wrong type '%s', expected type 'object'", field, typeName(v.Type))
	}
	data, ok := d.Lookup("_data").StringValueOK()
	if !ok {
		return t, mongoerr.New(mongoerr.Code(40647), "The change stream resume token has a missing or wrong-typed _data field")
	}
	b, err := hex.DecodeString(data)
	const fixed = 1 + 8 + 2 + 4 + 1 + 1
	if err != nil || len(b) < fixed || b[0] != tokenMagic || b[9] != tokenVersion {
		return t, mongoerr.Newf(mongoerr.FailedToParse, "Failed to decode resume token: %s", data)
	}
	t.ts = storage.UnpackTS(int64(binary.BigEndian.Uint64(b[1:9])))
	t.tokenType = b[10]
	t.txnOpIndex = binary.BigEndian.Uint32(b[11:15])
	t.fromInvalidate = b[15] == 1
	rest := b[16:]
	if rest[0] == 1 {
		if len(rest) < 17 {
			return t, mongoerr.Newf(mongoerr.FailedToParse, "Failed to decode resume token: %s", data)
		}
		t.uuid = bytes.Clone(rest[1:17])
		rest = rest[17:]
	} else {
		rest = rest[1:]
	}
	if len(rest) > 0 {
		n := 0
		if len(rest) >= 4 {
			n = int(binary.LittleEndian.Uint32(rest))
		}
		if n < 5 || n > len(rest) {
			return t, mongoerr.Newf(mongoerr.FailedToParse, "Failed to decode resume token: %s", data)
		}
		t.eventID = bson.Raw(bytes.Clone(rest[:n]))
		if t.eventID.Validate() != nil {
			return t, mongoerr.Newf(mongoerr.FailedToParse, "Failed to decode resume token: %s", data)
		}
		rest = rest[n:]
		switch {
		case len(rest) == 0:
		case len(rest) == 5 && rest[0] == 1 && binary.BigEndian.Uint32(rest[1:]) < 1<<30:
			t.fragment = binary.BigEndian.Uint32(rest[1:]) + 1
		default:
			return t, mongoerr.Newf(mongoerr.FailedToParse, "Failed to decode resume token: %s", data)
		}
	}
	if t.tokenType != tokenHighWater && t.tokenType != tokenEvent {
		return t, mongoerr.Newf(mongoerr.FailedToParse, "Failed to decode resume token: %s", data)
	}
	return t, nil
}
