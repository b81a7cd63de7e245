// Package jsonschema derives a MongoDB $jsonSchema document from a Go
// struct type, reading its bson tags the way the driver's encoder does:
// the shape the driver writes is the shape the schema accepts. The
// polymorphic and versioning packages build their validators with it.
//
// Types map to bsonType as the driver marshals them: string "string";
// bool "bool"; int8, int16, int32, uint8 and uint16 "int"; int, int64,
// uint, uint32 and uint64 ["int", "long"] (the driver writes a Go int as
// int32 when it fits, and MinSize does the same for the others); float32
// and float64
// "double"; time.Time and bson.DateTime "date"; bson.ObjectID "objectId";
// bson.Decimal128 "decimal"; bson.Binary and []byte "binData"; slices and
// arrays "array" with items; structs "object" with properties; maps,
// bson.D, bson.M and bson.Raw "object"; interfaces accept anything.
// Pointers, slices, maps and interfaces also accept null, which is how the
// driver writes their nil value. A field is required unless it is tagged
// omitempty or omitzero, or is a pointer, slice, map or interface.
package jsonschema

import (
	"fmt"
	"reflect"
	"strings"
	"time"

	"go.mongodb.org/mongo-driver/v2/bson"
)

// maxDepth bounds the nesting followed into struct fields; deeper
// structs are accepted as any "object". It also stops recursive types.
const maxDepth = 8

var (
	timeType    = reflect.TypeFor[time.Time]()
	dateType    = reflect.TypeFor[bson.DateTime]()
	oidType     = reflect.TypeFor[bson.ObjectID]()
	decType     = reflect.TypeFor[bson.Decimal128]()
	binType     = reflect.TypeFor[bson.Binary]()
	dType       = reflect.TypeFor[bson.D]()
	mType       = reflect.TypeFor[bson.M]()
	rawType     = reflect.TypeFor[bson.Raw]()
	rawValType  = reflect.TypeFor[bson.RawValue]()
	bytesType   = reflect.TypeFor[[]byte]()
	regexType   = reflect.TypeFor[bson.Regex]()
	tsType      = reflect.TypeFor[bson.Timestamp]()
	nullValType = reflect.TypeFor[bson.Null]()
)

// Object returns the properties and required fields of struct type t (or
// a pointer to one) as a schema document {bsonType: "object", required,
// properties}. skip names top-level fields left out of both (the
// discriminator or version field the caller constrains itself). It fails
// for a type that is not a struct.
func Object(t reflect.Type, skip ...string) (bson.D, error) {
	for t != nil && t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	if t == nil || t.Kind() != reflect.Struct {
		return nil, fmt.Errorf("jsonschema: %v is not a struct type", t)
	}
	if special(t) != nil {
		return nil, fmt.Errorf("jsonschema: %v is a BSON value type, not a document struct", t)
	}
	return object(t, 0, skip), nil
}

// Fields returns the top-level bson field names of struct type t, in
// declaration order, inline structs flattened.
func Fields(t reflect.Type) []string {
	for t != nil && t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	if t == nil || t.Kind() != reflect.Struct {
		return nil
	}
	var out []string
	for _, f := range fields(t, 0) {
		out = append(out, f.name)
	}
	return out
}

// field is one encoded struct field.
type field struct {
	name     string
	t        reflect.Type
	optional bool
}

// fields lists t's encoded fields, following inline structs.
func fields(t reflect.Type, depth int) []field {
	var out []field
	if depth > maxDepth {
		return nil
	}
	for i := range t.NumField() {
		sf := t.Field(i)
		if !sf.IsExported() {
			continue
		}
		tag, ok := sf.Tag.Lookup("bson")
		if tag == "-" {
			continue
		}
		parts := strings.Split(tag, ",")
		name := parts[0]
		if !ok || name == "" {
			name = strings.ToLower(sf.Name)
		}
		var optional, inline bool
		for _, p := range parts[1:] {
			switch p {
			case "omitempty", "omitzero":
				optional = true
			case "inline":
				inline = true
			}
		}
		ft := sf.Type
		if inline && (ft.Kind() == reflect.Struct || (ft.Kind() == reflect.Pointer && ft.Elem().Kind() == reflect.Struct)) {
			if ft.Kind() == reflect.Pointer {
				ft = ft.Elem()
			}
			out = append(out, fields(ft, depth+1)...)
			continue
		}
		if inline { // an inline map: any other fields are allowed
			continue
		}
		out = append(out, field{name: name, t: ft, optional: optional})
	}
	return out
}

// object is the schema of struct t.
func object(t reflect.Type, depth int, skip []string) bson.D {
	required := bson.A{}
	props := bson.D{}
	for _, f := range fields(t, depth) {
		if contains(skip, f.name) {
			continue
		}
		s, nullable := value(f.t, depth+1)
		props = append(props, bson.E{Key: f.name, Value: s})
		if !f.optional && !nullable {
			required = append(required, f.name)
		}
	}
	out := bson.D{{Key: "bsonType", Value: "object"}}
	if len(required) > 0 {
		out = append(out, bson.E{Key: "required", Value: required})
	}
	if len(props) > 0 {
		out = append(out, bson.E{Key: "properties", Value: props})
	}
	return out
}

// contains reports whether names holds n.
func contains(names []string, n string) bool {
	for _, s := range names {
		if s == n {
			return true
		}
	}
	return false
}

// special returns the bsonType of a BSON value type, nil for others.
func special(t reflect.Type) any {
	switch t {
	case timeType, dateType:
		return "date"
	case oidType:
		return "objectId"
	case decType:
		return "decimal"
	case binType, bytesType:
		return "binData"
	case dType, mType, rawType:
		return "object"
	case regexType:
		return "regex"
	case tsType:
		return "timestamp"
	case nullValType:
		return "null"
	}
	return nil
}

// value is the schema of a field of type t and whether its nil value is
// written as null.
func value(t reflect.Type, depth int) (bson.D, bool) {
	if t == rawValType {
		return bson.D{}, true
	}
	if bt := special(t); bt != nil {
		if t == dType || t == mType || t == rawType {
			return bson.D{{Key: "bsonType", Value: bson.A{"object", "null"}}}, true
		}
		if t == bytesType {
			return bson.D{{Key: "bsonType", Value: bson.A{"binData", "null"}}}, true
		}
		return bson.D{{Key: "bsonType", Value: bt}}, false
	}
	switch t.Kind() {
	case reflect.Pointer:
		s, _ := value(t.Elem(), depth)
		return withNull(s), true
	case reflect.Interface:
		return bson.D{}, true
	case reflect.String:
		return bson.D{{Key: "bsonType", Value: "string"}}, false
	case reflect.Bool:
		return bson.D{{Key: "bsonType", Value: "bool"}}, false
	case reflect.Int8, reflect.Int16, reflect.Int32, reflect.Uint8, reflect.Uint16:
		return bson.D{{Key: "bsonType", Value: "int"}}, false
	case reflect.Int, reflect.Int64, reflect.Uint, reflect.Uint32, reflect.Uint64:
		return bson.D{{Key: "bsonType", Value: bson.A{"int", "long"}}}, false
	case reflect.Float32, reflect.Float64:
		return bson.D{{Key: "bsonType", Value: "double"}}, false
	case reflect.Slice, reflect.Array:
		items, _ := value(t.Elem(), depth)
		s := bson.D{{Key: "bsonType", Value: bson.A{"array", "null"}}}
		if t.Kind() == reflect.Array {
			s = bson.D{{Key: "bsonType", Value: "array"}}
		}
		if len(items) > 0 {
			s = append(s, bson.E{Key: "items", Value: items})
		}
		return s, t.Kind() == reflect.Slice
	case reflect.Map:
		return bson.D{{Key: "bsonType", Value: bson.A{"object", "null"}}}, true
	case reflect.Struct:
		if depth > maxDepth {
			return bson.D{{Key: "bsonType", Value: "object"}}, false
		}
		return object(t, depth, nil), false
	}
	return bson.D{}, false
}

// withNull widens schema s to accept null too.
func withNull(s bson.D) bson.D {
	out := make(bson.D, 0, len(s))
	for _, e := range s {
		if e.Key == "bsonType" {
			switch v := e.Value.(type) {
			case string:
				e.Value = bson.A{v, "null"}
			case bson.A:
				if !contains(toStrings(v), "null") {
					e.Value = append(append(bson.A{}, v...), "null")
				}
			}
		}
		out = append(out, e)
	}
	if len(out) == 0 {
		return out // anything, null included
	}
	return out
}

// toStrings returns the strings in a.
func toStrings(a bson.A) []string {
	var out []string
	for _, v := range a {
		if s, ok := v.(string); ok {
			out = append(out, s)
		}
	}
	return out
}
