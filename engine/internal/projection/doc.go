// Package projection compiles and applies the projections of find and
// findAndModify with MongoDB 7.0's semantics: inclusion and exclusion of
// top-level, dotted and nested paths (arrays of documents are projected
// element by element; in inclusion mode scalars inside such arrays are
// dropped), the _id rules (included unless excluded; {_id: 1} allowed in an
// exclusion projection), $slice (n or [skip, limit]), $elemMatch, and the
// positional "a.$".
//
// Computed fields (MongoDB 4.4+): a value that is not a number, a boolean
// or a sub-projection is an aggregation expression evaluated against the
// document by package expr: an operator document ({a: {$add: [...]}}), a
// field path ("$b"), a variable ("$$ROOT", "$$NOW", a command let
// variable: CompileEnv), an array or any other literal ({a: "x"},
// {a: null}). They make the projection an inclusion projection (31252,
// 31310 after an exclusion; 31254 for an exclusion after them). A {$slice}
// that is not find's syntax is the expression $slice, as in mongod.
// {a: {$meta: ...}} answers NotImplemented (238).
//
// Output field order follows the input document for included fields;
// computed fields and branches that only hold computed fields follow in
// spec order (a computed field under an included sub-document goes inside
// it, at its end); a computed value that is missing adds no field;
// $elemMatch fields come last, as mongod 4.4+ returns them.
//
// Imports: match, expr, bsonkit, mongoerr and the driver's bson packages.
//
// Invariants:
//
//	I1. A *Projection is immutable after Compile and safe for concurrent
//	    use.
//	I2. Apply never modifies its input and returns a new document.
//
// Reference: https://www.mongodb.com/docs/v7.0/reference/method/db.collection.find/#projection
package projection
