package bsonkit

import (
	"strings"

	"go.mongodb.org/mongo-driver/v2/bson"
)

// SplitPath splits a dotted path into its components. An empty path gives
// one empty component.
func SplitPath(p string) []string { return strings.Split(p, ".") }

// Lookup follows parts strictly: through documents by field name and
// through arrays by numeric index only, without implicit traversal of array
// elements. It returns false when a component is missing or the value on
// the way is neither document nor array.
func Lookup(v bson.RawValue, parts []string) (bson.RawValue, bool) {
	for _, p := range parts {
		switch v.Type {
		case bson.TypeEmbeddedDocument:
			f, ok := Field(v.Value, p)
			if !ok {
				return bson.RawValue{}, false
			}
			v = f
		case bson.TypeArray:
			if !AllDigits(p) {
				return bson.RawValue{}, false
			}
			f, ok := Field(v.Value, p)
			if !ok {
				return bson.RawValue{}, false
			}
			v = f
		default:
			return bson.RawValue{}, false
		}
	}
	return v, true
}

// LookupDoc is Lookup starting at the top-level document doc.
func LookupDoc(doc bson.Raw, parts []string) (bson.RawValue, bool) {
	return Lookup(bson.RawValue{Type: bson.TypeEmbeddedDocument, Value: doc}, parts)
}

// Visitor receives the values a Walk reaches. v has TypeMissing where the
// path ends at a field that does not exist. pos is the index, in the first
// array the walk went through, of the element that led to v; it is -1 when
// v was not reached through an array element (the whole leaf array itself,
// or a path with no array). Returning true stops the walk.
type Visitor func(v bson.RawValue, pos int) (stop bool)

// Walk visits the values at parts in doc with the path semantics of
// mongod's query matcher (ElementPath with non-leaf array traversal):
//
//   - Documents are entered by field name. A missing field, or a scalar in
//     the middle of the path, yields one missing value.
//   - An array in the middle of the path is traversed: each document
//     element is walked with the rest of the path; and when the next
//     component is all digits and equals an element's index, that element
//     is taken positionally as well (the whole rest consumed when that was
//     the last component). Scalars that are not picked by index yield
//     nothing, so {a: [1]} yields no value at all for a.b.
//   - An array at the end of the path yields each element and then, when
//     leafArrays is true, the array itself (so equality to a whole array
//     and $type "array" work); with leafArrays false it yields only the
//     array (the behaviour of $size, $elemMatch and $all-$elemMatch).
//
// It returns true when fn stopped the walk.
func Walk(doc bson.Raw, parts []string, leafArrays bool, fn Visitor) bool {
	w := walker{leafArrays: leafArrays, fn: fn}
	return w.doc(doc, parts, -1)
}

type walker struct {
	leafArrays bool
	fn         Visitor
}

func (w *walker) doc(doc []byte, parts []string, pos int) bool {
	cur := doc
	for i, p := range parts {
		v, ok := Field(cur, p)
		if !ok {
			return w.fn(bson.RawValue{}, pos)
		}
		last := i == len(parts)-1
		switch {
		case last:
			return w.leaf(v, pos)
		case v.Type == bson.TypeArray:
			return w.array(v.Value, parts[i+1:], pos)
		case v.Type == bson.TypeEmbeddedDocument:
			cur = v.Value
		default:
			return w.fn(bson.RawValue{}, pos)
		}
	}
	// Only reached with no parts: the document itself.
	return w.fn(bson.RawValue{Type: bson.TypeEmbeddedDocument, Value: doc}, pos)
}

func (w *walker) leaf(v bson.RawValue, pos int) bool {
	if v.Type != bson.TypeArray {
		return w.fn(v, pos)
	}
	if !w.leafArrays {
		return w.fn(v, pos)
	}
	stop := false
	i := 0
	ForEach(v.Value, func(_ string, e bson.RawValue) bool {
		p := pos
		if p < 0 {
			p = i
		}
		i++
		stop = w.fn(e, p)
		return !stop
	})
	if stop {
		return true
	}
	return w.fn(v, pos)
}

// array walks the elements of arr with the remaining path rest (non-empty).
func (w *walker) array(arr []byte, rest []string, pos int) bool {
	next := rest[0]
	numeric := AllDigits(next)
	stop := false
	i := 0
	ForEach(arr, func(key string, e bson.RawValue) bool {
		p := pos
		if p < 0 {
			p = i
		}
		i++
		if e.Type == bson.TypeEmbeddedDocument {
			if w.doc(e.Value, rest, p) {
				stop = true
				return false
			}
		}
		if numeric && key == next {
			if len(rest) == 1 {
				stop = w.fn(e, p)
				return !stop
			}
			switch e.Type {
			case bson.TypeEmbeddedDocument:
				stop = w.doc(e.Value, rest[1:], p)
			case bson.TypeArray:
				stop = w.array(e.Value, rest[1:], p)
			}
			return !stop
		}
		return true
	})
	return stop
}
