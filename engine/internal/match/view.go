package match

import (
	"go.mongodb.org/mongo-driver/v2/bson"
)

// Kind classifies a node of a compiled filter for readers outside match:
// the planner derives index bounds and explain's filters from it.
type Kind int

// The node kinds of a View. Operands are as the filter gave them.
const (
	KindAnd    Kind = iota // every child holds; no children: always true
	KindOr                 // some child holds; no children: always false
	KindNor                // no child holds
	KindNot                // Children[0] does not hold; Path: the field of $ne, $nin, $not, {$exists: false}
	KindTrue               // $alwaysTrue
	KindFalse              // $alwaysFalse, {$all: []}
	KindEq                 // Path equals Value
	KindLt                 // Path < Value
	KindLte                // Path <= Value
	KindGt                 // Path > Value
	KindGte                // Path >= Value
	KindIn                 // Value: the $in array (regexes included)
	KindRegex              // Value: a BSON regex (pattern and options)
	KindExists             // Path exists
	KindType               // Value: the $type operand (a type or an array of types)
	KindSize               // Value: the $size operand
	KindMod                // Value: the $mod operand
	KindBits               // Op: the $bits… operator; Value: its operand
	// KindElemMatchObject: some array element at Path, a document or
	// array, satisfies Children[0], whose paths are relative to the
	// element.
	KindElemMatchObject
	// KindElemMatchValue: some array element at Path satisfies every
	// child, each a predicate on the element itself (Path "").
	KindElemMatchValue
	// KindExpr: Value is an $expr operand, evaluated on the whole
	// document.
	KindExpr
	// KindExprEq: Path equals Value, a predicate implied by an $expr
	// beside it ($_internalExprEq); it exists for index bounds.
	KindExprEq
	// KindJSONSchema: Value is a $jsonSchema operand, evaluated on the
	// whole document.
	KindJSONSchema
)

// Node is a read-only view of one node of a compiled Filter. Nodes and
// their values share memory with the Filter and stay valid as long as it
// does; callers must not modify them.
type Node struct {
	Kind     Kind
	Path     string // full dotted path from the document (or the $elemMatch element)
	Op       string // operator name for KindBits and others that have one
	Value    bson.RawValue
	Children []*Node

	n node // the node that evaluates this view
}

// View returns the root of f's tree. Logical nodes keep the shape of the
// filter; a filter of one predicate is that predicate. It is safe for
// concurrent use.
func (f *Filter) View() *Node {
	f.viewOnce.Do(func() { f.view = viewOf(f.root) })
	return f.view
}

// viewOf builds the view of n and its children.
func viewOf(n node) *Node {
	v := &Node{n: n}
	kids := func(cs []node) {
		for _, c := range cs {
			v.Children = append(v.Children, viewOf(c))
		}
	}
	switch t := n.(type) {
	case *andNode:
		v.Kind = KindAnd
		kids(t.children)
	case *orNode:
		v.Kind = KindOr
		kids(t.children)
	case *norNode:
		v.Kind = KindNor
		kids(t.children)
	case *notNode:
		v.Kind, v.Path = KindNot, t.path
		kids([]node{t.child})
	case *constNode:
		v.Kind = KindFalse
		if t.value {
			v.Kind = KindTrue
		}
	case *leafNode:
		v.Kind, v.Path, v.Op, v.Value = t.kind, t.path, t.op, t.arg
	case *exprNode:
		v.Kind, v.Value = KindExpr, t.arg
	case *schemaNode:
		v.Kind, v.Op, v.Value = KindJSONSchema, "$jsonSchema", t.arg
	case *arrayNode:
		v.Kind, v.Path, v.Op, v.Value = t.kind, t.path, t.op, t.arg
		switch sub := t.sub.(type) {
		case nil:
		case *andNode:
			if t.kind == KindElemMatchValue {
				kids(sub.children)
			} else {
				kids([]node{sub})
			}
		default:
			kids([]node{sub})
		}
	}
	return v
}

// And returns a filter that holds when every node holds, evaluated by the
// nodes' own compiled predicates: the planner uses it for the residual
// part of a filter without compiling it again. The nodes must come from
// f's View.
func (f *Filter) And(nodes []*Node) *Filter {
	cs := make([]node, len(nodes))
	for i, v := range nodes {
		cs[i] = v.n
	}
	return &Filter{root: andOf(cs), env: f.env}
}

// regexValue builds a BSON regex value.
func regexValue(pattern, options string) bson.RawValue {
	b := append([]byte(pattern), 0)
	b = append(append(b, options...), 0)
	return bson.RawValue{Type: bson.TypeRegex, Value: b}
}
