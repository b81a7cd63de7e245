// Package keystring encodes BSON values and compound index keys as byte
// strings whose bytewise order is MongoDB's BSON comparison order, so that
// an index range is a byte range in the key-value store.
//
// AppendValue encodes one value; a compound key is the concatenation of the
// encodings of its fields, each with its own direction. DecodeValue and
// Decode turn keys back into values (for covered queries and explain).
// Successor, PrefixEnd and TypeRange build half-open bounds for the planner.
//
// This package imports only the driver's bson package and the standard
// library. It knows nothing of indexes, records or storage prefixes.
//
// # Encoding
//
// Every value starts with a one-byte tag. The tags of a canonical type
// bracket are contiguous and the brackets follow MongoDB's order: MinKey <
// undefined < null < numbers < strings (and symbols) < objects < arrays <
// binData < ObjectId < bool < date < timestamp < regex < dbPointer <
// javascript < javascriptWithScope < MaxKey. The payload after the tag:
//
//	MinKey, MaxKey, undefined, null   none
//	number                            see number.go: NaN < -Inf < negatives < 0 < positives < +Inf, exact value
//	string, symbol, javascript        bytes, 0x00 escaped as 00 FF, then 00 01
//	object                            per element: canonical-type byte, name, 00, value; then 00
//	array                             per element: value; then 00
//	binData                           uint32 length (big-endian), subtype, bytes
//	ObjectId                          12 bytes
//	bool                              none (false and true have their own tags)
//	date                              int64 millis big-endian with the sign bit flipped
//	timestamp                         uint64 (t<<32 | i) big-endian
//	regex                             pattern, 00, flags, 00
//	dbPointer                         uint32 namespace length, namespace, 12-byte ObjectId
//	javascriptWithScope               code as a string, scope as an object
//
// # Invariants
//
// I1. Prefix-free: every encoding is self-delimiting, and no encoding of a
// value is a proper prefix of the encoding of another value (in either
// direction). Hence concatenated fields compare field by field, a key
// followed by a record ID compares first by key, and PrefixEnd of whole
// fields bounds exactly the entries with those fields.
//
// I2. Order: for valid values a and b, sign(bytes.Compare(enc(a), enc(b)))
// equals the sign of MongoDB's comparison of a and b (BSONElement woCompare
// with field names, no collation). Values that compare equal encode to equal
// bytes: 1, 1.0, NumberLong(1) and NumberDecimal("1.000"); -0 and 0; every
// NaN (double or decimal); a string and a symbol with the same bytes. A unique
// index therefore rejects 1 after 1.0.
//
// I3. Direction: the descending encoding is the ascending one with every byte
// inverted. By I1 this reverses the order of a field without disturbing the
// fields around it.
//
// I4. Containers: objects and arrays end with 0x00, which is below every tag
// and canonical-type byte, so a container that is a prefix of another sorts
// first, as in MongoDB.
//
// I5. Objects compare element by element on canonical type, then field
// name, then value (MongoDB compares types before names), so each element
// carries its canonical-type byte before the name. Field names never
// contain 0x00.
//
// I6. Strings compare as unsigned bytes, shorter first: 0x00 inside a string
// becomes 00 FF and the terminator is 00 01, so the escape sorts above the
// end and no encoding prefixes another.
//
// I7. Numbers encode their exact value, whatever their BSON type, as
// sign class, decimal exponent and decimal digits (number.go): doubles are
// expanded exactly, so decimal128 0.1 < double 0.1 (which is
// 0.1000000000000000055511151231257827…).
//
// I8. The encoding is a pure function of the value: no version byte and no
// type bits. Decoding recovers values, not types (see DecodeValue); a
// change to this encoding changes every stored index and needs a new index
// format version in the catalog.
//
// Following MongoDB: https://www.mongodb.com/docs/manual/reference/bson-type-comparison-order/
package keystring
