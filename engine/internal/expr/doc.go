// Package expr compiles MongoDB aggregation expressions into trees and
// evaluates them against documents: field paths ("$a.b"), variables
// ("$$ROOT", "$$NOW", let variables), literals, object and array
// expressions, and the operator families ($add, $cond, $concat, $map,
// $dateToString, …), with MongoDB 7.0's semantics and error codes.
//
// Parse turns a BSON value into an Expr once; Eval runs it many times. A
// Scope names the variables an expression may use and gives each a slot, so
// evaluation reads variables by index and never by name. Each operator
// family lives in its own op_<family>.go file and registers its parsers in
// an init function.
//
// Imports: bsonkit, mongoerr and the driver's bson packages only. Must not
// import match, agg, plan, storage, command or anything above them.
//
// Invariants:
//
//	I1. Parse never panics, whatever the value (fuzzed); it returns a
//	    *mongoerr.Error with MongoDB's code for anything MongoDB rejects at
//	    parse time. Nesting deeper than MaxDepth fails with Overflow.
//	I2. An Expr is immutable after Parse and safe for concurrent use; all
//	    per-evaluation state lives in the *Ctx, which is not.
//	I3. Eval returns a value whose Type is 0 for "missing" (a path that
//	    does not exist, $$REMOVE); callers decide whether missing becomes
//	    null (array elements) or disappears (object fields).
//	I4. Values returned by Eval may alias the evaluated document or the
//	    expression's constants; a caller that keeps a value past the
//	    document's lifetime copies it.
//	I5. Evaluation is bounded: every loop runs over a value's elements or a
//	    range whose size is checked, and results over the 16 MiB BSON limit
//	    fail with MongoDB's error rather than growing without end.
//	I6. Like mongod's optimizer, Parse folds an operator whose operands are
//	    all constants into a constant, and picks the branch of a $cond or
//	    $switch whose condition is constant; so an error in a constant
//	    sub-expression ({$divide: [1, 0]}) fails the parse even where
//	    evaluation would not reach it.
//
// Reference: https://www.mongodb.com/docs/v7.0/reference/operator/aggregation/
package expr
