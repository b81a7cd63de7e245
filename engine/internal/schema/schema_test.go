package schema_test

import (
	"strings"
	"testing"

	"go.mongodb.org/mongo-driver/v2/bson"

	"github.com/formworkdb/formwork/engine/internal/mongoerr"
	"github.com/formworkdb/formwork/engine/internal/schema"
)

func raw(t testing.TB, s string) bson.Raw {
	t.Helper()
	var d bson.Raw
	if err := bson.UnmarshalExtJSON([]byte(s), false, &d); err != nil {
		t.Fatalf("%s: %v", s, err)
	}
	return d
}

func TestCompileErrors(t *testing.T) {
	cases := []struct {
		schema string
		code   mongoerr.Code
		msg    string
	}{
		{`{"type": "integer"}`, mongoerr.FailedToParse, "$jsonSchema type 'integer' is not currently supported."},
		{`{"bsonType": ["string", "integer"]}`, mongoerr.FailedToParse, "$jsonSchema type 'integer' is not currently supported."},
		{`{"$ref": "#/a"}`, mongoerr.FailedToParse, "$jsonSchema keyword '$ref' is not currently supported"},
		{`{"$schema": "x"}`, mongoerr.FailedToParse, "$jsonSchema keyword '$schema' is not currently supported"},
		{`{"default": 1}`, mongoerr.FailedToParse, "$jsonSchema keyword 'default' is not currently supported"},
		{`{"id": 1}`, mongoerr.FailedToParse, "$jsonSchema keyword 'id' is not currently supported"},
		{`{"format": "date"}`, mongoerr.FailedToParse, "$jsonSchema keyword 'format' is not currently supported"},
		{`{"const": 1}`, mongoerr.FailedToParse, "Unknown $jsonSchema keyword: const"},
		{`{"type": 1}`, mongoerr.TypeMismatch, "$jsonSchema keyword 'type' must be either a string or an array of strings"},
		{`{"type": [1]}`, mongoerr.TypeMismatch, "$jsonSchema keyword 'type' array elements must be strings"},
		{`{"type": []}`, mongoerr.FailedToParse, "$jsonSchema keyword 'type' must name at least one type"},
		{`{"type": "int"}`, mongoerr.BadValue, "Unknown type name alias: int"},
		{`{"bsonType": "missing"}`, mongoerr.BadValue, "'missing' is not a legal type name. To query for non-existence of a field, use {$exists:false}."},
		{`{"properties": {"a": {"maximum": "x"}}}`, mongoerr.TypeMismatch, "$jsonSchema keyword 'maximum' must be a number"},
		{`{"properties": {"a": {"maximum": 1, "exclusiveMaximum": 1}}}`, mongoerr.TypeMismatch, "$jsonSchema keyword 'exclusiveMaximum' must be a boolean"},
		{`{"exclusiveMaximum": true}`, mongoerr.FailedToParse, "$jsonSchema keyword 'maximum' must be a present if exclusiveMaximum is present"},
		{`{"pattern": 1}`, mongoerr.TypeMismatch, "$jsonSchema keyword 'pattern' must be a string"},
		{`{"pattern": "("}`, mongoerr.Code(51091), ""},
		{`{"multipleOf": -1}`, mongoerr.FailedToParse, "$jsonSchema keyword 'multipleOf' must have a positive value"},
		{`{"minItems": 1.5}`, mongoerr.FailedToParse, ""},
		{`{"items": [1]}`, mongoerr.TypeMismatch, ""},
		{`{"additionalItems": 1}`, mongoerr.TypeMismatch, ""},
		{`{"required": "a"}`, mongoerr.TypeMismatch, ""},
		{`{"required": [1]}`, mongoerr.TypeMismatch, ""},
		{`{"patternProperties": {"a": 1}}`, mongoerr.TypeMismatch, "$jsonSchema keyword 'patternProperties' has property 'a' which is not an object"},
		{`{"dependencies": {"a": []}}`, mongoerr.FailedToParse, "property 'a' in $jsonSchema keyword 'dependencies' cannot be an empty array"},
		{`{"dependencies": {"a": ["b", "b"]}}`, mongoerr.FailedToParse, "array 'a' in $jsonSchema keyword 'dependencies' contains duplicate element: b"},
		{`{"allOf": {}}`, mongoerr.TypeMismatch, "$jsonSchema keyword 'allOf' must be an array"},
		{`{"oneOf": [1]}`, mongoerr.TypeMismatch, ""},
		{`{"not": []}`, mongoerr.TypeMismatch, ""},
		{`{"enum": [1, 1.0]}`, mongoerr.FailedToParse, "$jsonSchema keyword 'enum' array cannot contain duplicate values."},
		{`{"enum": [{"a": 1, "b": 2}, {"b": 2, "a": 1}]}`, mongoerr.FailedToParse, "$jsonSchema keyword 'enum' array cannot contain duplicate values."},
		{`{"description": 1}`, mongoerr.TypeMismatch, "$jsonSchema keyword 'description' must be of type string"},
		{`{"encrypt": {}}`, mongoerr.NotImplemented, ""},
	}
	for _, c := range cases {
		_, err := schema.Compile(raw(t, c.schema))
		me, ok := err.(*mongoerr.Error)
		if !ok || me.Code != c.code || (c.msg != "" && me.Msg != c.msg) {
			t.Errorf("Compile(%s) = %v, want %s %q", c.schema, err, c.code, c.msg)
		}
	}
}

func TestCompileDepthIsBounded(t *testing.T) {
	s := `{}`
	for i := 0; i < schema.MaxDepth+2; i++ {
		s = `{"properties": {"a": ` + s + `}}`
	}
	if _, err := schema.Compile(raw(t, s)); err == nil {
		t.Fatal("a schema nested past MaxDepth compiled")
	}
	s = `{}`
	for i := 0; i < 20; i++ {
		s = `{"items": ` + s + `}`
	}
	if _, err := schema.Compile(raw(t, s)); err != nil {
		t.Fatal(err)
	}
}

func TestMatch(t *testing.T) {
	cases := []struct {
		schema, doc string
		want        bool
	}{
		{`{}`, `{"a": 1}`, true},
		{`{"bsonType": "object"}`, `{}`, true},
		{`{"type": "string"}`, `{}`, false},
		{`{"properties": {"a": {"bsonType": "number"}}}`, `{"a": {"$numberDecimal": "1"}}`, true},
		{`{"properties": {"a": {"bsonType": "number"}}}`, `{}`, true},
		{`{"required": ["a"], "properties": {"a": {"bsonType": "number"}}}`, `{}`, false},
		{`{"properties": {"a": {"minimum": 1}}}`, `{"a": "zzz"}`, true},
		{`{"properties": {"a": {"minimum": {"$numberDouble": "NaN"}}}}`, `{"a": {"$numberDouble": "NaN"}}`, true},
		{`{"properties": {"a": {"multipleOf": 0.1}}}`, `{"a": 0.3}`, true},
		{`{"properties": {"a": {"multipleOf": 2}}}`, `{"a": {"$numberDouble": "Infinity"}}`, false},
		{`{"properties": {"a": {"maxLength": 1}}}`, `{"a": "é"}`, true},
		{`{"properties": {"a": {"uniqueItems": true}}}`, `{"a": [{"x": 1, "y": 2}, {"y": 2, "x": 1}]}`, false},
		{`{"properties": {"a": {"uniqueItems": true}}}`, `{"a": [1, {"$numberLong": "1"}]}`, false},
		{`{"properties": {"a": {"uniqueItems": true}}}`, `{"a": [[1, 2], [2, 1]]}`, true},
		{`{"properties": {"a": {"enum": [{"x": 1, "y": 2}]}}}`, `{"a": {"y": 2, "x": 1}}`, true},
		{`{"additionalProperties": false, "properties": {"_id": {}}}`, `{"_id": 1, "b": 1}`, false},
		{`{"additionalProperties": false, "patternProperties": {"^_": {}}}`, `{"_id": 1}`, true},
		{`{"not": {"bsonType": "array"}}`, `{}`, true},
		{`{"anyOf": [{"bsonType": "array"}, {"required": ["a"]}]}`, `{"a": 1}`, true},
		{`{"properties": {"a": {"dependencies": {"x": ["y"]}}}}`, `{"a": {"x": 1}}`, false},
		{`{"properties": {"a": {"dependencies": {"x": ["y"]}}}}`, `{"a": 5}`, true},
		{`{"properties": {"a": {"items": [{}, {"bsonType": "int"}]}}}`, `{"a": [1]}`, true},
	}
	for _, c := range cases {
		s, err := schema.Compile(raw(t, c.schema))
		if err != nil {
			t.Fatalf("Compile(%s): %v", c.schema, err)
		}
		if got := s.Match(raw(t, c.doc)); got != c.want {
			t.Errorf("%s on %s = %v, want %v", c.schema, c.doc, got, c.want)
		}
	}
}

func TestExplainTopLevelShapes(t *testing.T) {
	s, err := schema.Compile(raw(t, `{"title": "T", "required": ["a", "b"], "minProperties": 3}`))
	if err != nil {
		t.Fatal(err)
	}
	doc := raw(t, `{"_id": 1}`)
	if s.Match(doc) {
		t.Fatal("matched")
	}
	got, _ := bson.MarshalExtJSON(s.Explain(doc), false, false)
	want := `{"operatorName":"$jsonSchema","title":"T","schemaRulesNotSatisfied":[` +
		`{"operatorName":"required","specifiedAs":{"required":["a","b"]},"missingProperties":["a","b"]},` +
		`{"operatorName":"minProperties","specifiedAs":{"minProperties":3},"reason":"specified number of properties was not satisfied","numberOfProperties":1}]}`
	if string(got) != want {
		t.Fatalf("Explain =\n%s\nwant\n%s", got, want)
	}
	never, _ := schema.Compile(raw(t, `{"bsonType": "string"}`))
	got, _ = bson.MarshalExtJSON(never.Explain(doc), false, false)
	if !strings.Contains(string(got), "expression always evaluates to false") {
		t.Fatalf("never: %s", got)
	}
}

// TestDottedPropertyNames pins the divergence on dotted property names:
// they name a field with a dot, not a path.
func TestDottedPropertyNames(t *testing.T) {
	s, err := schema.Compile(raw(t, `{"required": ["a.b"], "properties": {"a.b": {"bsonType": "int"}}}`))
	if err != nil {
		t.Fatal(err)
	}
	if s.Match(raw(t, `{"a": {"b": 1}}`)) {
		t.Fatal("a dotted property name matched a subdocument path")
	}
	if !s.Match(raw(t, `{"a.b": {"$numberInt": "1"}}`)) {
		t.Fatal("a dotted property name did not match the dotted field")
	}
}
