package index

import (
	"strings"
	"testing"

	"github.com/formworkdb/formwork/engine/internal/mongoerr"
)

func TestParseSpecErrors(t *testing.T) {
	tests := []struct {
		spec string
		code mongoerr.Code
		msg  string // substring of the message
	}{
		{`{"key": {"a": 1}, "name": "a_1", "foo": 1}`, mongoerr.InvalidIndexSpecificationOption, `The field 'foo' is not valid for an index specification. Specification: { key: { a: 1 }, name: "a_1", foo: 1 }`},
		{`{"key": 1, "name": "x"}`, mongoerr.TypeMismatch, "The field 'key' must be an object, but got int"},
		{`{"key": {}, "name": "x"}`, mongoerr.CannotCreateIndex, "Index keys cannot be empty."},
		{`{"key": {"a": true}, "name": "x"}`, mongoerr.CannotCreateIndex, "Values in v:2 index key pattern cannot be of type bool. Only numbers > 0, numbers < 0, and strings are allowed."},
		{`{"key": {"a": 0}, "name": "x"}`, mongoerr.CannotCreateIndex, "Values in the index key pattern cannot be 0."},
		{`{"key": {"a": {"$numberDouble": "NaN"}}, "name": "x"}`, mongoerr.CannotCreateIndex, "cannot be NaN"},
		{`{"key": {"": 1}, "name": "x"}`, mongoerr.CannotCreateIndex, "Index keys cannot be an empty field."},
		{`{"key": {"a..b": 1}, "name": "x"}`, mongoerr.CannotCreateIndex, "Index keys cannot contain an empty field."},
		{`{"key": {"$a": 1}, "name": "x"}`, mongoerr.CannotCreateIndex, "field name starts with '$'"},
		{`{"key": {"a": "foo"}, "name": "x"}`, mongoerr.CannotCreateIndex, "Unknown index plugin 'foo'"},
		{`{"key": {"a": "text"}, "name": "x"}`, mongoerr.NotImplemented, "text"},
		{`{"key": {"a": "2dsphere"}, "name": "x"}`, mongoerr.NotImplemented, "2dsphere"},
		{`{"key": {"a": "hashed"}, "name": "x"}`, mongoerr.NotImplemented, "hashed"},
		{`{"key": {"a": "geoHaystack"}, "name": "x"}`, mongoerr.CannotCreateIndex, "GeoHaystack"},
		{`{"key": {"a": "hashed", "b": "text"}, "name": "x"}`, mongoerr.CannotCreateIndex, "Can't use more than one index plugin for a single index."},
		{`{"key": {"a": 1}}`, mongoerr.FailedToParse, "The 'name' field is a required property of an index specification"},
		{`{"name": "x"}`, mongoerr.FailedToParse, "The 'key' field is a required property"},
		{`{"key": {"a": 1}, "name": 5}`, mongoerr.TypeMismatch, "The field 'name' must be a string, but got int"},
		{`{"key": {"a": 1}, "name": ""}`, mongoerr.CannotCreateIndex, "index name cannot be empty"},
		{`{"key": {"a": 1}, "name": "x", "unique": "yes"}`, mongoerr.TypeMismatch, "which is not convertible to bool"},
		{`{"key": {"a": 1}, "name": "x", "v": 3}`, mongoerr.CannotCreateIndex, "cannot create an index with v=3"},
		{`{"key": {"a": 1}, "name": "x", "sparse": true, "partialFilterExpression": {"a": 1}}`, mongoerr.CannotCreateIndex, `cannot mix "partialFilterExpression" and "sparse" options`},
		{`{"key": {"a": 1}, "name": "x", "partialFilterExpression": {"a": {"$ne": 1}}}`, mongoerr.CannotCreateIndex, "Expression not supported in partial index: $not\n    a $eq 1\n"},
		{`{"key": {"a": 1}, "name": "x", "partialFilterExpression": {"a": {"$exists": false}}}`, mongoerr.CannotCreateIndex, "Expression not supported in partial index: $not\n    a exists\n"},
		{`{"key": {"a": 1}, "name": "x", "partialFilterExpression": {"a": {"$foo": 1}}}`, mongoerr.BadValue, "unknown operator: $foo"},
		{`{"key": {"a": 1}, "name": "x", "partialFilterExpression": {"$expr": {"$eq": ["$a", 1]}}}`, mongoerr.Code(224), "$expr is not allowed in this context"},
		{`{"key": {"a": 1}, "name": "x", "partialFilterExpression": 1}`, mongoerr.TypeMismatch, "must be an object"},
		{`{"key": {"a": 1}, "name": "x", "partialFilterExpression": {"$and": [{"$and": [{"$and": [{"$and": [{"$and": [{"a": 1}, {"b": 1}]}, {"c": 1}]}, {"d": 1}]}, {"e": 1}]}, {"f": 1}]}}`, mongoerr.CannotCreateIndex, "partialFilterExpression depth may not exceed 4"},
		{`{"key": {"$**": 1}, "name": "x", "unique": true}`, mongoerr.CannotCreateIndex, "Index type 'wildcard' does not support the unique option"},
		{`{"key": {"$**": 1}, "name": "x", "sparse": true}`, mongoerr.CannotCreateIndex, "does not support the sparse option"},
		{`{"key": {"a": 1}, "name": "x", "wildcardProjection": {"a": 1}}`, mongoerr.BadValue, "The field 'wildcardProjection' is only allowed in 'wildcard' indexes"},
		{`{"key": {"a.$**": 1}, "name": "x", "wildcardProjection": {"a": 1}}`, mongoerr.FailedToParse, "is only allowed when 'key' is"},
		{`{"key": {"$**": 1}, "name": "x", "wildcardProjection": {"a": 1, "b": 0}}`, mongoerr.Code(31253), "Cannot do exclusion on field b in inclusion projection"},
		{`{"key": {"a": 1, "$**": 1}, "name": "x"}`, mongoerr.CannotCreateIndex, "Compound wildcard indexes on all fields must also specify 'wildcardProjection' option"},
		{`{"key": {"a": 1, "b": 1}, "name": "x", "expireAfterSeconds": 10}`, mongoerr.CannotCreateIndex, "TTL indexes are single-field indexes, compound indexes do not support TTL."},
		{`{"key": {"a": 1}, "name": "x", "expireAfterSeconds": -1}`, mongoerr.CannotCreateIndex, "cannot be less than 0"},
		{`{"key": {"a": 1}, "name": "x", "expireAfterSeconds": "1"}`, mongoerr.CannotCreateIndex, "must be numeric, but received a type of 'string'"},
		{`{"key": {"a": 1}, "name": "x", "expireAfterSeconds": 3000000000}`, mongoerr.CannotCreateIndex, "within the range of a 32-bit integer"},
		{`{"key": {"_id": 1}, "name": "_id_", "unique": true}`, mongoerr.InvalidIndexSpecificationOption, "The field 'unique' is not valid for an _id index specification."},
		{`{"key": {"_id": 1}, "name": "_id_", "expireAfterSeconds": 5}`, mongoerr.InvalidIndexSpecificationOption, "not valid for an _id index"},
		{`{"key": {"a": 1}, "name": "_id_"}`, mongoerr.BadValue, "The index name '_id_' is reserved for the _id index"},
		{`{"key": {"a": 1}, "name": "*"}`, mongoerr.BadValue, "The index name '*' is not valid."},
		{`{"key": {"a": 1, "a": -1}, "name": "x"}`, mongoerr.BadValue, "appears multiple times in the index key pattern"},
		{`{"key": {"a": 1}, "name": "x", "collation": {"locale": "xx"}}`, mongoerr.BadValue, "locale"},
		{`{"key": {"a": 1}, "name": "x", "weights": {"a": 1}}`, mongoerr.CannotCreateIndex, "can only be specified with text indexes"},
		{`{"key": {"a": 1}, "name": "x", "hidden": 1}`, mongoerr.TypeMismatch, "must be a bool"},
	}
	for _, tt := range tests {
		_, err := ParseSpec(ej(t, tt.spec))
		if !mongoerr.Is(err, tt.code) {
			t.Errorf("ParseSpec(%s) = %v, want code %d", tt.spec, err, tt.code)
			continue
		}
		if msg := mongoerr.As(err).Msg; !strings.Contains(msg, tt.msg) {
			t.Errorf("ParseSpec(%s) message %q, want it to contain %q", tt.spec, msg, tt.msg)
		}
	}
}

func TestParseSpecValid(t *testing.T) {
	tests := []struct {
		spec, doc string
	}{
		{`{"key": {"a": 1}, "name": "a_1"}`, `{ v: 2, key: { a: 1 }, name: "a_1" }`},
		{`{"v": 1, "key": {"a": -1.0}, "name": "a_-1", "unique": 1, "background": true, "ns": "db.c"}`, `{ v: 1, key: { a: -1.0 }, name: "a_-1", unique: true, background: true }`},
		{`{"key": {"t": 1}, "name": "t", "expireAfterSeconds": 3600.5}`, `{ v: 2, key: { t: 1 }, name: "t", expireAfterSeconds: 3600 }`},
		{`{"key": {"a.b.$**": 1}, "name": "w"}`, `{ v: 2, key: { a.b.$**: 1 }, name: "w" }`},
		{`{"key": {"a": 1}, "name": "p", "partialFilterExpression": {"a": {"$gte": 1, "$lt": 5}, "$or": [{"b": {"$in": [1, 2]}}, {"c": {"$type": ["string", 16]}}]}}`, `{ v: 2, key: { a: 1 }, name: "p", partialFilterExpression: { a: { $gte: 1, $lt: 5 }, $or: [ { b: { $in: [ 1, 2 ] } }, { c: { $type: [ "string", 16 ] } } ] } }`},
		{`{"key": {"_id": 1}, "name": "_id_", "collation": {"locale": "simple"}}`, `{ v: 2, key: { _id: 1 }, name: "_id_" }`},
		{`{"key": {"a": 1, "$**": -1}, "name": "cw", "wildcardProjection": {"b": 1}, "hidden": true}`, `{ v: 2, key: { a: 1, $**: -1 }, name: "cw", hidden: true, wildcardProjection: { b: 1 } }`},
	}
	for _, tt := range tests {
		s, err := ParseSpec(ej(t, tt.spec))
		if err != nil {
			t.Errorf("ParseSpec(%s): %v", tt.spec, err)
			continue
		}
		if got := formatDoc(s.Doc()); got != tt.doc {
			t.Errorf("ParseSpec(%s).Doc() = %s, want %s", tt.spec, got, tt.doc)
		}
		if _, err := Compile(s); err != nil {
			t.Errorf("Compile(%s): %v", tt.spec, err)
		}
	}
}
