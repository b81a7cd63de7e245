package update

import (
	"go.mongodb.org/mongo-driver/v2/bson"

	"github.com/formworkdb/formwork/engine/internal/bsonkit"
)

// opCompare is $min and $max: the field takes the operand when the operand
// sorts before ($min) or after ($max) the current value in BSON order. An
// equal value, even of another numeric type, is a no-op. A missing field is
// created with the operand.
// Manual: https://www.mongodb.com/docs/manual/reference/operator/update/min/
// and https://www.mongodb.com/docs/manual/reference/operator/update/max/
type opCompare struct {
	max bool
	val bson.RawValue
}

func (o *opCompare) updateExisting(c *applyCtx, e *elem, _ string) (bool, error) {
	cmp := bsonkit.CompareWith(e.value(), o.val, c.coll)
	if (!o.max && cmp <= 0) || (o.max && cmp >= 0) {
		return false, nil
	}
	e.set(o.val)
	return true, nil
}

func (o *opCompare) create(_ *applyCtx, e *elem) (bool, error) {
	e.set(o.val)
	return true, nil
}
