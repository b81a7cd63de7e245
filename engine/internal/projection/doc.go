// Package projection compiles and applies the projections of find and
// findAndModify with MongoDB 7.0's semantics: inclusion and exclusion of
// top-level, dotted and nested paths (arrays of documents are projected
// element by element; in inclusion mode scalars inside such arrays are
// dropped), the _id rules (included unless excluded; {_id: 1} allowed in an
// exclusion projection), $slice (n or [skip, limit]), $elemMatch, and the
// positional "a.$".
//
// Aggregation expressions and literal values ({a: {$add: ...}},
// {a: "x"}, {a: {$meta: ...}}) answer NotImplemented (238) until the
// aggregation issue; they never give a wrong result.
//
// Output field order follows the input document; $elemMatch fields come
// last, as mongod 4.4+ returns them.
//
// Imports: match, bsonkit, mongoerr and the driver's bson packages.
//
// Invariants:
//
//	I1. A *Projection is immutable after Compile and safe for concurrent
//	    use.
//	I2. Apply never modifies its input and returns a new document.
//
// Reference: https://www.mongodb.com/docs/v7.0/reference/method/db.collection.find/#projection
package projection
