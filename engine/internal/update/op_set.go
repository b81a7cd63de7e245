package update

import (
	"bytes"

	"go.mongodb.org/mongo-driver/v2/bson"
)

// opSet is $set and $setOnInsert: it replaces the value at the path,
// creating the path when missing. Writing a value byte-identical to the
// current one (same type and bytes) is a no-op.
// Manual: https://www.mongodb.com/docs/manual/reference/operator/update/set/
type opSet struct{ val bson.RawValue }

func (o *opSet) updateExisting(_ *applyCtx, e *elem, _ string) (bool, error) {
	if !e.expanded && e.typ == o.val.Type && bytes.Equal(e.raw, o.val.Value) {
		return false, nil
	}
	if e.expanded {
		cur := e.value()
		if cur.Type == o.val.Type && bytes.Equal(cur.Value, o.val.Value) {
			return false, nil
		}
	}
	e.set(o.val)
	return true, nil
}

func (o *opSet) create(_ *applyCtx, e *elem) (bool, error) {
	e.set(o.val)
	return true, nil
}

// opUnset is $unset: it removes the field, or sets an array member to
// null. A missing path, even one blocked by a scalar, is a no-op.
// Manual: https://www.mongodb.com/docs/manual/reference/operator/update/unset/
type opUnset struct{}

func (opUnset) allowNonViablePath() {}
func (opUnset) skipValidation()     {}

func (opUnset) updateExisting(_ *applyCtx, e *elem, _ string) (bool, error) {
	if e.parent != nil && e.parent.typ == bson.TypeArray {
		e.set(bson.RawValue{Type: bson.TypeNull})
		return true, nil
	}
	e.remove()
	return true, nil
}

func (opUnset) create(*applyCtx, *elem) (bool, error) { return false, nil }

// opPlaceholder occupies the source path of a $rename so that other
// operators on that path conflict with it; it does nothing itself.
type opPlaceholder struct{}

func (opPlaceholder) apply(*applyCtx, *elem) (bool, error) { return false, nil }
