// Package collation parses MongoDB collation specifications and builds
// collators from them: locale-aware string comparison with ICU's options
// (strength 1–5, caseLevel, caseFirst, numericOrdering, alternate with
// maxVariable, backwards, normalization), on golang.org/x/text/collate.
//
// It imports nothing of the engine but mongoerr; bsonkit, match, order,
// expr, agg, index and plan receive a *Collator (nil meaning the simple,
// binary collation) as an explicit argument, never through a global.
//
// Invariants:
//
//	I1. Compare(a, b) == bytes.Compare(Key(a), Key(b)) for every pair of
//	    strings: comparison is defined by the sort key, so index bounds
//	    built from keys agree with the matcher.
//	I2. Two collators with equal Spec documents compare every pair of
//	    strings alike; Equal compares the normalised specs.
//	I3. A Collator is safe for concurrent use.
//
// https://www.mongodb.com/docs/v7.0/reference/collation/
package collation
