package update

import (
	"strings"

	"go.mongodb.org/mongo-driver/v2/bson"

	"github.com/formworkdb/formwork/engine/internal/mongoerr"
)

// modifier is the per-operator part of a leaf: what it does to an existing
// element and what value it gives a created one.
type modifier interface {
	// updateExisting modifies e in place and reports whether it changed.
	// path is the dotted path of e.
	updateExisting(c *applyCtx, e *elem, path string) (bool, error)
	// create reports whether the operator creates a missing path, and
	// sets the value of the created element e.
	create(c *applyCtx, e *elem) (bool, error)
}

// nonViableOK is implemented by modifiers that treat a path blocked by a
// scalar as a no-op instead of an error ($unset, $pull, $pullAll).
type nonViableOK interface{ allowNonViablePath() }

// noValidate is implemented by modifiers whose result needs no storage
// validation because it can only shrink the document ($unset, $pull,
// $pullAll, $pop).
type noValidate interface{ skipValidation() }

// leafNode applies one operator at the end of a path.
type leafNode struct {
	op modifier
	// insertOnly marks $setOnInsert: the leaf does nothing unless the
	// update builds an upsert document.
	insertOnly bool
}

// maxPadding is how many nulls an update may append to reach an array
// index, as mongod's kMaxPaddingAllowed.
const maxPadding = 1500000

// maxDepth is the deepest nesting of a stored document.
const maxDepth = 100

func (n *leafNode) apply(c *applyCtx, e *elem) (bool, error) {
	if n.insertOnly && !c.insert {
		return false, nil
	}
	if len(c.toCreate) > 0 {
		return n.applyMissing(c, e)
	}
	path := joinPath(c.taken)
	changed, err := n.op.updateExisting(c, e, path)
	if err != nil || !changed {
		return false, err
	}
	if len(c.taken) > 0 && c.taken[0] == "_id" {
		return false, mongoerr.Newf(mongoerr.ImmutableField,
			"Performing an update on the path '%s' would modify the immutable field '_id'", path)
	}
	if _, ok := n.op.(noValidate); !ok && c.validate {
		if err := validateStored(e, len(c.taken)); err != nil {
			return false, err
		}
	}
	return true, nil
}

func (n *leafNode) applyMissing(c *applyCtx, e *elem) (bool, error) {
	created := &elem{name: c.toCreate[len(c.toCreate)-1], typ: bson.TypeNull}
	ok, err := n.op.create(c, created)
	if err != nil {
		return false, err
	}
	if !ok {
		if _, tolerant := n.op.(nonViableOK); !tolerant {
			if err := checkViability(e, c.toCreate, c.taken); err != nil {
				return false, err
			}
		}
		return false, nil
	}
	first, err := createPathAt(c.toCreate, e, created)
	if err != nil {
		return false, err
	}
	if c.validate {
		if err := validateStored(first, len(c.taken)+1); err != nil {
			return false, err
		}
	}
	if len(c.taken) > 0 && c.taken[0] == "_id" {
		return false, mongoerr.Newf(mongoerr.ImmutableField,
			"Updating the path '%s' to %s would modify the immutable field '_id'",
			joinPath(c.taken), elemString(e))
	}
	return true, nil
}

// createPathAt creates the parts of path below e, ending in leaf, padding
// arrays with nulls to reach a numeric part. It returns the first element
// created.
func createPathAt(path []string, e, leaf *elem) (*elem, error) {
	if !e.isContainer() {
		return nil, mongoerr.Newf(mongoerr.PathNotViable,
			"Cannot create field '%s' in element {%s}", path[0], elemString(e))
	}
	parts := path
	parent := e
	var first *elem
	if e.typ == bson.TypeArray {
		idx, ok := arrayIndex(path[0])
		if !ok {
			return nil, mongoerr.Newf(mongoerr.PathNotViable,
				"Cannot create field '%s' in element {%s}", path[0], elemString(e))
		}
		have := len(e.children())
		if idx > have {
			if idx-have > maxPadding {
				return nil, mongoerr.Newf(mongoerr.Code(34),
					"can't backfill more than %d elements", maxPadding)
			}
			for i := have; i < idx; i++ {
				e.appendChild(&elem{typ: bson.TypeNull})
			}
		}
		if len(path) == 1 {
			e.appendChild(leaf)
			return leaf, nil
		}
		holder := &elem{}
		holder.setEmpty(bson.TypeEmbeddedDocument)
		e.appendChild(holder)
		first = holder
		parent = holder
		parts = path[1:]
	}
	for _, p := range parts[:len(parts)-1] {
		d := &elem{name: p}
		d.setEmpty(bson.TypeEmbeddedDocument)
		parent.appendChild(d)
		if first == nil {
			first = d
		}
		parent = d
	}
	leaf.name = parts[len(parts)-1]
	parent.appendChild(leaf)
	if first == nil {
		first = leaf
	}
	return first, nil
}

// checkViability returns PathNotViable when the missing path below e could
// not be created even by an operator that creates paths.
func checkViability(e *elem, toCreate, taken []string) error {
	if e.typ == bson.TypeEmbeddedDocument {
		return nil
	}
	if e.typ == bson.TypeArray {
		if _, ok := arrayIndex(toCreate[0]); ok {
			return nil
		}
	}
	return mongoerr.Newf(mongoerr.PathNotViable,
		"Cannot use the part (%s) of (%s.%s) to traverse the element ({%s})",
		toCreate[0], joinPath(taken), joinPath(toCreate), elemString(e))
}

// validateStored checks an element an update wrote, as mongod's storage
// validation does from 5.0 on: a top-level field may not start with '$'
// (DBRef fields excepted), and nesting may not exceed maxDepth.
func validateStored(e *elem, level int) error {
	if level == 1 && strings.HasPrefix(e.name, "$") {
		if err := validateDollarField(e); err != nil {
			return err
		}
	}
	if level+valueDepth(e.value(), 0) > maxDepth {
		return mongoerr.Newf(mongoerr.Overflow, "Document exceeds maximum nesting depth of %d", maxDepth)
	}
	return nil
}

// valueDepth returns how many levels of elements lie below v (0 for a
// scalar or an empty container).
func valueDepth(v bson.RawValue, depth int) int {
	if depth > maxDepth+1 {
		return depth
	}
	if v.Type != bson.TypeEmbeddedDocument && v.Type != bson.TypeArray {
		return 0
	}
	elems, err := bson.Raw(v.Value).Elements()
	if err != nil || len(elems) == 0 {
		return 0
	}
	deepest := 0
	for _, el := range elems {
		if d := valueDepth(el.Value(), depth+1); d > deepest {
			deepest = d
		}
	}
	return 1 + deepest
}

// validateDollarField checks a '$'-prefixed top-level field: only the DBRef
// fields $ref, $id and $db in that order are storable.
func validateDollarField(e *elem) error {
	siblings := []*elem{e}
	idx := 0
	if e.parent != nil {
		siblings = e.parent.children()
		idx = e.parent.indexOf(e)
	}
	at := func(i int) *elem {
		if i < 0 || i >= len(siblings) {
			return nil
		}
		return siblings[i]
	}
	name := e.name
	cur := idx
	if name == "$db" {
		if e.typ != bson.TypeString {
			return mongoerr.Newf(mongoerr.InvalidDBRef, "The DBRef $db field must be a String, not a %s", typeName(e.typ))
		}
		prev := at(cur - 1)
		if prev == nil || prev.name != "$id" {
			return mongoerr.New(mongoerr.InvalidDBRef, "Found $db field without a $id before it, which is invalid.")
		}
		cur--
		name = "$id"
	}
	if name == "$id" {
		prev := at(cur - 1)
		if prev == nil || prev.name != "$ref" {
			return mongoerr.New(mongoerr.InvalidDBRef, "Found $id field without a $ref before it, which is invalid.")
		}
		cur--
		name = "$ref"
	}
	if name == "$ref" {
		ref := at(cur)
		if ref.typ != bson.TypeString {
			return mongoerr.Newf(mongoerr.InvalidDBRef, "The DBRef $ref field must be a String, not a %s", typeName(ref.typ))
		}
		next := at(cur + 1)
		if next == nil || next.name != "$id" {
			return mongoerr.New(mongoerr.InvalidDBRef, "The DBRef $ref field must be followed by a $id field")
		}
		return nil
	}
	return mongoerr.Newf(mongoerr.DollarPrefixedFieldName,
		"The dollar ($) prefixed field '%s' in '%s' is not allowed in the context of an update's replacement document. Consider using an aggregation pipeline with $replaceWith.",
		e.name, e.pathOf())
}
