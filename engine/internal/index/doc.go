// Package index owns index definitions and index key generation: it parses
// and validates createIndexes specs as mongod 7.0 does (ParseSpec), compiles
// them (Compile) and turns documents into encoded keys (Index.Keys):
// compound, multikey, sparse, partial, unique, wildcard and TTL indexes.
// It also builds DuplicateKey errors (Index.DuplicateKeyError).
//
// index imports keystring, mongoerr and the driver's bson packages. It must
// not import storage, plan, command or match: partial filter expressions are
// parsed and evaluated here (partial.go), since mongod allows only a small
// operator subset in them.
//
// # Storage layout
//
// A key returned by Keys is the concatenation of keystring encodings, one
// per column (Columns): one per key pattern field, two for a wildcard field
// (the dotted path as a string, then the value). The storage layer stores:
//
//	unique index:     prefix + key            → record ID
//	non-unique index: prefix + key + recordID → (empty)
//
// where prefix identifies the index and has a fixed length (or is itself
// self-delimiting), and the record ID is fixed-length or order-preserving.
// An equality or range scan on leading fields is the byte range
// [prefix+lo, prefix+hi) built with keystring.AppendValue, PrefixEnd and
// TypeRange. Multikey metadata (Keys' second result) is recorded in the
// catalog; a wildcard index's multikey paths may be stored as entries of
// the index under a reserved MinKey path, as mongod does.
//
// # Invariants
//
// I1. Keys returns keys sorted by bytes.Compare and without duplicates: a
// document indexes each distinct key once (multikey dedup). Values that
// MongoDB compares equal (1, 1.0, NumberLong(1)) give one key.
//
// I2. Every key of one index has the same number of columns, each a
// complete keystring encoding (keystring I1), so a key plus a record ID
// sorts first by key and unique-index conflicts are bytes.Equal on keys.
//
// I3. A missing field yields null and an empty array yields undefined, as
// mongod indexes them; sparse indexes drop a key only when all of its
// fields are missing; a partial index yields no keys for a document its
// filter rejects (Index.Matches).
//
// I4. Arrays are expanded jointly across fields: fields that go through the
// same array take their values from the same element, and two fields that
// reach different arrays fail with CannotIndexParallelArrays (171). Arrays
// nested directly in an expanded array are key values, not expanded again.
//
// I5. Spec values never alias the request document; Index is immutable and
// safe for concurrent use.
//
// Following mongod: https://www.mongodb.com/docs/manual/indexes/
package index
