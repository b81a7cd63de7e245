package command

import (
	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/x/bsonx/bsoncore"

	"github.com/formworkdb/formwork/engine/internal/storage"
)

// renameEvents returns the events of a renameCollection entry for the
// stream, as mongod 7.0 shows them:
//
//   - within a database: a rename event (ns the source, to the target)
//     for streams on the database or the deployment, and for a stream on
//     the source or on the target, the rename then an invalidate (a
//     rename onto a watched collection, with dropTarget, ends its stream
//     as its drop would);
//   - across databases, which mongod runs as a copy into a temporary
//     collection of the target database, a rename of that onto the
//     target and a drop of the source: the rename (ns the temporary
//     collection) for streams on the target database, its collection or
//     the deployment, then the drop of the source for streams on the
//     source database, its collection or the deployment; a stream on
//     either collection is invalidated.
//
// Divergence: a rename across databases is one entry here, so streams
// do not see the create, createIndexes and insert events of the
// temporary collection that mongod's copy makes; the temporary
// collection's name is derived from the source's UUID.
// https://www.mongodb.com/docs/v7.0/reference/change-events/rename/
func (cs *changeStream) renameEvents(oc opCtx, op, o bson.Raw) []csEvent {
	from, _ := o.Lookup("renameCollection").StringValueOK()
	to, _ := o.Lookup("to").StringValueOK()
	fdb, fcoll := storage.SplitNS(from)
	tdb, tcoll := storage.SplitNS(to)
	uuid := op.Lookup("ui")
	_, ub, _ := uuid.BinaryOK()
	var out []csEvent
	add := func(index uint32, opType string, body []byte, invalidate bool) {
		tok := resumeToken{ts: oc.ts, tokenType: tokenEvent, txnOpIndex: oc.index + index}
		if len(ub) == 16 {
			tok.uuid = ub
		}
		tok.eventID = bson.Raw(bsoncore.BuildDocument(nil, bsoncore.AppendStringElement(nil, "operationType", opType)))
		out = append(out, csEvent{doc: cs.eventDoc(oc, tok, opType, uuid, body), tok: tok})
		if invalidate {
			inv := tok
			inv.fromInvalidate = true
			out = append(out, csEvent{doc: cs.eventDoc(opCtx{ts: oc.ts, wall: oc.wall}, inv, "invalidate", bson.RawValue{}, nil), tok: inv})
		}
	}
	renameBody := func(ndb, ncoll string) []byte {
		body := bsoncore.AppendDocumentElement(nil, "ns", nsDoc(ndb, ncoll))
		body = bsoncore.AppendDocumentElement(body, "to", nsDoc(tdb, tcoll))
		if cs.spec.showExpanded {
			desc := bsoncore.AppendDocumentElement(nil, "to", nsDoc(tdb, tcoll))
			if dt, err := o.LookupErr("dropTarget"); err == nil && dt.Type == bson.TypeBinary {
				desc = bsoncore.AppendValueElement(desc, "dropTarget", coreValue(dt))
			}
			body = bsoncore.AppendDocumentElement(body, "operationDescription", bsoncore.BuildDocument(nil, desc))
		}
		return body
	}
	srcIn, dstIn := cs.inScope(fdb, fcoll), cs.inScope(tdb, tcoll)
	if fdb == tdb {
		if srcIn || dstIn {
			add(0, "rename", renameBody(fdb, fcoll), cs.coll != "")
		}
		return out
	}
	if dstIn {
		add(0, "rename", renameBody(tdb, tempRenameName(ub)), cs.coll != "")
	}
	if srcIn {
		add(1, "drop", bsoncore.AppendDocumentElement(nil, "ns", nsDoc(fdb, fcoll)), cs.coll != "")
	}
	return out
}

// tempRenameName is the name of the temporary collection a rename across
// databases goes through, as mongod's "tmp<5 characters>.renameCollection",
// its characters taken from the source's UUID.
func tempRenameName(uuid []byte) string {
	const chars = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789"
	b := []byte("tmp00000.renameCollection")
	for i := range 5 {
		if i < len(uuid) {
			b[3+i] = chars[int(uuid[i])%len(chars)]
		}
	}
	return string(b)
}
