// Package bsonkit holds the document helpers the query packages share, over
// the official driver's bson.Raw, bson.RawValue and bsoncore: MongoDB's
// total order of BSON values (Compare, CanonicalType), numeric helpers that
// compare int32, int64, double and decimal128 by value, element iteration
// without copying, and dotted-path walks with MongoDB's array traversal.
//
// It imports only the driver's bson packages and the standard library; every
// engine package may import it.
//
// Invariants:
//
//	I1. Every function that takes a bson.Raw or bson.RawValue assumes valid
//	    BSON (the wire layer validates documents before they reach the
//	    engine). Invalid input may panic; callers that face untrusted bytes
//	    call Validate first.
//	I2. Compare is a total order consistent with mongod's woCompare under the
//	    simple collation: Compare(a, b) == -Compare(b, a), and values that
//	    compare 0 are interchangeable for sorting, equality and grouping.
//	I3. Nothing here retains its arguments: returned RawValues alias the
//	    caller's buffers and stay valid as long as those buffers do.
package bsonkit
