// Package order compiles a sort specification ({a: 1, "b.c": -1}) into a
// comparator over documents, with MongoDB 7.0's semantics under the simple
// collation (Order.WithCollation compares strings under another one):
//
//   - values compare in BSON order (bsonkit.Compare), numbers by value;
//   - a missing field sorts as null; an empty array as undefined (below
//     null); nested arrays compare as arrays;
//   - a document's sort key comes from its index-style keys: every
//     combination of values the sort paths reach, with paths through the
//     same array taken element by element (so {a: [{b: 1, c: 9}, {b: 2,
//     c: 0}]} yields the keys (1, 9) and (2, 0) for {"a.b": 1, "a.c": 1}),
//     and the document sorts by the smallest of its keys under the sort
//     order: the least element ascending, the greatest descending;
//   - two sort paths through different arrays of one document are
//     "parallel arrays", an error (BadValue) reported by Key.
//
// Divergence: mongod also restricts the array elements that form a sort
// key to those matching the query's predicate on the same path in a few
// plans; Formwork never does. The query-filter interaction is ignored.
//
// {$natural: 1|-1} is accepted as the sole key and reported by Natural;
// {$meta: ...} answers NotImplemented until text search exists.
//
// Imports: bsonkit, mongoerr and the driver's bson package only.
//
// Invariants:
//
//	I1. An *Order is immutable after Compile and safe for concurrent use.
//	I2. Compare is a total preorder over valid documents (it may call two
//	    documents with equal keys equal; callers break ties).
//
// Reference: https://www.mongodb.com/docs/v7.0/reference/method/cursor.sort/
package order
