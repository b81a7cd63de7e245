package update

import (
	"go.mongodb.org/mongo-driver/v2/bson"

	"github.com/formworkdb/formwork/engine/internal/bsonkit"
	"github.com/formworkdb/formwork/engine/internal/collation"
	"github.com/formworkdb/formwork/engine/internal/mongoerr"
)

// opAddToSet is $addToSet: it appends each value the array does not
// already hold (BSON equality), creating the array when missing.
// Manual: https://www.mongodb.com/docs/manual/reference/operator/update/addToSet/
type opAddToSet struct{ values []bson.RawValue }

// newAddToSet parses the operand of $addToSet: a value, or {$each: [...]}
// when the first field is $each.
func newAddToSet(v bson.RawValue) (*opAddToSet, error) {
	var values []bson.RawValue
	if doc, ok := v.DocumentOK(); ok {
		elems, err := doc.Elements()
		if err != nil {
			return nil, mongoerr.New(mongoerr.InvalidBSON, "invalid $addToSet operand")
		}
		if len(elems) > 0 && elems[0].Key() == "$each" {
			each := elems[0].Value()
			if each.Type != bson.TypeArray {
				return nil, mongoerr.Newf(mongoerr.TypeMismatch,
					"The argument to $each in $addToSet must be an array but it was of type %s", typeName(each.Type))
			}
			if len(elems) > 1 {
				return nil, mongoerr.Newf(mongoerr.BadValue,
					"Found unexpected fields after $each in $addToSet: %s", docString(doc))
			}
			values = arrayValues(each)
		}
	}
	if values == nil {
		values = []bson.RawValue{v}
	}
	var dedup []bson.RawValue
	seen := newValueSet(len(values))
	for _, x := range values {
		if seen.add(x) {
			dedup = append(dedup, x)
		}
	}
	return &opAddToSet{values: dedup}, nil
}

// containsValueWith is containsValue with strings compared under coll.
func containsValueWith(vals []bson.RawValue, v bson.RawValue, coll *collation.Collator) bool {
	for _, x := range vals {
		if bsonkit.CompareWith(x, v, coll) == 0 {
			return true
		}
	}
	return false
}

func (o *opAddToSet) updateExisting(c *applyCtx, e *elem, _ string) (bool, error) {
	if e.typ != bson.TypeArray {
		return false, mongoerr.Newf(mongoerr.BadValue,
			"Cannot apply $addToSet to non-array field. Field named '%s' has non-array type %s",
			e.fieldName(), typeName(e.typ))
	}
	kids := e.children()
	existing := newValueSet(len(kids))
	var plain []bson.RawValue // under a collation, compared one by one
	for _, k := range kids {
		if err := c.tick(); err != nil {
			return false, err
		}
		existing.add(k.value())
		if c.coll != nil {
			plain = append(plain, k.value())
		}
	}
	changed := false
	for _, v := range o.values {
		if err := c.tick(); err != nil {
			return false, err
		}
		if existing.contains(v) || (c.coll != nil && containsValueWith(plain, v, c.coll)) {
			continue
		}
		e.appendChild(newValue("", v))
		changed = true
	}
	return changed, nil
}

func (o *opAddToSet) create(_ *applyCtx, e *elem) (bool, error) {
	e.setEmpty(bson.TypeArray)
	for _, v := range o.values {
		e.appendChild(newValue("", v))
	}
	return true, nil
}

// opPop is $pop: it removes the first (-1) or last (1) member of an array.
// A missing path is a no-op, a path blocked by a scalar is PathNotViable.
// Manual: https://www.mongodb.com/docs/manual/reference/operator/update/pop/
type opPop struct{ front bool }

func (opPop) skipValidation() {}

// newPop parses the operand of $pop: FailedToParse unless 1 or -1.
func newPop(field string, v bson.RawValue) (*opPop, error) {
	n, err := integerOfField(field, v)
	if err != nil {
		return nil, err
	}
	if n != 1 && n != -1 {
		return nil, mongoerr.Newf(mongoerr.FailedToParse, "$pop expects 1 or -1, found: %d", n)
	}
	return &opPop{front: n == -1}, nil
}

func (o *opPop) updateExisting(_ *applyCtx, e *elem, path string) (bool, error) {
	if e.typ != bson.TypeArray {
		return false, mongoerr.Newf(mongoerr.TypeMismatch,
			"Path '%s' contains an element of non-array type '%s'", path, typeName(e.typ))
	}
	kids := e.children()
	if len(kids) == 0 {
		return false, nil
	}
	if o.front {
		kids[0].remove()
	} else {
		kids[len(kids)-1].remove()
	}
	return true, nil
}

func (o *opPop) create(*applyCtx, *elem) (bool, error) { return false, nil }

// opPull is $pull and $pullAll: it removes every member the matcher
// accepts. A missing path, even one blocked by a scalar, is a no-op.
// Manual: https://www.mongodb.com/docs/manual/reference/operator/update/pull/
// and https://www.mongodb.com/docs/manual/reference/operator/update/pullAll/
type opPull struct {
	match func(*applyCtx, bson.RawValue) (bool, error)
}

func (opPull) allowNonViablePath() {}
func (opPull) skipValidation()     {}

// newPullAll parses the operand of $pullAll: an array of values removed
// by BSON equality.
func newPullAll(v bson.RawValue) (*opPull, error) {
	if v.Type != bson.TypeArray {
		return nil, mongoerr.Newf(mongoerr.BadValue,
			"$pullAll requires an array argument but was given a %s", typeName(v.Type))
	}
	list := arrayValues(v)
	vals := newValueSet(0)
	for _, x := range list {
		vals.add(x)
	}
	// The set is filled here and only read while applying, so one compiled
	// update serves concurrent applications. Under a collation, strings
	// equal under it hash apart, so the values are compared one by one.
	return &opPull{match: func(c *applyCtx, x bson.RawValue) (bool, error) {
		if c.coll != nil {
			return containsValueWith(list, x, c.coll), nil
		}
		return vals.contains(x), nil
	}}, nil
}

func (o *opPull) updateExisting(c *applyCtx, e *elem, _ string) (bool, error) {
	if e.typ != bson.TypeArray {
		return false, mongoerr.New(mongoerr.BadValue, "Cannot apply $pull to a non-array value")
	}
	kids := e.children()
	keep := kids[:0:0]
	for _, k := range kids {
		if err := c.tick(); err != nil {
			return false, err
		}
		ok, err := o.match(c, k.value())
		if err != nil {
			return false, err
		}
		if !ok {
			keep = append(keep, k)
		}
	}
	if len(keep) == len(kids) {
		return false, nil
	}
	e.kids = keep
	return true, nil
}

func (o *opPull) create(*applyCtx, *elem) (bool, error) { return false, nil }

// opBit is $bit: and/or/xor with int32 or int64 operands, applied in the
// order given. A missing field starts from int32 0.
// Manual: https://www.mongodb.com/docs/manual/reference/operator/update/bit/
type opBit struct{ ops []bitStep }

type bitStep struct {
	op      string
	operand num
}

// newBit parses the operand of $bit; errors are BadValue.
func newBit(v bson.RawValue) (*opBit, error) {
	doc, ok := v.DocumentOK()
	if !ok {
		return nil, mongoerr.Newf(mongoerr.BadValue,
			"The $bit modifier is not compatible with a %s. You must pass in an embedded document: {$bit: {field: {and/or/xor: #}}",
			typeName(v.Type))
	}
	elems, err := doc.Elements()
	if err != nil {
		return nil, mongoerr.New(mongoerr.InvalidBSON, "invalid $bit operand")
	}
	o := &opBit{}
	for _, el := range elems {
		switch el.Key() {
		case "and", "or", "xor":
		default:
			return nil, mongoerr.Newf(mongoerr.BadValue,
				"The $bit modifier only supports 'and', 'or', and 'xor', not '%s' which is an unknown operator: {%s}",
				el.Key(), fieldString(el.Key(), el.Value()))
		}
		val := el.Value()
		if val.Type != bson.TypeInt32 && val.Type != bson.TypeInt64 {
			return nil, mongoerr.Newf(mongoerr.BadValue,
				"The $bit modifier field must be an Integer(32/64 bit); a '%s' is not supported here: {%s}",
				typeName(val.Type), fieldString(el.Key(), val))
		}
		n, _ := numOf(val)
		o.ops = append(o.ops, bitStep{op: el.Key(), operand: n})
	}
	if len(o.ops) == 0 {
		return nil, mongoerr.New(mongoerr.BadValue,
			"You must pass in at least one bitwise operation. The format is: {$bit: {field: {and/or/xor: #}}")
	}
	return o, nil
}

func (o *opBit) run(v num) (num, error) {
	for _, s := range o.ops {
		v = v.bitOp(s.operand, s.op)
		if !v.valid {
			return num{}, mongoerr.Newf(mongoerr.BadValue,
				"Failed to apply $bit operations to current value: %s", v.debugString())
		}
	}
	return v, nil
}

func (o *opBit) updateExisting(c *applyCtx, e *elem, _ string) (bool, error) {
	cur, ok := numOf(e.value())
	if !ok || (cur.t != bson.TypeInt32 && cur.t != bson.TypeInt64) {
		return false, mongoerr.Newf(mongoerr.BadValue,
			"Cannot apply $bit to a value of non-integral type.%s has the field %s of non-integer type %s",
			elemString(c.root.child("_id")), e.fieldName(), typeName(e.typ))
	}
	res, err := o.run(cur)
	if err != nil {
		return false, err
	}
	if res.identical(cur) {
		return false, nil
	}
	e.set(res.raw())
	return true, nil
}

func (o *opBit) create(_ *applyCtx, e *elem) (bool, error) {
	res, err := o.run(int32Num(0))
	if err != nil {
		return false, err
	}
	e.set(res.raw())
	return true, nil
}
