package bsonkit

import "go.mongodb.org/mongo-driver/v2/bson"

// TypeMissing is the Type of a zero bson.RawValue. Path walks report a
// field that does not exist with this type; it sorts with undefined, below
// null, as mongod's EOO does.
const TypeMissing bson.Type = 0

// CanonicalType returns the rank of t's comparison bracket, with mongod's
// numbering: MinKey -1, missing and undefined 0, null 5, numbers 10,
// string and symbol 15, object 20, array 25, binData 30, ObjectId 35,
// bool 40, date 45, timestamp 47, regex 50, DBPointer 55, JavaScript 60,
// JavaScript with scope 65, MaxKey 127. Values of different brackets order
// by rank; values of one bracket compare by value. A type byte that is not
// BSON gets 128, above everything.
func CanonicalType(t bson.Type) int {
	switch t {
	case bson.TypeMinKey:
		return -1
	case TypeMissing, bson.TypeUndefined:
		return 0
	case bson.TypeNull:
		return 5
	case bson.TypeDouble, bson.TypeInt32, bson.TypeInt64, bson.TypeDecimal128:
		return 10
	case bson.TypeString, bson.TypeSymbol:
		return 15
	case bson.TypeEmbeddedDocument:
		return 20
	case bson.TypeArray:
		return 25
	case bson.TypeBinary:
		return 30
	case bson.TypeObjectID:
		return 35
	case bson.TypeBoolean:
		return 40
	case bson.TypeDateTime:
		return 45
	case bson.TypeTimestamp:
		return 47
	case bson.TypeRegex:
		return 50
	case bson.TypeDBPointer:
		return 55
	case bson.TypeJavaScript:
		return 60
	case bson.TypeCodeWithScope:
		return 65
	case bson.TypeMaxKey:
		return 127
	}
	return 128
}

// IsNumber reports whether t is one of the four numeric types.
func IsNumber(t bson.Type) bool {
	switch t {
	case bson.TypeDouble, bson.TypeInt32, bson.TypeInt64, bson.TypeDecimal128:
		return true
	}
	return false
}

// IsNullish reports whether v is null, undefined or missing: the values an
// equality to null matches in MongoDB 7.0.
func IsNullish(v bson.RawValue) bool {
	return v.Type == TypeMissing || v.Type == bson.TypeNull || v.Type == bson.TypeUndefined
}

var typeNames = map[bson.Type]string{
	bson.TypeDouble:           "double",
	bson.TypeString:           "string",
	bson.TypeEmbeddedDocument: "object",
	bson.TypeArray:            "array",
	bson.TypeBinary:           "binData",
	bson.TypeUndefined:        "undefined",
	bson.TypeObjectID:         "objectId",
	bson.TypeBoolean:          "bool",
	bson.TypeDateTime:         "date",
	bson.TypeNull:             "null",
	bson.TypeRegex:            "regex",
	bson.TypeDBPointer:        "dbPointer",
	bson.TypeJavaScript:       "javascript",
	bson.TypeSymbol:           "symbol",
	bson.TypeCodeWithScope:    "javascriptWithScope",
	bson.TypeInt32:            "int",
	bson.TypeTimestamp:        "timestamp",
	bson.TypeInt64:            "long",
	bson.TypeDecimal128:       "decimal",
	bson.TypeMinKey:           "minKey",
	bson.TypeMaxKey:           "maxKey",
}

// TypeName returns MongoDB's alias for t as $type and error messages spell
// it ("double", "objectId", "missing" for TypeMissing).
func TypeName(t bson.Type) string {
	if t == TypeMissing {
		return "missing"
	}
	if n, ok := typeNames[t]; ok {
		return n
	}
	return "unknown"
}

// TypeByName returns the type whose $type alias is name. The alias
// "number", which stands for four types, is not handled here.
func TypeByName(name string) (bson.Type, bool) {
	for t, n := range typeNames {
		if n == name {
			return t, true
		}
	}
	return 0, false
}

// ValidType reports whether code is a type number $type accepts: the
// BSON types 1 to 19, -1 (MinKey) and 127 (MaxKey).
func ValidType(code int64) bool {
	return (code >= 1 && code <= 19) || code == -1 || code == 127
}
