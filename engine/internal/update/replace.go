package update

import (
	"bytes"
	"encoding/binary"
	"time"

	"go.mongodb.org/mongo-driver/v2/bson"

	"github.com/formworkdb/formwork/engine/internal/mongoerr"
)

// replace applies a replacement document to doc: every field but _id is
// replaced; _id stays when the replacement has none and may not change when
// it has one. Top-level Timestamp(0, 0) values become the current time, as
// mongod does for replacements. insert marks an upsert document, which
// skips storage validation of field names (the caller validates the
// result).
// Manual: https://www.mongodb.com/docs/manual/reference/method/db.collection.replaceOne/
func (u *Update) replace(doc bson.Raw, insert bool, now time.Time) (bson.Raw, bool, error) {
	repl := stampTimestamps(u.replacement, now)
	if bytes.Equal(doc, repl) {
		return doc, false, nil
	}
	root := newRoot(doc)
	oldID := root.child("_id")
	var oldIDVal bson.RawValue
	if oldID != nil {
		oldIDVal = oldID.value()
	}
	out := &elem{}
	out.setEmpty(bson.TypeEmbeddedDocument)
	replRoot := newRoot(repl)
	if replRoot.child("_id") == nil && oldID != nil {
		out.appendChild(newValue("_id", oldIDVal))
	}
	for _, k := range replRoot.children() {
		out.appendChild(newValue(k.name, k.value()))
	}
	if !insert {
		if err := validateDocument(out, false); err != nil {
			return doc, false, err
		}
	}
	if newID := out.child("_id"); newID != nil && oldID != nil {
		if newID.typ == bson.TypeArray {
			return doc, false, mongoerr.New(mongoerr.NotSingleValueField,
				"After applying the update to the document, the (immutable) field '_id' was found to be an array or array descendant.")
		}
		if compareValues(newID.value(), oldIDVal) != 0 {
			return doc, false, mongoerr.Newf(mongoerr.ImmutableField,
				"After applying the update, the (immutable) field '_id' was found to have been altered to %s",
				elemString(newID))
		}
	}
	idFirst(out)
	enc := bson.Raw(out.encode(nil))
	// Divergence: mongod counts a replacement as a change unless the
	// replacement document is byte-identical to the stored one, so a
	// replacement without _id always reports nModified 1; here an
	// unchanged result is a no-op (tested in testdata/update/replace.txt).
	if bytes.Equal(enc, doc) {
		return doc, false, nil
	}
	return enc, true, nil
}

// stampTimestamps returns doc with each top-level Timestamp(0, 0) replaced
// by the time now (seconds, increments counting from 1); doc itself when it
// has none.
func stampTimestamps(doc bson.Raw, now time.Time) bson.Raw {
	elems, _ := doc.Elements()
	found := false
	for _, el := range elems {
		if v := el.Value(); v.Type == bson.TypeTimestamp && isZeroTimestamp(v) {
			found = true
		}
	}
	if !found {
		return doc
	}
	root := newRoot(doc)
	inc := uint32(0)
	for _, k := range root.children() {
		if k.typ == bson.TypeTimestamp && isZeroTimestamp(k.value()) {
			inc++
			b := binary.LittleEndian.AppendUint32(nil, inc)
			b = binary.LittleEndian.AppendUint32(b, uint32(now.Unix()))
			k.set(bson.RawValue{Type: bson.TypeTimestamp, Value: b})
		}
	}
	return root.encode(nil)
}

func isZeroTimestamp(v bson.RawValue) bool {
	t, i, ok := v.TimestampOK()
	return ok && t == 0 && i == 0
}

// validateDocument checks a whole document as mongod's scanDocument does:
// the _id type, '$'-prefixed top-level fields (unless allowDollar), and the
// nesting depth.
func validateDocument(root *elem, allowDollar bool) error {
	for _, k := range root.children() {
		if k.name == "_id" {
			if err := validID(k); err != nil {
				return err
			}
		}
		if !allowDollar && len(k.name) > 0 && k.name[0] == '$' {
			if err := validateDollarField(k); err != nil {
				return err
			}
		}
		if 1+valueDepth(k.value(), 0) > maxDepth {
			return mongoerr.Newf(mongoerr.Overflow, "Document exceeds maximum nesting depth of %d", maxDepth)
		}
	}
	return nil
}

// validID rejects the _id types mongod cannot store.
func validID(id *elem) error {
	switch id.typ {
	case bson.TypeRegex, bson.TypeArray, bson.TypeUndefined:
		return mongoerr.Newf(mongoerr.InvalidIdField, "The '_id' value cannot be of type %s", typeName(id.typ))
	}
	return nil
}
