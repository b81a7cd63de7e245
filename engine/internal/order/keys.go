package order

import (
	"strings"

	"go.mongodb.org/mongo-driver/v2/bson"

	"github.com/formworkdb/formwork/engine/internal/bsonkit"
	"github.com/formworkdb/formwork/engine/internal/mongoerr"
)

var (
	nullValue      = bson.RawValue{Type: bson.TypeNull}
	undefinedValue = bson.RawValue{Type: bson.TypeUndefined}
)

// slot is the state of one sort field while keys are generated: either a
// value, or a container document and the path left to follow in it.
type slot struct {
	done bool
	val  bson.RawValue
	cont []byte
	rest []string
}

// stop is where a field's path reached an array.
type stop struct {
	arr    []byte
	rest   []string
	prefix string
}

// keys calls emit with every key of doc, in the manner of mongod's btree
// key generator: paths through one shared array advance element by
// element together; paths through two different arrays are an error.
func (o *Order) keys(doc []byte, emit func(Key)) error {
	slots := make([]slot, len(o.fields))
	for i, f := range o.fields {
		slots[i] = slot{cont: doc, rest: f.parts}
	}
	return expand(slots, emit)
}

func expand(slots []slot, emit func(Key)) error {
	stops := map[int]stop{}
	var shared *stop
	for i := range slots {
		if slots[i].done {
			continue
		}
		v, st, isArr := walkToArray(slots[i].cont, slots[i].rest)
		if !isArr {
			slots[i] = slot{done: true, val: v}
			continue
		}
		if shared != nil && shared.prefix != st.prefix {
			return mongoerr.New(mongoerr.BadValue, "cannot sort with keys that are parallel arrays")
		}
		shared = &st
		stops[i] = st
	}
	if shared == nil {
		k := make(Key, len(slots))
		for i, s := range slots {
			k[i] = s.val
		}
		emit(k)
		return nil
	}
	elems := bsonkit.Values(shared.arr)
	if len(elems) == 0 {
		next := append([]slot(nil), slots...)
		for i, st := range stops {
			if len(st.rest) == 0 {
				next[i] = slot{done: true, val: undefinedValue}
			} else {
				next[i] = slot{done: true, val: nullValue}
			}
		}
		return expand(next, emit)
	}
	for _, el := range elems {
		next := append([]slot(nil), slots...)
		for i, st := range stops {
			switch {
			case len(st.rest) == 0:
				next[i] = slot{done: true, val: el}
			case el.Type == bson.TypeEmbeddedDocument:
				next[i] = slot{cont: el.Value, rest: st.rest}
			default:
				next[i] = slot{done: true, val: nullValue}
			}
		}
		if err := expand(next, emit); err != nil {
			return err
		}
	}
	return nil
}

// walkToArray follows parts from the document cont until the path ends
// (returning the value, null for missing) or reaches an array that must be
// expanded (returning the stop). A numeric component right after an array
// picks that element instead of expanding the array; an array picked that
// way at the end of the path is a key as a whole.
func walkToArray(cont []byte, parts []string) (bson.RawValue, stop, bool) {
	cur := cont
	for i := 0; i < len(parts); i++ {
		v, ok := bsonkit.Field(cur, parts[i])
		if !ok {
			return nullValue, stop{}, false
		}
		last := i == len(parts)-1
		switch {
		case v.Type == bson.TypeArray && last:
			return bson.RawValue{}, stop{arr: v.Value, prefix: strings.Join(parts[:i+1], ".")}, true
		case last:
			return v, stop{}, false
		case v.Type == bson.TypeEmbeddedDocument:
			cur = v.Value
		case v.Type == bson.TypeArray:
			next := parts[i+1]
			if !bsonkit.AllDigits(next) {
				return bson.RawValue{}, stop{arr: v.Value, rest: parts[i+1:], prefix: strings.Join(parts[:i+1], ".")}, true
			}
			el, ok := bsonkit.Field(v.Value, next)
			if !ok {
				return nullValue, stop{}, false
			}
			i++
			switch {
			case i == len(parts)-1:
				return el, stop{}, false
			case el.Type == bson.TypeEmbeddedDocument:
				cur = el.Value
			case el.Type == bson.TypeArray:
				return bson.RawValue{}, stop{arr: el.Value, rest: parts[i+1:], prefix: strings.Join(parts[:i+1], ".")}, true
			default:
				return nullValue, stop{}, false
			}
		default:
			return nullValue, stop{}, false
		}
	}
	return bson.RawValue{Type: bson.TypeEmbeddedDocument, Value: cur}, stop{}, false
}
