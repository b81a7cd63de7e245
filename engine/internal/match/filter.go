package match

import (
	"sync"

	"go.mongodb.org/mongo-driver/v2/bson"

	"github.com/formworkdb/formwork/engine/internal/bsonkit"
)

// Filter is a compiled query filter. It is immutable and safe for
// concurrent use.
type Filter struct {
	root  node
	paths []string

	// env evaluates $expr; nil when the filter has none.
	env *exprEnv

	viewOnce sync.Once
	view     *Node
}

// Match reports whether doc satisfies the filter. doc must be valid BSON.
func (f *Filter) Match(doc bson.Raw) bool {
	ok, _, err := f.run(doc)
	return ok && err == nil
}

// MatchErr reports whether doc satisfies the filter, or the error an
// $expr raised evaluating it (MongoDB's code, e.g. 2 for a $divide by
// zero), which fails the query.
func (f *Filter) MatchErr(doc bson.Raw) (bool, error) {
	ok, _, err := f.run(doc)
	return ok && err == nil, err
}

// run evaluates the filter; only a filter with $expr needs an evaluation
// state.
func (f *Filter) run(doc bson.Raw) (bool, int, error) {
	if f.env == nil {
		ok, pos := f.root.match(doc, nil)
		return ok, pos, nil
	}
	st := f.env.get()
	ok, pos := f.root.match(doc, st)
	err := st.err
	f.env.put(st)
	return ok, pos, err
}

// MatchPos reports whether doc satisfies the filter and, when it does, the
// index of the array element that satisfied it in the first array the
// matching predicate traversed: mongod's elemMatchKey, which the positional
// "$" of update and projection uses. pos is -1 when no array element was
// involved. Within $and (and the implicit and of a filter) the last
// predicate that records a position wins; $or, $nor and $not record none,
// as in mongod.
func (f *Filter) MatchPos(doc bson.Raw) (matched bool, pos int) {
	ok, p, err := f.run(doc)
	if !ok || err != nil {
		return false, -1
	}
	return true, p
}

// Paths returns the field paths the filter's predicates apply to, looking
// through $and, $or, $nor and $not but not into $elemMatch. Projection uses
// it to check that a positional projection refers to a queried field. The
// caller must not modify the slice.
func (f *Filter) Paths() []string { return f.paths }

// node is one compiled match expression.
type node interface {
	// match evaluates the node against a whole document and returns the
	// elemMatchKey position it records (-1 for none).
	match(doc []byte, st *evalState) (bool, int)
	// matchValue evaluates the node against one value without path
	// traversal: mongod's matchesSingleElement, used under $elemMatch on
	// values.
	matchValue(v bson.RawValue) bool
}

type andNode struct{ children []node }

func (n *andNode) match(doc []byte, st *evalState) (bool, int) {
	pos := -1
	for _, c := range n.children {
		ok, p := c.match(doc, st)
		if !ok {
			return false, -1
		}
		if p >= 0 {
			pos = p
		}
	}
	return true, pos
}

func (n *andNode) matchValue(v bson.RawValue) bool {
	for _, c := range n.children {
		if !c.matchValue(v) {
			return false
		}
	}
	return true
}

type orNode struct{ children []node }

func (n *orNode) match(doc []byte, st *evalState) (bool, int) {
	for _, c := range n.children {
		if ok, _ := c.match(doc, st); ok {
			return true, -1
		}
	}
	return false, -1
}

func (n *orNode) matchValue(v bson.RawValue) bool {
	for _, c := range n.children {
		if c.matchValue(v) {
			return true
		}
	}
	return false
}

type norNode struct{ children []node }

func (n *norNode) match(doc []byte, st *evalState) (bool, int) {
	for _, c := range n.children {
		if ok, _ := c.match(doc, st); ok {
			return false, -1
		}
	}
	return true, -1
}

func (n *norNode) matchValue(v bson.RawValue) bool {
	for _, c := range n.children {
		if c.matchValue(v) {
			return false
		}
	}
	return true
}

// notNode negates its child. path is the field of a $ne, $nin, $not or
// {$exists: false} ("" for none).
type notNode struct {
	child node
	path  string
}

func (n *notNode) match(doc []byte, st *evalState) (bool, int) {
	ok, _ := n.child.match(doc, st)
	return !ok, -1
}

func (n *notNode) matchValue(v bson.RawValue) bool { return !n.child.matchValue(v) }

type constNode struct{ value bool }

func (n *constNode) match([]byte, *evalState) (bool, int) { return n.value, -1 }
func (n *constNode) matchValue(bson.RawValue) bool        { return n.value }

// leafNode applies a single-value predicate to every value a path reaches
// (mongod's LeafMatchExpression): the document matches when any value does.
type leafNode struct {
	path  string
	parts []string
	test  func(v bson.RawValue) bool
	// kind, op and arg describe the predicate for View.
	kind Kind
	op   string
	arg  bson.RawValue
}

func (n *leafNode) match(doc []byte, st *evalState) (bool, int) {
	found, pos := false, -1
	bsonkit.Walk(doc, n.parts, true, func(v bson.RawValue, p int) bool {
		if n.test(v) {
			found, pos = true, p
			return true
		}
		return false
	})
	return found, pos
}

func (n *leafNode) matchValue(v bson.RawValue) bool { return n.test(v) }

// arrayNode applies an array predicate to the arrays a path reaches without
// expanding a leaf array (mongod's ArrayMatchingMatchExpression: $size,
// $elemMatch).
type arrayNode struct {
	path  string
	parts []string
	// kind, op and arg describe the predicate for View; sub is the
	// condition an $elemMatch applies to each element.
	kind Kind
	op   string
	arg  bson.RawValue
	sub  node
	// test reports whether arr (array document bytes) matches, and the
	// index of the element that decided it (-1 when none did).
	test func(arr []byte) (bool, int)
}

func (n *arrayNode) match(doc []byte, st *evalState) (bool, int) {
	found, pos := false, -1
	bsonkit.Walk(doc, n.parts, false, func(v bson.RawValue, p int) bool {
		if v.Type != bson.TypeArray {
			return false
		}
		ok, inner := n.test(v.Value)
		if !ok {
			return false
		}
		found = true
		if p >= 0 {
			pos = p
		} else {
			pos = inner
		}
		return true
	})
	return found, pos
}

func (n *arrayNode) matchValue(v bson.RawValue) bool {
	if v.Type != bson.TypeArray {
		return false
	}
	ok, _ := n.test(v.Value)
	return ok
}
