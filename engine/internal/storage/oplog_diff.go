package storage

import (
	"bytes"
	"strconv"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/x/bsonx/bsoncore"
)

// maxDiffDepth bounds the nesting diffDocs descends into; deeper changes
// are logged as whole values.
const maxDiffDepth = 100

// diffDocs returns the $v:2 diff that turns old into doc, as mongod's oplog
// records an update: "d" {field: false} for removed fields, "u" {field:
// value} for changed ones, "i" {field: value} for fields appended at the
// end, and "s<field>" for a nested document or array diff. Old fields are
// walked in order against the new ones; a field whose position changed is
// removed and inserted again, as mongod's diff computation does.
func diffDocs(old, doc bson.Raw, depth int) []byte {
	oe, _ := old.Elements()
	ne, _ := doc.Elements()
	var del, upd, ins, sub []byte
	inNew := make(map[string]bool, len(ne))
	for _, e := range ne {
		inNew[e.Key()] = true
	}
	j := 0
	for _, e := range oe {
		k := e.Key()
		if j < len(ne) && ne[j].Key() == k {
			if d, ok := diffValue(e.Value(), ne[j].Value(), depth); ok {
				sub = bsoncore.AppendDocumentElement(sub, "s"+k, d)
			} else if !sameValue(e.Value(), ne[j].Value()) {
				upd = append(upd, ne[j]...)
			}
			j++
			continue
		}
		if !inNew[k] {
			del = bsoncore.AppendBooleanElement(del, k, false)
		}
	}
	// Fields of the new document not matched in order: appended ones, and
	// ones that moved (matched old fields are skipped by construction).
	matched := map[string]bool{}
	for _, e := range ne[:j] {
		matched[e.Key()] = true
	}
	for _, e := range ne[j:] {
		if !matched[e.Key()] {
			ins = append(ins, e...)
		}
	}
	var out []byte
	if del != nil {
		out = bsoncore.AppendDocumentElement(out, "d", frameDoc(del))
	}
	if upd != nil {
		out = bsoncore.AppendDocumentElement(out, "u", frameDoc(upd))
	}
	if ins != nil {
		out = bsoncore.AppendDocumentElement(out, "i", frameDoc(ins))
	}
	out = append(out, sub...)
	return frameDoc(out)
}

// sameValue reports whether a and b are the same BSON value, type included.
func sameValue(a, b bson.RawValue) bool { return a.Type == b.Type && bytes.Equal(a.Value, b.Value) }

// diffValue returns the sub-diff of two different documents or two
// different arrays, and false otherwise (the caller logs the value whole,
// or nothing when the values are equal). Like mongod, it prefers the
// sub-diff even when it is larger than the value.
func diffValue(a, b bson.RawValue, depth int) ([]byte, bool) {
	if depth >= maxDiffDepth || a.Type != b.Type || sameValue(a, b) {
		return nil, false
	}
	var d []byte
	switch a.Type {
	case bson.TypeEmbeddedDocument:
		d = diffDocs(a.Document(), b.Document(), depth+1)
	case bson.TypeArray:
		d = diffArrays(bson.Raw(a.Array()), bson.Raw(b.Array()), depth+1)
	default:
		return nil, false
	}
	return d, true
}

// diffArrays returns the array diff {a: true, l: newLength (when it
// shrank), u<i>: value, s<i>: sub-diff} that turns old into arr.
func diffArrays(old, arr bson.Raw, depth int) []byte {
	ov, _ := old.Values()
	nv, _ := arr.Values()
	out := bsoncore.AppendBooleanElement(nil, "a", true)
	if len(nv) < len(ov) {
		out = bsoncore.AppendInt32Element(out, "l", int32(len(nv)))
	}
	for i, v := range nv {
		idx := strconv.Itoa(i)
		if i < len(ov) {
			if d, ok := diffValue(ov[i], v, depth); ok {
				out = bsoncore.AppendDocumentElement(out, "s"+idx, d)
				continue
			}
			if sameValue(ov[i], v) {
				continue
			}
		}
		out = bsoncore.AppendValueElement(out, "u"+idx, bsoncore.Value{Type: bsoncore.Type(v.Type), Data: v.Value})
	}
	return frameDoc(out)
}
