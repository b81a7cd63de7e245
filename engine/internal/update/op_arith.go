package update

import (
	"go.mongodb.org/mongo-driver/v2/bson"

	"github.com/formworkdb/formwork/engine/internal/mongoerr"
)

// opArith is $inc and $mul. A missing field is created with the operand
// ($inc) or with zero of the operand's type ($mul). A result identical to
// the current value (same type and value) is a no-op.
// Manual: https://www.mongodb.com/docs/manual/reference/operator/update/inc/
// and https://www.mongodb.com/docs/manual/reference/operator/update/mul/
type opArith struct {
	name    string // "$inc" or "$mul"
	operand num
}

// newArith parses the operand of $inc or $mul; it answers TypeMismatch
// for a non-number.
func newArith(name, field string, v bson.RawValue) (*opArith, error) {
	n, ok := numOf(v)
	if !ok {
		verb := "increment"
		if name == "$mul" {
			verb = "multiply"
		}
		return nil, mongoerr.Newf(mongoerr.TypeMismatch,
			"Cannot %s with non-numeric argument: {%s}", verb, fieldString(field, v))
	}
	return &opArith{name: name, operand: n}, nil
}

func (o *opArith) updateExisting(c *applyCtx, e *elem, _ string) (bool, error) {
	cur, ok := numOf(e.value())
	if !ok {
		return false, mongoerr.Newf(mongoerr.TypeMismatch,
			"Cannot apply %s to a value of non-numeric type. {%s} has the field '%s' of non-numeric type %s",
			o.name, elemString(c.root.child("_id")), e.fieldName(), typeName(e.typ))
	}
	var res num
	if o.name == "$inc" {
		res = o.operand.add(cur)
	} else {
		res = o.operand.mul(cur)
	}
	if res.identical(cur) {
		return false, nil
	}
	if !res.valid {
		id := "no id"
		if idElem := c.root.child("_id"); idElem != nil {
			id = elemString(idElem)
		}
		return false, mongoerr.Newf(mongoerr.BadValue,
			"Failed to apply %s operations to current value (%s) for document {%s}",
			o.name, cur.debugString(), id)
	}
	e.set(res.raw())
	return true, nil
}

func (o *opArith) create(_ *applyCtx, e *elem) (bool, error) {
	v := o.operand
	if o.name == "$mul" {
		v = v.mul(int32Num(0))
	}
	e.set(v.raw())
	return true, nil
}
