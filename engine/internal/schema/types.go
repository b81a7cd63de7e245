package schema

import (
	"sort"

	"go.mongodb.org/mongo-driver/v2/bson"

	"github.com/formworkdb/formwork/engine/internal/bsonkit"
	"github.com/formworkdb/formwork/engine/internal/mongoerr"
)

// typeRule is the type or bsonType keyword: a set of BSON types, with
// "number" standing for all four numeric types.
type typeRule struct {
	kw         string
	arg        bson.RawValue
	types      map[bson.Type]bool
	allNumbers bool
	// set holds types (and, with allNumbers, the numeric types) by type
	// byte, for a lookup without hashing.
	set [256]bool
}

func (t *typeRule) has(bt bson.Type) bool { return t.set[byte(bt)] }

func (t *typeRule) match(v value) bool { return v.present && t.has(v.v.Type) }

func (t *typeRule) explain(v value) []any {
	if !v.present {
		return nil // required reports a missing property
	}
	return []any{bson.D{
		{Key: "operatorName", Value: t.kw},
		{Key: "specifiedAs", Value: bson.D{{Key: t.kw, Value: t.arg}}},
		{Key: "reason", Value: "type did not match"},
		{Key: "consideredValue", Value: v.v},
		{Key: "consideredType", Value: typeName(v.v.Type)},
	}}
}

// jsonTypeAlias maps the JSON Schema type names to BSON types.
func jsonTypeAlias(name string) (bson.Type, bool) {
	switch name {
	case "array":
		return bson.TypeArray, true
	case "boolean":
		return bson.TypeBoolean, true
	case "null":
		return bson.TypeNull, true
	case "object":
		return bson.TypeEmbeddedDocument, true
	case "string":
		return bson.TypeString, true
	}
	return 0, false
}

// bsonTypeAlias maps $type's aliases to BSON types.
func bsonTypeAlias(name string) (bson.Type, bool) { return bsonkit.TypeByName(name) }

// parseType parses the operand of type or bsonType as mongod's
// JSONSchemaParser::parseTypeSet does: a string or an array of distinct
// strings, "integer" refused, unknown aliases BadValue.
func parseType(kw string, v bson.RawValue, alias func(string) (bson.Type, bool)) (*typeRule, error) {
	var names []string
	switch v.Type {
	case bson.TypeString:
		if v.StringValue() == "integer" {
			return nil, failed("$jsonSchema type 'integer' is not currently supported.")
		}
		names = []string{v.StringValue()}
	case bson.TypeArray:
		seen := map[string]bool{}
		var err error
		bsonkit.ForEach(v.Value, func(_ string, e bson.RawValue) bool {
			if e.Type != bson.TypeString {
				err = mismatch("$jsonSchema keyword '%s' array elements must be strings", kw)
				return false
			}
			s := e.StringValue()
			if s == "integer" {
				err = failed("$jsonSchema type 'integer' is not currently supported.")
				return false
			}
			if seen[s] {
				err = failed("$jsonSchema keyword '%s' has duplicate value: %s", kw, s)
				return false
			}
			seen[s] = true
			names = append(names, s)
			return true
		})
		if err != nil {
			return nil, err
		}
	default:
		return nil, mismatch("$jsonSchema keyword '%s' must be either a string or an array of strings", kw)
	}
	// mongod holds the aliases in a sorted set: the first unknown one in
	// that order is reported.
	sort.Strings(names)
	t := &typeRule{kw: kw, arg: v, types: map[bson.Type]bool{}}
	for _, n := range names {
		if n == "number" {
			t.allNumbers = true
			continue
		}
		bt, ok := alias(n)
		if !ok {
			if n == "missing" {
				return nil, mongoerr.New(mongoerr.BadValue, "'missing' is not a legal type name. To query for non-existence of a field, use {$exists:false}.")
			}
			return nil, mongoerr.Newf(mongoerr.BadValue, "Unknown type name alias: %s", n)
		}
		t.types[bt] = true
	}
	if len(t.types) == 0 && !t.allNumbers {
		return nil, failed("$jsonSchema keyword '%s' must name at least one type", kw)
	}
	for bt := range t.types {
		t.set[byte(bt)] = true
	}
	if t.allNumbers {
		for _, bt := range []bson.Type{bson.TypeInt32, bson.TypeInt64, bson.TypeDouble, bson.TypeDecimal128} {
			t.set[byte(bt)] = true
		}
	}
	return t, nil
}
