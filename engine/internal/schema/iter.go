package schema

import (
	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/x/bsonx/bsoncore"
)

// eachField calls fn for each field of the document or array doc, in
// order, until fn returns false. The key aliases doc: fn must not keep
// it. Unlike bsonkit.ForEach it does not allocate a string per key.
func eachField(doc []byte, fn func(key []byte, v bson.RawValue) bool) {
	if len(doc) < 5 {
		return
	}
	rest := doc[4 : len(doc)-1]
	for {
		e, r, ok := bsoncore.ReadElement(rest)
		if !ok {
			return
		}
		v := e.Value()
		if !fn(e.KeyBytes(), bson.RawValue{Type: bson.Type(v.Type), Value: v.Data}) {
			return
		}
		rest = r
	}
}

// fieldIter walks the fields of a document or array without allocating.
// Its key aliases the document.
type fieldIter struct{ rest []byte }

func newFieldIter(doc []byte) fieldIter {
	if len(doc) < 5 {
		return fieldIter{}
	}
	return fieldIter{rest: doc[4 : len(doc)-1]}
}

// next returns the next field, or ok false at the end.
func (it *fieldIter) next() (key []byte, v bson.RawValue, ok bool) {
	e, r, ok := bsoncore.ReadElement(it.rest)
	if !ok {
		return nil, bson.RawValue{}, false
	}
	it.rest = r
	val := e.Value()
	return e.KeyBytes(), bson.RawValue{Type: bson.Type(val.Type), Value: val.Data}, true
}
