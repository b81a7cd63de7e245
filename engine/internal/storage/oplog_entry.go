package storage

import (
	"bytes"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/x/bsonx/bsoncore"

	"github.com/formworkdb/formwork/engine/internal/mongoerr"
)

// logged reports whether writes to c go to the oplog: those to the local
// database do not, as in mongod.
func logged(c *Collection) bool { return c != nil && c.DB != "local" }

// imagesEnabled reports whether c keeps change stream pre- and post-images
// (changeStreamPreAndPostImages: {enabled: true}).
func imagesEnabled(c *Collection) bool {
	v, err := c.Options.LookupErr("changeStreamPreAndPostImages", "enabled")
	return err == nil && v.Type == bson.TypeBoolean && v.Boolean()
}

// opFieldsSize is the size of the op, ns and ui elements opFields appends
// for a one-letter op and a namespace of n bytes.
func opFieldsSize(n int) int { return 10 + 9 + n + 25 }

// opFields appends op, ns and ui, the leading fields of every entry, to a
// buffer with room for extra more bytes (the rest of the entry), taken
// from the Writer's oplog arena (oplogBuf.alloc).
func (w *Writer) opFields(op, ns string, uuid [16]byte, extra int) []byte {
	d := w.oplog.alloc(opFieldsSize(len(ns)) + len(op) - 1 + extra)
	d = bsoncore.AppendStringElement(d, "op", op)
	d = bsoncore.AppendStringElement(d, "ns", ns)
	return bsoncore.AppendBinaryElement(d, "ui", bson.TypeBinaryUUID, uuid[:])
}

// docID returns doc's _id (Type 0 when it has none).
func docID(doc bson.Raw) bson.RawValue {
	v, _ := doc.LookupErr("_id")
	return v
}

// docKeySize is the size of the document appendDocKey appends for id.
func docKeySize(id bson.RawValue) int {
	if id.Type == 0 {
		return 5
	}
	return 10 + len(id.Value)
}

// appendDocKey appends the element key: {_id: id}, the document key of a
// write ({} when id is Type 0).
func appendDocKey(dst []byte, key string, id bson.RawValue) []byte {
	idx, dst := bsoncore.AppendDocumentElementStart(dst, key)
	if id.Type != 0 {
		dst = bsoncore.AppendValueElement(dst, "_id", bsoncore.Value{Type: bsoncore.Type(id.Type), Data: id.Value})
	}
	dst, _ = bsoncore.AppendDocumentEnd(dst, idx)
	return dst
}

func (w *Writer) addOp(fields []byte, pre, post bson.Raw) {
	w.oplog.ops = append(w.oplog.ops, pendingOp{fields: fields, pre: pre, post: post})
}

// logInsert logs the insertion of doc into c.
func (w *Writer) logInsert(c *Collection, doc bson.Raw) {
	if !logged(c) {
		return
	}
	// One allocation holds the whole entry: o (doc) and o2 ({_id}).
	id := docID(doc)
	d := w.opFields("i", c.NS, c.UUID, 3+len(doc)+4+docKeySize(id))
	d = bsoncore.AppendDocumentElement(d, "o", doc)
	d = appendDocKey(d, "o2", id)
	w.addOp(d, nil, nil)
}

// LogReplacement makes the Writer's next Update log a replacement (the
// whole new document) rather than a $v:2 diff: the command layer calls it
// for replacement-style updates, which change streams report as
// "replace".
func (w *Writer) LogReplacement() { w.oplog.replaceNext = true }

// logUpdate logs the change of a document of c from old to doc.
func (w *Writer) logUpdate(c *Collection, old, doc bson.Raw) {
	replace := w.oplog.replaceNext
	w.oplog.replaceNext = false
	if !logged(c) {
		return
	}
	id := docID(old)
	d := w.opFields("u", c.NS, c.UUID, 3+len(doc)+4+docKeySize(id))
	if replace {
		d = bsoncore.AppendDocumentElement(d, "o", doc)
	} else {
		o := bsoncore.AppendInt32Element(nil, "$v", 2)
		o = bsoncore.AppendDocumentElement(o, "diff", diffDocs(old, doc, 0))
		d = bsoncore.AppendDocumentElement(d, "o", frameDoc(o))
	}
	d = appendDocKey(d, "o2", id)
	var pre, post bson.Raw
	if imagesEnabled(c) {
		pre, post = rawCopy(old), rawCopy(doc)
	}
	w.addOp(d, pre, post)
}

// logDelete logs the removal of doc from c.
func (w *Writer) logDelete(c *Collection, doc bson.Raw) {
	if !logged(c) {
		return
	}
	id := docID(doc)
	d := w.opFields("d", c.NS, c.UUID, 3+docKeySize(id))
	d = appendDocKey(d, "o", id)
	var pre bson.Raw
	if imagesEnabled(c) {
		pre = rawCopy(doc)
	}
	w.addOp(d, pre, nil)
}

// logCommand logs a command entry ("c") of c's database with o (and o2
// when not nil).
func (w *Writer) logCommand(c *Collection, o, o2 []byte) {
	if !logged(c) {
		return
	}
	d := w.opFields("c", c.DB+".$cmd", c.UUID, 3+len(o)+4+len(o2))
	d = bsoncore.AppendDocumentElement(d, "o", o)
	if o2 != nil {
		d = bsoncore.AppendDocumentElement(d, "o2", o2)
	}
	w.addOp(d, nil, nil)
}

// logCreate logs the creation of c with its options and _id index.
func (w *Writer) logCreate(c *Collection) {
	o := bsoncore.AppendStringElement(nil, "create", c.Name)
	if len(c.Options) > 5 {
		o = append(o, c.Options[4:len(c.Options)-1]...)
	}
	if len(c.Indexes) > 0 {
		o = bsoncore.AppendDocumentElement(o, "idIndex", c.Indexes[0].Spec)
	}
	w.logCommand(c, frameDoc(o), nil)
}

// logDrop logs the drop of c.
func (w *Writer) logDrop(c *Collection) {
	w.logCommand(c, frameDoc(bsoncore.AppendStringElement(nil, "drop", c.Name)), nil)
}

// logRename logs the rename of c to the namespace to. A drop of to that
// this batch logged just before becomes the entry's dropTarget, as mongod
// logs renameCollection with dropTarget: true.
func (w *Writer) logRename(c *Collection, to string) {
	if !logged(c) {
		return
	}
	o := bsoncore.AppendStringElement(nil, "renameCollection", c.NS)
	o = bsoncore.AppendStringElement(o, "to", to)
	o = bsoncore.AppendBooleanElement(o, "stayTemp", false)
	if n := len(w.oplog.ops); n > 0 {
		last := bson.Raw(frameDoc(w.oplog.ops[n-1].fields))
		toDB, toColl := SplitNS(to)
		if last.Lookup("op").StringValue() == "c" && last.Lookup("ns").StringValue() == toDB+".$cmd" {
			if name, ok := last.Lookup("o", "drop").StringValueOK(); ok && name == toColl {
				_, uuid := last.Lookup("ui").Binary()
				o = bsoncore.AppendBinaryElement(o, "dropTarget", bson.TypeBinaryUUID, uuid)
				w.oplog.ops = w.oplog.ops[:n-1]
			}
		}
	}
	w.logCommand(c, frameDoc(o), nil)
}

// LogDropDatabase logs the drop of database db, after the drops of its
// collections (dropDatabase calls it in the same batch). A database
// without collections logs nothing.
func (w *Writer) LogDropDatabase(db string) {
	dropped := false
	for ns, c := range w.pending {
		if d, _ := SplitNS(ns); c == nil && d == db {
			dropped = true
		}
	}
	if db == "local" || !dropped {
		return
	}
	d := bsoncore.AppendStringElement(nil, "op", "c")
	d = bsoncore.AppendStringElement(d, "ns", db+".$cmd")
	d = bsoncore.AppendDocumentElement(d, "o", frameDoc(bsoncore.AppendInt32Element(nil, "dropDatabase", 1)))
	w.addOp(d, nil, nil)
}

// logCreateIndex logs the creation of index ix on c.
func (w *Writer) logCreateIndex(c *Collection, ix *Index) {
	o := bsoncore.AppendStringElement(nil, "createIndexes", c.Name)
	o = append(o, ix.Spec[4:len(ix.Spec)-1]...)
	w.logCommand(c, frameDoc(o), nil)
}

// logDropIndex logs the drop of index ix of c; o2 holds its spec.
func (w *Writer) logDropIndex(c *Collection, ix *Index) {
	o := bsoncore.AppendStringElement(nil, "dropIndexes", c.Name)
	o = bsoncore.AppendStringElement(o, "index", ix.Name)
	w.logCommand(c, frameDoc(o), ix.Spec)
}

// logCollMod logs a change of c's options to options: the entry's o holds
// the options that changed, o2 the collection's options before.
func (w *Writer) logCollMod(c *Collection, options bson.Raw) {
	o := bsoncore.AppendStringElement(nil, "collMod", c.Name)
	elems, _ := options.Elements()
	for _, e := range elems {
		if old, err := c.Options.LookupErr(e.Key()); err == nil && old.Type == e.Value().Type && bytes.Equal(old.Value, e.Value().Value) {
			continue
		}
		o = append(o, e...)
	}
	w.logCommand(c, frameDoc(o), frameDoc(bsoncore.AppendDocumentElement(nil, "collectionOptions", c.Options)))
}

// logIndexMod logs a collMod of index name of c to the spec sp: o holds
// {collMod, index: {name, <changed options>}}.
func (w *Writer) logIndexMod(c *Collection, name string, old, sp bson.Raw) {
	ix := bsoncore.AppendStringElement(nil, "name", name)
	elems, _ := sp.Elements()
	for _, e := range elems {
		if prev, err := old.LookupErr(e.Key()); err == nil && prev.Type == e.Value().Type && bytes.Equal(prev.Value, e.Value().Value) {
			continue
		}
		ix = append(ix, e...)
	}
	o := bsoncore.AppendStringElement(nil, "collMod", c.Name)
	o = bsoncore.AppendDocumentElement(o, "index", frameDoc(ix))
	w.logCommand(c, frameDoc(o), nil)
}

// LogCollMod logs a collMod of ns that changes nothing (mongod still
// reports a "modify" event for it).
func (w *Writer) LogCollMod(ns string) error {
	c := w.Collection(ns)
	if c == nil {
		return mongoerr.Newf(mongoerr.NamespaceNotFound, "ns does not exist: %s", ns)
	}
	w.logCommand(c, frameDoc(bsoncore.AppendStringElement(nil, "collMod", c.Name)), nil)
	return nil
}
