package command

import (
	"context"
	"strconv"
	"strings"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/x/bsonx/bsoncore"

	"github.com/formworkdb/formwork/engine/internal/agg"
	"github.com/formworkdb/formwork/engine/internal/mongoerr"
	"github.com/formworkdb/formwork/engine/internal/storage"
)

// rawValue converts a bson.RawValue for bsoncore's appenders.
func coreValue(v bson.RawValue) bsoncore.Value {
	return bsoncore.Value{Type: bsoncore.Type(v.Type), Data: v.Value}
}

// withoutField returns d without its field named k.
func withoutField(d bson.Raw, k string) bson.Raw {
	var out []byte
	elems, _ := d.Elements()
	for _, e := range elems {
		if e.Key() != k {
			out = append(out, e...)
		}
	}
	return bson.Raw(bsoncore.BuildDocument(nil, out))
}

// events returns the events of one oplog operation in the stream's scope:
// one, or two when the operation also invalidates the stream.
// https://www.mongodb.com/docs/v7.0/reference/change-events/
func (cs *changeStream) events(ctx context.Context, h *aggHost, sn *storage.Snapshot, oc opCtx, op bson.Raw) ([]csEvent, error) {
	kind := op.Lookup("op").StringValue()
	ns := op.Lookup("ns").StringValue()
	db, coll := storage.SplitNS(ns)
	o, _ := op.Lookup("o").DocumentOK()
	o2, _ := op.Lookup("o2").DocumentOK()
	var (
		opType     string
		invalidate bool
		docKey     bson.Raw
		body       []byte // the fields after wallTime
	)
	switch kind {
	case "i", "u", "d":
		if !cs.inScope(db, coll) {
			return nil, nil
		}
	case "c":
		first, err := o.IndexErr(0)
		if err != nil {
			return nil, nil
		}
		switch first.Key() {
		case "drop":
			coll = first.Value().StringValue()
			opType, invalidate = "drop", cs.coll != ""
		case "renameCollection":
			return cs.renameEvents(oc, op, o), nil
		case "dropDatabase":
			if cs.coll != "" || (cs.db != "" && cs.db != db) || !cs.inScope(db, "") {
				return nil, nil
			}
			opType, invalidate, coll = "dropDatabase", cs.db != "", ""
		case "create", "createIndexes", "dropIndexes", "collMod":
			if !cs.spec.showExpanded {
				return nil, nil
			}
			coll = first.Value().StringValue()
			opType = map[string]string{"create": "create", "createIndexes": "createIndexes", "dropIndexes": "dropIndexes", "collMod": "modify"}[first.Key()]
		default:
			return nil, nil
		}
		if opType != "dropDatabase" && !cs.inScope(db, coll) {
			return nil, nil
		}
	default:
		return nil, nil
	}
	uuid := op.Lookup("ui")
	switch kind {
	case "i":
		opType, docKey = "insert", o2
		if docKey == nil {
			docKey = idOnly(o)
		}
		body = bsoncore.AppendDocumentElement(body, "fullDocument", o)
		body = bsoncore.AppendDocumentElement(body, "ns", nsDoc(db, coll))
		body = bsoncore.AppendDocumentElement(body, "documentKey", docKey)
	case "u":
		docKey = o2
		if v, err := o.LookupErr("$v"); err == nil && v.AsInt64() == 2 {
			opType = "update"
			body = bsoncore.AppendDocumentElement(body, "ns", nsDoc(db, coll))
			body = bsoncore.AppendDocumentElement(body, "documentKey", docKey)
			diff, _ := o.Lookup("diff").DocumentOK()
			body = bsoncore.AppendDocumentElement(body, "updateDescription", describeDiff(diff, cs.spec.showExpanded))
		} else {
			opType = "replace"
			body = bsoncore.AppendDocumentElement(body, "fullDocument", o)
			body = bsoncore.AppendDocumentElement(body, "ns", nsDoc(db, coll))
			body = bsoncore.AppendDocumentElement(body, "documentKey", docKey)
		}
	case "d":
		opType, docKey = "delete", o
		body = bsoncore.AppendDocumentElement(body, "ns", nsDoc(db, coll))
		body = bsoncore.AppendDocumentElement(body, "documentKey", docKey)
	default:
		body = bsoncore.AppendDocumentElement(body, "ns", nsDoc(db, coll))
		switch opType {
		case "create":
			body = bsoncore.AppendDocumentElement(body, "operationDescription", withoutField(o, "create"))
		case "createIndexes":
			arr := bsoncore.NewArrayBuilder().AppendDocument(withoutField(o, "createIndexes")).Build()
			body = bsoncore.AppendDocumentElement(body, "operationDescription", bsoncore.NewDocumentBuilder().AppendArray("indexes", arr).Build())
		case "dropIndexes":
			arr := bsoncore.NewArrayBuilder().AppendDocument(o2).Build()
			body = bsoncore.AppendDocumentElement(body, "operationDescription", bsoncore.NewDocumentBuilder().AppendArray("indexes", arr).Build())
		case "modify":
			body = bsoncore.AppendDocumentElement(body, "operationDescription", withoutField(o, "collMod"))
			if o2 != nil {
				body = bsoncore.AppendDocumentElement(body, "stateBeforeChange", o2)
			}
		}
	}
	tok := resumeToken{ts: oc.ts, tokenType: tokenEvent, txnOpIndex: oc.index}
	if _, data, ok := uuid.BinaryOK(); ok {
		tok.uuid = data
	}
	eid := bsoncore.AppendStringElement(nil, "operationType", opType)
	if docKey != nil {
		eid = bsoncore.AppendDocumentElement(eid, "documentKey", docKey)
	}
	tok.eventID = bson.Raw(bsoncore.BuildDocument(nil, eid))
	var err error
	if body, err = cs.images(ctx, h, sn, oc, opType, ns, docKey, body); err != nil {
		return nil, err
	}
	out := []csEvent{{doc: cs.eventDoc(oc, tok, opType, uuid, body), tok: tok}}
	if invalidate {
		inv := tok
		inv.fromInvalidate = true
		out = append(out, csEvent{doc: cs.eventDoc(opCtx{ts: oc.ts, wall: oc.wall}, inv, "invalidate", bson.RawValue{}, nil), tok: inv})
	}
	return out, nil
}

// idOnly returns {_id: doc._id}.
func idOnly(doc bson.Raw) bson.Raw {
	var d []byte
	if v, err := doc.LookupErr("_id"); err == nil {
		d = bsoncore.AppendValueElement(d, "_id", coreValue(v))
	}
	return bson.Raw(bsoncore.BuildDocument(nil, d))
}

// eventDoc assembles an event: the transaction's fields, the resume token,
// operationType, clusterTime, collectionUUID (expanded events), wallTime
// and then body.
func (cs *changeStream) eventDoc(oc opCtx, tok resumeToken, opType string, uuid bson.RawValue, body []byte) bson.Raw {
	var d []byte
	if oc.txn != nil {
		if oc.txn.number.Type != 0 {
			d = bsoncore.AppendValueElement(d, "txnNumber", coreValue(oc.txn.number))
		}
		if oc.txn.lsid.Type != 0 {
			d = bsoncore.AppendValueElement(d, "lsid", coreValue(oc.txn.lsid))
		}
	}
	d = bsoncore.AppendDocumentElement(d, "_id", tok.doc())
	d = bsoncore.AppendStringElement(d, "operationType", opType)
	d = bsoncore.AppendTimestampElement(d, "clusterTime", oc.ts.T, oc.ts.I)
	if cs.spec.showExpanded && uuid.Type == bson.TypeBinary {
		d = bsoncore.AppendValueElement(d, "collectionUUID", coreValue(uuid))
	}
	if oc.wall.Type != 0 {
		d = bsoncore.AppendValueElement(d, "wallTime", coreValue(oc.wall))
	}
	d = append(d, body...)
	return bson.Raw(bsoncore.BuildDocument(nil, d))
}

// images appends the post-image (fullDocument of updates, per the
// fullDocument mode) and the pre-image (fullDocumentBeforeChange) that
// the stream asked for.
func (cs *changeStream) images(ctx context.Context, h *aggHost, sn *storage.Snapshot, oc opCtx, opType, ns string, docKey bson.Raw, body []byte) ([]byte, error) {
	if opType != "update" && opType != "replace" && opType != "delete" {
		return body, nil
	}
	var pre, post bson.Raw
	if cs.spec.fullDocumentBeforeChange != "off" || cs.spec.fullDocument == "whenAvailable" || cs.spec.fullDocument == "required" {
		var err error
		if pre, post, err = sn.Images(oc.ts, int(oc.index)); err != nil {
			return nil, err
		}
	}
	if opType == "update" {
		switch cs.spec.fullDocument {
		case "updateLookup":
			doc, err := lookupCurrent(ctx, h, ns, docKey)
			if err != nil {
				return nil, err
			}
			body = appendDocOrNull(body, "fullDocument", doc)
		case "whenAvailable", "required":
			if post == nil && cs.spec.fullDocument == "required" {
				return nil, mongoerr.Newf(mongoerr.NoMatchingDocument, "Change stream was configured to require a post-image for all update, delete and replace events, but the post-image was not found for event: %s", extJSON(docKey))
			}
			body = appendDocOrNull(body, "fullDocument", post)
		}
	}
	switch cs.spec.fullDocumentBeforeChange {
	case "whenAvailable", "required":
		if pre == nil && cs.spec.fullDocumentBeforeChange == "required" {
			return nil, mongoerr.Newf(mongoerr.NoMatchingDocument, "Change stream was configured to require a pre-image for all update, delete and replace events, but the pre-image was not found for event: %s", extJSON(docKey))
		}
		body = appendDocOrNull(body, "fullDocumentBeforeChange", pre)
	}
	return body, nil
}

// appendDocOrNull appends doc under k, or null when doc is nil.
func appendDocOrNull(body []byte, k string, doc bson.Raw) []byte {
	if doc == nil {
		return bsoncore.AppendNullElement(body, k)
	}
	return bsoncore.AppendDocumentElement(body, k, doc)
}

// lookupCurrent returns the current document of ns with docKey, or nil.
func lookupCurrent(ctx context.Context, h *aggHost, ns string, docKey bson.Raw) (bson.Raw, error) {
	if docKey == nil {
		return nil, nil
	}
	src, err := h.Open(ctx, ns, agg.Query{Filter: docKey, Limit: 1})
	if err != nil {
		return nil, err
	}
	defer src.Close()
	return src.Next(ctx)
}

// pathElem is one step of an updated path: a field name or array index.
type pathElem struct {
	name  string
	index int
	isIdx bool
}

// updateDesc collects an update event's updateDescription.
type updateDesc struct {
	updated   []byte // elements of updatedFields
	removed   []string
	truncated []byte // array elements {field, newSize}
	nTrunc    int
	ambiguous []byte // elements of disambiguatedPaths
}

// describeDiff turns a $v:2 diff into updateDescription: updatedFields,
// removedFields, truncatedArrays, and with expanded events
// disambiguatedPaths for paths with array indexes or numeric field names.
func describeDiff(diff bson.Raw, expanded bool) []byte {
	u := &updateDesc{}
	u.walkDoc(diff, nil, 0)
	d := bsoncore.AppendDocumentElement(nil, "updatedFields", bsoncore.BuildDocument(nil, u.updated))
	rb := bsoncore.NewArrayBuilder()
	for _, r := range u.removed {
		rb.AppendString(r)
	}
	d = bsoncore.AppendArrayElement(d, "removedFields", rb.Build())
	d = bsoncore.AppendArrayElement(d, "truncatedArrays", bsoncore.BuildDocument(nil, u.truncated))
	if expanded {
		d = bsoncore.AppendDocumentElement(d, "disambiguatedPaths", bsoncore.BuildDocument(nil, u.ambiguous))
	}
	return bsoncore.BuildDocument(nil, d)
}

func dotted(path []pathElem) string {
	parts := make([]string, len(path))
	for i, p := range path {
		if p.isIdx {
			parts[i] = strconv.Itoa(p.index)
		} else {
			parts[i] = p.name
		}
	}
	return strings.Join(parts, ".")
}

// note records path in disambiguatedPaths when it is ambiguous: it holds
// an array index, or a field name that is numeric or has a dot.
func (u *updateDesc) note(path []pathElem) {
	amb := false
	for _, p := range path {
		if p.isIdx || isNumeric(p.name) || strings.Contains(p.name, ".") {
			amb = true
		}
	}
	if !amb {
		return
	}
	ab := bsoncore.NewArrayBuilder()
	for _, p := range path {
		if p.isIdx {
			ab.AppendInt32(int32(p.index))
		} else {
			ab.AppendString(p.name)
		}
	}
	u.ambiguous = bsoncore.AppendArrayElement(u.ambiguous, dotted(path), ab.Build())
}

func isNumeric(s string) bool {
	if s == "" {
		return false
	}
	for _, c := range s {
		if c < '0' || c > '9' {
			return false
		}
	}
	return true
}

func with(path []pathElem, p pathElem) []pathElem {
	return append(append([]pathElem(nil), path...), p)
}

func (u *updateDesc) walkDoc(diff bson.Raw, path []pathElem, depth int) {
	if depth > 200 {
		return
	}
	elems, _ := diff.Elements()
	for _, e := range elems {
		k := e.Key()
		switch {
		case k == "d":
			fs, _ := e.Value().Document().Elements()
			for _, f := range fs {
				p := with(path, pathElem{name: f.Key()})
				u.removed = append(u.removed, dotted(p))
				u.note(p)
			}
		case k == "u" || k == "i":
			fs, _ := e.Value().Document().Elements()
			for _, f := range fs {
				p := with(path, pathElem{name: f.Key()})
				u.updated = bsoncore.AppendValueElement(u.updated, dotted(p), coreValue(f.Value()))
				u.note(p)
			}
		case strings.HasPrefix(k, "s"):
			u.walkSub(e.Value().Document(), with(path, pathElem{name: k[1:]}), depth)
		}
	}
}

func (u *updateDesc) walkSub(sub bson.Raw, path []pathElem, depth int) {
	if a, err := sub.LookupErr("a"); err == nil && a.Type == bson.TypeBoolean && a.Boolean() {
		u.walkArray(sub, path, depth+1)
		return
	}
	u.walkDoc(sub, path, depth+1)
}

func (u *updateDesc) walkArray(diff bson.Raw, path []pathElem, depth int) {
	elems, _ := diff.Elements()
	for _, e := range elems {
		k := e.Key()
		switch {
		case k == "a":
		case k == "l":
			t := bsoncore.AppendStringElement(nil, "field", dotted(path))
			t = bsoncore.AppendInt32Element(t, "newSize", int32(e.Value().AsInt64()))
			u.truncated = bsoncore.AppendDocumentElement(u.truncated, strconv.Itoa(u.nTrunc), bsoncore.BuildDocument(nil, t))
			u.nTrunc++
		case strings.HasPrefix(k, "u"):
			idx, err := strconv.Atoi(k[1:])
			if err != nil {
				continue
			}
			p := with(path, pathElem{index: idx, isIdx: true})
			u.updated = bsoncore.AppendValueElement(u.updated, dotted(p), coreValue(e.Value()))
			u.note(p)
		case strings.HasPrefix(k, "s"):
			idx, err := strconv.Atoi(k[1:])
			if err != nil {
				continue
			}
			u.walkSub(e.Value().Document(), with(path, pathElem{index: idx, isIdx: true}), depth)
		}
	}
}
