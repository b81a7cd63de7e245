// Package schema compiles MongoDB's $jsonSchema (JSON Schema draft 4 with
// MongoDB's bsonType extension) into a tree that matches documents and
// explains failures in the shape of MongoDB 5.0+ document validation
// errors (errInfo.details).
//
// Keywords: bsonType, type (with "number" and arrays of types), required,
// properties, patternProperties, additionalProperties, items,
// additionalItems, minItems, maxItems, uniqueItems, enum, minimum,
// maximum, exclusiveMinimum, exclusiveMaximum, minLength, maxLength,
// pattern, multipleOf, minProperties, maxProperties, allOf, anyOf, oneOf,
// not, dependencies, title and description. The draft keywords MongoDB
// refuses ($ref, $schema, default, definitions, format, id) and the type
// "integer" fail with FailedToParse (9), as json_schema_parser.cpp does;
// unknown keywords fail with FailedToParse too.
//
// Imports: bsonkit, mongoerr, regex and the driver's bson package only.
// Must not import match, expr or anything above them (match imports this
// package for its $jsonSchema operator).
//
// Invariants:
//
//	I1. Compile never panics on any bytes (fuzzed) and returns a
//	    *mongoerr.Error for every schema MongoDB rejects.
//	I2. Schemas nest at most MaxDepth levels; deeper ones fail to compile,
//	    so matching and explaining recurse a bounded number of times.
//	I3. A *Schema is immutable after Compile and safe for concurrent use.
//	I4. Explain is only meaningful for a document Match rejected; it
//	    reports, per keyword, what MongoDB's doc_validation_error.cpp
//	    reports in a normal (non-negated) context.
//
// Semantics follow MongoDB: a keyword that restricts a type (minimum on
// numbers, minLength on strings, items on arrays, properties on objects)
// holds for values of other types and for missing values; at the top
// level only object keywords apply, since only documents are stored.
//
// Reference: https://www.mongodb.com/docs/v7.0/reference/operator/query/jsonSchema/
package schema
