package index

import (
	"bytes"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/x/bsonx/bsoncore"

	"github.com/formworkdb/formwork/engine/internal/keystring"
	"github.com/formworkdb/formwork/engine/internal/mongoerr"
)

// KeyValue returns the keyValue document of a DuplicateKey error: one field
// per key pattern field, named as in the key pattern, holding the value of
// doc that produced key (so a multikey index reports the array element, and
// a missing field reports null), with doc's original BSON types. When key
// did not come from doc it decodes key instead, with the numeric types
// keystring.DecodeValue reports. A wildcard field contributes its value
// under the indexed path's name.
func (ix *Index) KeyValue(doc bson.Raw, key []byte) bson.Raw {
	var row []bson.RawValue
	if validateDoc(doc) != nil {
		// fall through to decoding key
	} else if tuples, _, err := ix.tuples(doc); err == nil {
		for _, t := range tuples {
			if bytes.Equal(ix.encode(t), key) {
				row = t
				break
			}
		}
	}
	if row == nil {
		vals, _, err := keystring.Decode(key, ix.dirs)
		if err != nil {
			return bson.Raw(bsoncore.BuildDocument(nil))
		}
		row = vals
	}
	idx, d := bsoncore.AppendDocumentStart(nil)
	col := 0
	for _, f := range ix.spec.Fields {
		name := f.Path
		v := row[col]
		if f.Wildcard {
			if s, ok := row[col].StringValueOK(); ok {
				name = s
			}
			v = row[col+1]
			col++
		}
		col++
		if v.Type == 0 {
			v = nullValue
		}
		d = bsoncore.AppendHeader(d, bsoncore.Type(v.Type), name)
		d = append(d, v.Value...)
	}
	d, _ = bsoncore.AppendDocumentEnd(d, idx)
	return d
}

// DuplicateKeyError returns the error mongod sends when inserting doc into
// ns ("db.coll") collides with an existing entry on key: code 11000,
// "E11000 duplicate key error collection: db.coll index: name_1 dup key:
// { name: "x" }", with keyPattern and keyValue reply fields.
func (ix *Index) DuplicateKeyError(ns string, doc bson.Raw, key []byte) *mongoerr.Error {
	kv := ix.KeyValue(doc, key)
	if ix.spec.Collation != nil {
		// mongod names the index's collation after its name.
		e := mongoerr.Newf(mongoerr.DuplicateKey, "E11000 duplicate key error collection: %s index: %s collation: %s dup key: %s",
			ns, ix.spec.Name, formatDoc(ix.spec.Collation), formatDoc(kv))
		return e.With("keyPattern", ix.spec.Key).With("keyValue", kv).With("collation", ix.spec.Collation)
	}
	e := mongoerr.Newf(mongoerr.DuplicateKey, "E11000 duplicate key error collection: %s index: %s dup key: %s",
		ns, ix.spec.Name, formatDoc(kv))
	return e.With("keyPattern", ix.spec.Key).With("keyValue", kv)
}
