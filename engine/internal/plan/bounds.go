package plan

import (
	"math"
	"strings"

	"go.mongodb.org/mongo-driver/v2/bson"

	"github.com/formworkdb/formwork/engine/internal/bsonkit"
)

// tightness says how well a predicate's bounds describe it (mongod's
// IndexBoundsBuilder::BoundsTightness).
type tightness int

const (
	// inexactFetch bounds hold a superset; the document must be checked.
	inexactFetch tightness = iota
	// inexactCovered bounds hold a superset that the index key can refine.
	inexactCovered
	// exact bounds hold exactly the matching keys.
	exact
)

// indexable reports whether a predicate of this shape can bound an index
// field.
func indexable(e *expr) bool {
	switch e.kind {
	case kEq, kLt, kLte, kGt, kGte, kIn, kExists, kType, kElemVal:
		return true
	case kRegex:
		return e.val.Type == bson.TypeRegex
	case kNot:
		c := e.children[0]
		switch c.kind {
		case kEq:
			// $ne of an array or a regex cannot be expressed as bounds.
			return c.val.Type != bson.TypeArray && c.val.Type != bson.TypeRegex && c.val.Type != bson.TypeEmbeddedDocument
		case kIn:
			if len(c.regexes) > 0 {
				return false
			}
			for _, v := range c.vals {
				if v.Type == bson.TypeArray || v.Type == bson.TypeEmbeddedDocument {
					return false
				}
			}
			return true
		case kExists:
			return true
		}
	}
	return false
}

// exactComparable reports whether a comparison with v gives exact bounds
// (mongod's Indexability::isExactBoundsGenerating).
func exactComparable(v bson.RawValue) bool {
	switch v.Type {
	case bson.TypeNull, bson.TypeUndefined, bson.TypeArray, bson.TypeEmbeddedDocument, bson.TypeRegex:
		return false
	}
	return true
}

func isNaN(v bson.RawValue) bool {
	if !bsonkit.IsNumber(v.Type) {
		return false
	}
	return bsonkit.IsNaN(v)
}

// translate returns the bounds of predicate e on one index field, and
// their tightness. multikey says whether the field's path is multikey;
// sparse and compound describe the index.
func translate(e *expr, multikey, sparse, compound bool) (oil, tightness) {
	switch e.kind {
	case kEq:
		return eqBounds(e.val)
	case kIn:
		var all oil
		t := exact
		for _, v := range e.vals {
			o, vt := eqBounds(v)
			all = append(all, o...)
			if vt < t {
				t = vt
			}
		}
		for _, r := range e.regexes {
			o, rt := regexBounds(r)
			all = append(all, o...)
			if rt < t {
				t = rt
			}
		}
		return unionize(all), t
	case kLt, kLte, kGt, kGte:
		return rangeBounds(e.kind, e.val)
	case kRegex:
		return regexBounds(e.val)
	case kExists:
		if sparse && !compound {
			return oil{allValues}, exact
		}
		return oil{allValues}, inexactFetch
	case kType:
		return typeOpBounds(e)
	case kElemVal:
		acc := oil{allValues}
		for _, c := range e.children {
			if !indexable(c) || c.kind == kElemVal {
				continue
			}
			o, _ := translate(c, false, sparse, compound)
			acc = intersect(acc, o)
		}
		return acc, inexactFetch
	case kNot:
		c := e.children[0]
		if c.kind == kExists {
			return oil{point(nullVal)}, inexactFetch
		}
		o, t := translate(c, multikey, sparse, compound)
		out := complement(o)
		if c.kind == kEq && c.val.Type == bson.TypeNull {
			t = exact
		}
		if c.kind == kIn {
			for _, v := range c.vals {
				if v.Type == bson.TypeNull {
					t = exact
				}
			}
		}
		if multikey {
			t = inexactFetch
		}
		// An empty array indexes as undefined yet matches $ne: null (and
		// any negation whose operand bounds hold undefined): keep
		// undefined in the bounds and check the document.
		if containsPoint(o, undefVal) {
			out = unionize(append(out, point(undefVal)))
			t = inexactFetch
		}
		// A dotted path through an array of scalars indexes as null, even
		// for a one-element array that does not make the index multikey,
		// yet the document does not match null equality there: keep null
		// in the bounds of a negated null and check the document.
		if strings.Contains(c.path, ".") && containsPoint(o, nullVal) {
			out = unionize(append(out, point(nullVal)))
			t = inexactFetch
		}
		return out, t
	}
	return oil{allValues}, inexactFetch
}

func eqBounds(v bson.RawValue) (oil, tightness) {
	switch v.Type {
	case bson.TypeNull:
		return oil{point(undefVal), point(nullVal)}, inexactFetch
	case bson.TypeArray:
		o := oil{point(v)}
		vals := bsonkit.Values(v.Value)
		if len(vals) == 0 {
			o = append(o, point(undefVal))
		} else {
			o = append(o, point(vals[0]))
		}
		return unionize(o), inexactFetch
	case bson.TypeUndefined:
		return oil{point(undefVal)}, inexactFetch
	}
	return oil{point(v)}, exact
}

func rangeBounds(k kind, v bson.RawValue) (oil, tightness) {
	switch {
	case v.Type == bson.TypeMaxKey && (k == kLt || k == kLte),
		v.Type == bson.TypeMinKey && (k == kGt || k == kGte):
		// A whole array is less than MaxKey and greater than MinKey even
		// when an element is MaxKey or MinKey ({a: [MaxKey]} matches $lt
		// MaxKey), and the index holds only the elements; and a dotted
		// path through an empty array has an index key (null) but no value
		// the filter compares ({a: []} does not match {"a.x": {$gte:
		// MinKey}}). So scan everything and let the filter decide, which
		// also keeps COUNT_SCAN and DISTINCT_SCAN away from these bounds.
		return oil{allValues}, inexactFetch
	case v.Type == bson.TypeMaxKey:
		if k == kGte {
			return oil{point(maxKey)}, exact
		}
		return oil{}, exact
	case v.Type == bson.TypeMinKey:
		if k == kLte {
			return oil{point(minKey)}, exact
		}
		return oil{}, exact
	case isNaN(v):
		if k == kLte || k == kGte {
			return oil{point(doubleVal(math.NaN()))}, exact
		}
		return oil{}, exact
	case v.Type == bson.TypeArray:
		// A comparison with an array compares whole arrays, which the
		// index holds only when nested: scan everything and check.
		return oil{allValues}, inexactFetch
	case v.Type == bson.TypeNull || v.Type == bson.TypeUndefined:
		if k == kLte || k == kGte {
			return eqBounds(nullVal)
		}
		return oil{}, exact
	}
	lo, hi, loInc, hiInc := typeBounds(v.Type)
	t := exact
	if !exactComparable(v) {
		t = inexactFetch
	}
	var iv interval
	switch k {
	case kLt, kLte:
		iv = interval{lo: lo, loInc: loInc, hi: v, hiInc: k == kLte}
	default:
		iv = interval{lo: v, loInc: k == kGte, hi: hi, hiInc: hiInc}
	}
	if iv.isEmpty() {
		return oil{}, t
	}
	return oil{iv}, t
}

// numberTypeInterval is the bracket of every number, NaN (which sorts
// first) through +Infinity, as mongod's appendMinForType bounds $type.
var numberTypeInterval = interval{lo: doubleVal(math.NaN()), hi: doubleVal(math.Inf(1)), loInc: true, hiInc: true}

func typeOpBounds(e *expr) (oil, tightness) {
	var o oil
	numbersOnly := len(e.types) == 1
	for _, t := range e.types {
		var bt bson.Type
		if s, ok := t.StringValueOK(); ok {
			if s == "number" {
				o = append(o, numberTypeInterval)
				continue
			}
			numbersOnly = false
			b, ok := bsonkit.TypeByName(s)
			if !ok {
				continue
			}
			bt = b
		} else {
			numbersOnly = false
			n, _ := bsonkit.Float64(t)
			bt = bson.Type(int(n))
			if n == -1 {
				bt = bson.TypeMinKey
			}
		}
		switch bt {
		case bson.TypeArray:
			return oil{allValues}, inexactFetch
		case bson.TypeNull:
			o = append(o, point(nullVal))
		case bson.TypeUndefined:
			o = append(o, point(undefVal))
		case bson.TypeMinKey:
			o = append(o, point(minKey))
		case bson.TypeMaxKey:
			o = append(o, point(maxKey))
		case bson.TypeRegex:
			o = append(o, allValues)
		case bson.TypeDouble, bson.TypeInt32, bson.TypeInt64, bson.TypeDecimal128:
			o = append(o, numberTypeInterval)
		default:
			lo, hi, li, hin := typeBounds(bt)
			if lo.Type == bson.TypeMinKey {
				o = append(o, allValues)
				continue
			}
			_ = hin
			o = append(o, interval{lo: lo, hi: hi, loInc: li, hiInc: true})
		}
	}
	if numbersOnly {
		return unionize(o), exact
	}
	return unionize(o), inexactFetch
}

// regexBounds follows mongod's IndexBoundsBuilder::translateRegex: an
// anchored, case-sensitive pattern becomes the string range of its literal
// prefix, plus the point interval of the regex itself (regex values sort
// after strings).
func regexBounds(r bson.RawValue) (oil, tightness) {
	pat, flags := r.Regex()
	prefix, t := simpleRegex(pat, flags)
	var o oil
	if prefix != "" {
		end := []byte(prefix)
		if end[len(end)-1] == 0xFF {
			o = append(o, interval{lo: stringVal(prefix), hi: emptyDocVal, loInc: true})
		} else {
			end[len(end)-1]++
			o = append(o, interval{lo: stringVal(prefix), hi: stringVal(string(end)), loInc: true})
		}
	} else {
		o = append(o, interval{lo: stringVal(""), hi: emptyDocVal, loInc: true})
	}
	o = append(o, point(r))
	return o, t
}

// simpleRegex returns the literal prefix every match of pattern starts
// with, and the bounds' tightness (mongod's IndexBoundsBuilder::simpleRegex).
func simpleRegex(pattern, flags string) (string, tightness) {
	multilineOK := false
	switch {
	case strings.HasPrefix(pattern, `\A`):
		multilineOK = true
		pattern = pattern[2:]
	case strings.HasPrefix(pattern, "^"):
		pattern = pattern[1:]
	default:
		return "", inexactCovered
	}
	if mayHavePipe(pattern) {
		return "", inexactCovered
	}
	extended := false
	for _, f := range flags {
		switch f {
		case 'm':
			if !multilineOK {
				return "", inexactCovered
			}
		case 's':
		case 'x':
			extended = true
		default:
			return "", inexactCovered
		}
	}
	var sb strings.Builder
	i := 0
	for i < len(pattern) {
		c := pattern[i]
		i++
		switch {
		case c == '*' || c == '?':
			s := sb.String()
			if len(s) > 0 {
				s = s[:len(s)-1]
			}
			return s, inexactCovered
		case c == '\\':
			if i >= len(pattern) {
				return sb.String(), inexactCovered
			}
			c = pattern[i]
			i++
			if c == 'Q' {
				for i < len(pattern) {
					if pattern[i] == '\\' && i+1 < len(pattern) && pattern[i+1] == 'E' {
						i += 2
						break
					}
					sb.WriteByte(pattern[i])
					i++
				}
				continue
			}
			if isAlnum(c) {
				return sb.String(), inexactCovered
			}
			sb.WriteByte(c)
		case strings.IndexByte("^$.[()+{", c) >= 0:
			return sb.String(), inexactCovered
		case extended && c == '#':
			return sb.String(), inexactCovered
		case extended && (c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f' || c == '\v'):
		default:
			sb.WriteByte(c)
		}
	}
	s := sb.String()
	if s == "" {
		return "", inexactCovered
	}
	return s, exact
}

func isAlnum(c byte) bool {
	return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9'
}

// mayHavePipe reports an unescaped '|' on a best-effort basis, with false
// positives but no false negatives.
func mayHavePipe(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] != '|' {
			continue
		}
		if i == 0 || s[i-1] != '\\' || (i >= 2 && s[i-2] == '\\') {
			return true
		}
	}
	return false
}

// containsPoint reports whether o holds the value v.
func containsPoint(o oil, v bson.RawValue) bool {
	for _, iv := range o {
		lo, hi := cmpVal(iv.lo, v), cmpVal(v, iv.hi)
		if (lo < 0 || lo == 0 && iv.loInc) && (hi < 0 || hi == 0 && iv.hiInc) {
			return true
		}
	}
	return false
}
