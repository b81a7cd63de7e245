package plan

import (
	"go.mongodb.org/mongo-driver/v2/bson"

	"github.com/formworkdb/formwork/engine/internal/bsonkit"
)

// implies reports whether every document matching the conjuncts q also
// matches the partial filter f (mongod's expression::isSubsetOf, for the
// operators a partialFilterExpression may hold).
func implies(q []*expr, f *expr) bool {
	switch f.kind {
	case kAnd:
		for _, c := range f.children {
			if !implies(q, c) {
				return false
			}
		}
		return true
	case kOr:
		for _, c := range f.children {
			if implies(q, c) {
				return true
			}
		}
		// Or an $or of q whose every branch implies f as a whole.
		for _, c := range q {
			if c.group != 0 || c.kind != kOr || len(c.children) == 0 {
				continue
			}
			all := true
			for _, b := range c.children {
				if !implies(b.conjuncts(), f) {
					all = false
					break
				}
			}
			if all {
				return true
			}
		}
		return false
	}
	for _, c := range q {
		if c.group != 0 {
			continue
		}
		if c.kind == kOr {
			all := len(c.children) > 0
			for _, b := range c.children {
				if !implies(b.conjuncts(), f) {
					all = false
					break
				}
			}
			if all {
				return true
			}
			continue
		}
		if c.path == f.path && leafImplies(c, f) {
			return true
		}
	}
	return false
}

func sameBracket(a, b bson.RawValue) bool {
	return bsonkit.CanonicalType(a.Type) == bsonkit.CanonicalType(b.Type)
}

// leafImplies reports whether predicate q implies predicate f on one path.
func leafImplies(q, f *expr) bool {
	switch q.kind {
	case kIn:
		if len(q.regexes) > 0 || len(q.vals) == 0 {
			return false
		}
		for _, v := range q.vals {
			if !leafImplies(&expr{kind: kEq, path: q.path, val: v}, f) {
				return false
			}
		}
		return true
	case kEq:
		v := q.val
		if v.Type == bson.TypeArray {
			return false
		}
		switch f.kind {
		case kEq:
			return bsonkit.Compare(v, f.val) == 0 && v.Type != bson.TypeNull || (v.Type == bson.TypeNull && f.val.Type == bson.TypeNull)
		case kExists:
			return v.Type != bson.TypeNull && v.Type != bson.TypeUndefined
		case kIn:
			for _, w := range f.vals {
				if bsonkit.Compare(v, w) == 0 {
					return true
				}
			}
			return false
		case kType:
			return typeMatches(v, f.types)
		case kLt, kLte, kGt, kGte:
			if !sameBracket(v, f.val) || v.Type == bson.TypeNull {
				return false
			}
			c := bsonkit.Compare(v, f.val)
			switch f.kind {
			case kLt:
				return c < 0
			case kLte:
				return c <= 0
			case kGt:
				return c > 0
			default:
				return c >= 0
			}
		}
	case kLt, kLte, kGt, kGte:
		if q.val.Type == bson.TypeNull || q.val.Type == bson.TypeUndefined {
			return false
		}
		switch f.kind {
		case kExists:
			return true
		case kType:
			if bsonkit.IsNumber(q.val.Type) {
				return typeMatches(doubleVal(0), f.types) && typeMatches(bson.RawValue{Type: bson.TypeInt32, Value: []byte{0, 0, 0, 0}}, f.types) &&
					typeMatches(bson.RawValue{Type: bson.TypeInt64, Value: make([]byte, 8)}, f.types) && typeMatches(bson.RawValue{Type: bson.TypeDecimal128, Value: make([]byte, 16)}, f.types)
			}
			return q.val.Type != bson.TypeString && typeMatches(q.val, f.types)
		case kLt, kLte, kGt, kGte:
			if !sameBracket(q.val, f.val) {
				return false
			}
			qUpper := q.kind == kLt || q.kind == kLte
			fUpper := f.kind == kLt || f.kind == kLte
			if qUpper != fUpper {
				return false
			}
			c := bsonkit.Compare(q.val, f.val)
			if qUpper {
				// q: x < a (or <=); f: x < b (or <=).
				if c < 0 {
					return true
				}
				return c == 0 && (q.kind == kLt || f.kind == kLte)
			}
			if c > 0 {
				return true
			}
			return c == 0 && (q.kind == kGt || f.kind == kGte)
		}
	case kExists:
		return f.kind == kExists
	case kType:
		if f.kind == kType && len(q.types) == 1 && len(f.types) == 1 {
			return q.types[0].Equal(f.types[0])
		}
		return false
	}
	return false
}

// typeMatches reports whether v's type is among the $type arguments.
func typeMatches(v bson.RawValue, types []bson.RawValue) bool {
	for _, t := range types {
		if s, ok := t.StringValueOK(); ok {
			if s == "number" && bsonkit.IsNumber(v.Type) {
				return true
			}
			if bt, ok := bsonkit.TypeByName(s); ok && bt == v.Type {
				return true
			}
			continue
		}
		if n, ok := bsonkit.Float64(t); ok && bson.Type(int(n)) == v.Type {
			return true
		}
	}
	return false
}
