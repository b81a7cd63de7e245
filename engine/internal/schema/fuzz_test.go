package schema_test

import (
	"testing"

	"go.mongodb.org/mongo-driver/v2/bson"

	"github.com/formworkdb/formwork/engine/internal/mongoerr"
	"github.com/formworkdb/formwork/engine/internal/schema"
)

var fuzzSchemas = []string{
	`{"bsonType": "object", "required": ["a"], "properties": {"a": {"bsonType": ["int", "string"], "minimum": 1, "maxLength": 3}}}`,
	`{"properties": {"arr": {"items": [{"type": "number"}], "additionalItems": {"enum": [1, "x"]}, "uniqueItems": true, "minItems": 1}}}`,
	`{"patternProperties": {"^x": {"not": {"type": "null"}}}, "additionalProperties": false, "dependencies": {"a": ["b"], "c": {"minProperties": 2}}}`,
	`{"oneOf": [{"required": ["a"]}, {"anyOf": [{"allOf": [{"maxProperties": 1}]}]}], "title": "t", "description": "d"}`,
	`{"properties": {"n": {"multipleOf": 0.5, "maximum": 10, "exclusiveMaximum": true, "pattern": "^a"}}}`,
}

var fuzzDoc = `{"_id": 1, "a": 1, "b": "xy", "arr": [1, 1, "x"], "xa": null, "n": 2.5, "c": {"d": 1}}`

// FuzzCompile checks I1: Compile never panics and fails only with
// MongoDB errors; a compiled schema matches and explains a document
// without panicking.
func FuzzCompile(f *testing.F) {
	for _, s := range fuzzSchemas {
		f.Add([]byte(raw(f, s)))
	}
	doc := raw(f, fuzzDoc)
	f.Fuzz(func(t *testing.T, spec []byte) {
		s, err := schema.Compile(bson.Raw(spec))
		if err != nil {
			if me := mongoerr.As(err); me.Code == mongoerr.InternalError {
				t.Fatalf("non-MongoDB error: %v", err)
			}
			return
		}
		if !s.Match(doc) {
			if _, err := bson.Marshal(s.Explain(doc)); err != nil {
				t.Fatalf("explain does not marshal: %v", err)
			}
		}
	})
}
