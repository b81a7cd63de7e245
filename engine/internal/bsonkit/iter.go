package bsonkit

import (
	"strconv"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/x/bsonx/bsoncore"
)

// ForEach calls fn for each element of doc (a document, or an array given
// as its document bytes) in order, until fn returns false. The key aliases
// a string built for the call; the value aliases doc.
func ForEach(doc []byte, fn func(key string, v bson.RawValue) bool) {
	rest := body(doc)
	for {
		e, r, ok := bsoncore.ReadElement(rest)
		if !ok {
			return
		}
		v := e.Value()
		if !fn(string(e.KeyBytes()), bson.RawValue{Type: bson.Type(v.Type), Value: v.Data}) {
			return
		}
		rest = r
	}
}

// Values returns the values of an array (or document) in order. It
// allocates the slice; the values alias doc.
func Values(doc []byte) []bson.RawValue {
	var out []bson.RawValue
	rest := body(doc)
	for {
		e, r, ok := bsoncore.ReadElement(rest)
		if !ok {
			return out
		}
		v := e.Value()
		out = append(out, bson.RawValue{Type: bson.Type(v.Type), Value: v.Data})
		rest = r
	}
}

// Field returns the first element of doc named name, and false when there
// is none. doc may be an array's document bytes, with names "0", "1"...
func Field(doc []byte, name string) (bson.RawValue, bool) {
	rest := body(doc)
	for {
		e, r, ok := bsoncore.ReadElement(rest)
		if !ok {
			return bson.RawValue{}, false
		}
		if string(e.KeyBytes()) == name {
			v := e.Value()
			return bson.RawValue{Type: bson.Type(v.Type), Value: v.Data}, true
		}
		rest = r
	}
}

// Len returns the number of elements of a document or array.
func Len(doc []byte) int {
	n := 0
	rest := body(doc)
	for {
		_, r, ok := bsoncore.ReadElement(rest)
		if !ok {
			return n
		}
		n++
		rest = r
	}
}

// IsContainer reports whether v is a document or an array: a value whose
// Value bytes are a BSON document.
func IsContainer(v bson.RawValue) bool {
	return v.Type == bson.TypeEmbeddedDocument || v.Type == bson.TypeArray
}

// ArrayIndex parses a path component as an array index the way mongod's
// path walks do: only all-digit strings count ("01" included, as mongod
// accepts it for positional paths), with no sign and within int range.
func ArrayIndex(s string) (int, bool) {
	if s == "" {
		return 0, false
	}
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return 0, false
		}
	}
	n, err := strconv.Atoi(s)
	if err != nil {
		return 0, false
	}
	return n, true
}

// AllDigits reports whether s is a non-empty string of ASCII digits.
func AllDigits(s string) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return true
}

// Elem builds the one-field document {key: v}.
func Elem(key string, v bson.RawValue) bson.Raw {
	idx, dst := bsoncore.AppendDocumentStart(nil)
	dst = bsoncore.AppendValueElement(dst, key, bsoncore.Value{Type: bsoncore.Type(v.Type), Data: v.Value})
	dst, _ = bsoncore.AppendDocumentEnd(dst, idx)
	return bson.Raw(dst)
}
