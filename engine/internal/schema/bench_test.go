package schema_test

import (
	"testing"

	"github.com/formworkdb/formwork/engine/internal/schema"
)

// BenchmarkMatch measures one document against a 10-property schema (the
// engine's BenchmarkInsertValidated schema).
func BenchmarkMatch(b *testing.B) {
	s, err := schema.Compile(raw(b, `{"bsonType": "object", "required": ["name", "email", "age", "kind"], "properties": {
		"name": {"bsonType": "string", "maxLength": 100}, "email": {"bsonType": "string", "pattern": "@"},
		"age": {"bsonType": "int", "minimum": 0, "maximum": 150}, "kind": {"enum": ["user", "admin", "guest"]},
		"score": {"bsonType": "double"}, "active": {"bsonType": "bool"},
		"tags": {"bsonType": "array", "maxItems": 10, "items": {"bsonType": "string"}},
		"address": {"bsonType": "object", "required": ["city"]}, "created": {"bsonType": "date"},
		"note": {"bsonType": ["string", "null"]}}}`))
	if err != nil {
		b.Fatal(err)
	}
	doc := raw(b, `{"_id": 1, "name": "user", "email": "u@example.com", "age": {"$numberInt": "42"}, "kind": "user",
		"score": 1.5, "active": true, "tags": ["a", "b"], "address": {"city": "Paris"},
		"created": {"$date": "2023-11-14T22:13:20Z"}, "note": null}`)
	b.ReportAllocs()
	for i := 0; i < b.N; i++ {
		if !s.Match(doc) {
			b.Fatal("no match")
		}
	}
}
