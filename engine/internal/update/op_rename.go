package update

import (
	"go.mongodb.org/mongo-driver/v2/bson"

	"github.com/formworkdb/formwork/engine/internal/mongoerr"
)

// renameNode is $rename, placed at the destination path (a placeholder
// occupies the source path). It behaves as a $set of the source value at
// the destination followed by an $unset of the source: a new destination
// field is appended to its document. A missing source is a no-op; neither
// path may pass through an array.
// Manual: https://www.mongodb.com/docs/manual/reference/operator/update/rename/
type renameNode struct {
	from     []string
	fromPath string
	toPath   string
}

func (n *renameNode) apply(c *applyCtx, e *elem) (bool, error) {
	src, err := n.findSource(c.root)
	if err != nil || src == nil {
		return false, err
	}
	for p := src.parent; p != nil && p != c.root; p = p.parent {
		if p.typ == bson.TypeArray {
			return false, mongoerr.Newf(mongoerr.BadValue,
				"The source field cannot be an array element, '%s' in doc with %s has an array field called '%s'",
				n.fromPath, idOrNone(c.root), p.fieldName())
		}
	}
	start := e
	if len(c.toCreate) == 0 {
		start = e.parent
	}
	for p := start; p != nil && p != c.root; p = p.parent {
		if p.typ == bson.TypeArray {
			return false, mongoerr.Newf(mongoerr.BadValue,
				"The destination field cannot be an array element, '%s' in doc with %s has an array field called '%s'",
				n.toPath, idOrNone(c.root), p.fieldName())
		}
	}
	set := &leafNode{op: &opSetElem{val: src.value()}}
	if _, err := set.apply(c, e); err != nil {
		return false, err
	}
	src.remove()
	if n.from[0] == "_id" {
		return false, mongoerr.Newf(mongoerr.ImmutableField,
			"Unsetting the path '%s' using $rename would modify the immutable field '_id'", n.fromPath)
	}
	return true, nil
}

// findSource walks the source path from the root as mongod's
// findLongestPrefix does. It returns nil when the source is missing and
// PathNotViable when a scalar blocks the path.
func (n *renameNode) findSource(root *elem) (*elem, error) {
	cur := root
	for i, part := range n.from {
		prev := cur
		var next *elem
		viable := true
		switch cur.typ {
		case bson.TypeEmbeddedDocument:
			next = cur.child(part)
		case bson.TypeArray:
			if idx, ok := arrayIndex(part); ok {
				next = cur.nth(idx)
			} else {
				viable = false
			}
		default:
			viable = false
		}
		if !viable {
			return nil, mongoerr.Newf(mongoerr.PathNotViable,
				"cannot use the part (%s of %s) to traverse the element ({%s})",
				n.from[i-1], n.fromPath, elemString(prev))
		}
		if next == nil {
			return nil, nil
		}
		cur = next
	}
	return cur, nil
}

func idOrNone(root *elem) string {
	if id := root.child("_id"); id != nil {
		return elemString(id)
	}
	return "no id"
}

// opSetElem is the $set half of a $rename: an equal value (BSON
// comparison, so 1 and 1.0 are equal) leaves the destination alone.
type opSetElem struct{ val bson.RawValue }

func (o *opSetElem) updateExisting(_ *applyCtx, e *elem, _ string) (bool, error) {
	if compareValues(e.value(), o.val) == 0 {
		return false, nil
	}
	e.set(o.val)
	return true, nil
}

func (o *opSetElem) create(_ *applyCtx, e *elem) (bool, error) {
	e.set(o.val)
	return true, nil
}
