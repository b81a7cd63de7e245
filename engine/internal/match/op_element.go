package match

import (
	"fmt"

	"go.mongodb.org/mongo-driver/v2/bson"

	"github.com/formworkdb/formwork/engine/internal/bsonkit"
	"github.com/formworkdb/formwork/engine/internal/mongoerr"
)

// newExists compiles $exists: any operand, read by its truth value.
// https://www.mongodb.com/docs/v7.0/reference/operator/query/exists/
func newExists(name string, v bson.RawValue) node {
	exists := newLeaf(name, KindExists, "$exists", v, func(v bson.RawValue) bool { return v.Type != bsonkit.TypeMissing })
	if truthy(v) {
		return exists
	}
	return &notNode{child: exists, path: name}
}

// truthy is mongod's BSONElement::trueValue.
func truthy(v bson.RawValue) bool {
	switch v.Type {
	case bsonkit.TypeMissing, bson.TypeNull, bson.TypeUndefined:
		return false
	case bson.TypeBoolean:
		return v.Boolean()
	case bson.TypeInt32:
		return v.Int32() != 0
	case bson.TypeInt64:
		return v.Int64() != 0
	case bson.TypeDouble:
		return v.Double() != 0
	case bson.TypeDecimal128:
		return !v.Decimal128().IsZero()
	}
	return true
}

// typeSet is the operand of $type.
type typeSet struct {
	types      map[bson.Type]bool
	allNumbers bool
}

func (s *typeSet) has(t bson.Type) bool {
	if s.allNumbers && bsonkit.IsNumber(t) {
		return true
	}
	return s.types[t]
}

// newType compiles $type with a type number, alias, "number", or an array
// of those.
// https://www.mongodb.com/docs/v7.0/reference/operator/query/type/
func newType(name string, v bson.RawValue) (node, error) {
	s, err := parseTypeSet(v)
	if err != nil {
		return nil, err
	}
	return newLeaf(name, KindType, "$type", v, func(v bson.RawValue) bool { return s.has(v.Type) }), nil
}

func parseTypeSet(v bson.RawValue) (*typeSet, error) {
	s := &typeSet{types: map[bson.Type]bool{}}
	if v.Type == bson.TypeArray {
		var err error
		bsonkit.ForEach(v.Value, func(_ string, e bson.RawValue) bool {
			err = s.add(e)
			return err == nil
		})
		if err != nil {
			return nil, err
		}
		if len(s.types) == 0 && !s.allNumbers {
			return nil, mongoerr.New(mongoerr.FailedToParse, "$type must match at least one type")
		}
		return s, nil
	}
	if err := s.add(v); err != nil {
		return nil, err
	}
	return s, nil
}

func (s *typeSet) add(v bson.RawValue) error {
	if v.Type == bson.TypeString {
		alias := v.StringValue()
		if alias == "number" {
			s.allNumbers = true
			return nil
		}
		t, ok := bsonkit.TypeByName(alias)
		if !ok {
			return badValue("Unknown type name alias: %s", alias)
		}
		s.types[t] = true
		return nil
	}
	if !bsonkit.IsNumber(v.Type) {
		return mongoerr.New(mongoerr.TypeMismatch, "type must be represented as a number or a string")
	}
	code, ok := bsonkit.ExactInt64(v)
	if !ok || !bsonkit.ValidType(code) {
		f, _ := bsonkit.Float64(v)
		return badValue("Invalid numerical type code: %s", formatNumber(f))
	}
	if code == -1 {
		s.types[bson.TypeMinKey] = true
	} else {
		s.types[bson.Type(code)] = true
	}
	return nil
}

func formatNumber(f float64) string { return fmt.Sprintf("%g", f) }
