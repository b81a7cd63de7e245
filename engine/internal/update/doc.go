// Package update compiles MongoDB update specifications and applies them
// to documents: the operator language ($set, $unset, $inc, $mul, $min,
// $max, $rename, $currentDate, $setOnInsert, $push with its modifiers,
// $addToSet, $pop, $pull, $pullAll, $bit), the positional operators $,
// $[] and $[<identifier>] with arrayFilters, replacement documents, and
// the document an upsert inserts. Semantics and error messages follow
// mongod 7.0's update subsystem.
//
// Compile builds an immutable tree shaped like mongod's: internal nodes
// per path part, one leaf per operator field. Apply walks the tree over a
// lazily expanded mutable copy of the document (elem), so untouched
// subtrees are copied byte for byte.
//
// The package imports mongoerr, bsonkit and match, and is imported by the
// command layer only.
//
// Invariants:
//
//	I1. An *Update is never modified after Compile returns; Apply and
//	    Upsert keep all their state in a per-call applyCtx, so one Update
//	    serves concurrent callers.
//	I2. Apply never writes to its input: elems reference the input bytes
//	    and replace them, never patch them.
//	I3. Children of a node apply in lessField order (strings
//	    lexicographically, numbers numerically; mongod 5.0+), the
//	    positional child last; new fields are appended to their document
//	    in that order.
//	I4. Nothing recovers panics; every user error is a *mongoerr.Error.
package update
