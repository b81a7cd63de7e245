// Package match compiles MongoDB query filters into matchers and runs them
// over documents, with MongoDB 7.0's semantics under the simple collation,
// or under the collation Env.Collation names (strings in $eq, $in, $lt…,
// also inside arrays and documents, and in $expr, compare with it):
// BSON comparison order and type brackets, numbers compared by value across
// types, null matching null, undefined and missing, implicit traversal of
// arrays along dotted paths, numeric path components, and the positional
// "elemMatchKey" that update's and projection's "$" use.
//
// Operators: $eq $ne $gt $gte $lt $lte $in $nin, $and $or $nor $not,
// $exists $type, $all $elemMatch $size, $regex/$options and regex literals,
// $mod, $bitsAllSet $bitsAnySet $bitsAllClear $bitsAnyClear, $comment,
// $alwaysTrue, $alwaysFalse, and $expr (an aggregation expression compiled
// by package expr, with the command's let variables: CompileEnv; an $eq of
// a field path and a constant adds mongod's $_internalExprEq predicate for
// the planner), and $jsonSchema (compiled by package schema). $where, $text, $sampleRate and the geo
// operators answer NotImplemented (238) at compile time; they never give a
// wrong result.
//
// Regular expressions: MongoDB uses PCRE; package regex runs PCRE syntax
// (backreferences, lookaround, atomic groups and possessive quantifiers
// included) on a backtracking engine with a time limit per match. A match
// that runs past the limit does not match, as a PCRE match past mongod's
// match limit does not (regex.go).
//
// Imports: bsonkit, expr, mongoerr, regex, schema and the driver's bson packages only.
// Must not import command, storage or any package above it.
//
// Invariants:
//
//	I1. Compile never panics, whatever the bytes (fuzzed); it validates the
//	    filter and returns a *mongoerr.Error for anything MongoDB rejects.
//	I2. Match assumes a valid BSON document (the wire layer validated it).
//	I3. A *Filter is immutable after Compile and safe for concurrent use.
//	I4. Unsupported operators fail at Compile, never at Match. Only an
//	    $expr can fail while matching (a $divide by zero): MatchErr
//	    returns that error, Match and MatchPos count it as no match.
//	I5. The planner reads the compiled tree through View, never the
//	    filter document again.
//
// Reference: https://www.mongodb.com/docs/v7.0/reference/operator/query/
package match
