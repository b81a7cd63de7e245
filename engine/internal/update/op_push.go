package update

import (
	"math"
	"slices"

	"go.mongodb.org/mongo-driver/v2/bson"

	"github.com/formworkdb/formwork/engine/internal/bsonkit"
	"github.com/formworkdb/formwork/engine/internal/collation"
	"github.com/formworkdb/formwork/engine/internal/mongoerr"
)

// opPush is $push: it inserts values into an array (creating it when
// missing), then sorts, then slices, whatever the order of the modifiers
// in the operand. Without $each the operand itself is the one value pushed.
// Manual: https://www.mongodb.com/docs/manual/reference/operator/update/push/
type opPush struct {
	values   []bson.RawValue
	position int64 // where the first value goes; MaxInt64 appends
	slice    int64 // MaxInt64 keeps everything
	sort     *pushSort
}

// pushSort is a $sort modifier: whole values (pattern nil) or document
// fields.
type pushSort struct {
	desc    bool      // whole-value order
	pattern []sortKey // field order
}

type sortKey struct {
	path []string
	desc bool
}

// newPush parses the operand of $push.
func newPush(v bson.RawValue) (*opPush, error) {
	o := &opPush{position: math.MaxInt64, slice: math.MaxInt64}
	doc, isDoc := v.DocumentOK()
	if !isDoc {
		o.values = []bson.RawValue{v}
		return o, nil
	}
	if _, err := doc.LookupErr("$each"); err != nil {
		o.values = []bson.RawValue{v}
		return o, nil
	}
	elems, err := doc.Elements()
	if err != nil {
		return nil, mongoerr.New(mongoerr.InvalidBSON, "invalid $push operand")
	}
	seen := map[string]bson.RawValue{}
	for _, el := range elems {
		switch el.Key() {
		case "$each", "$slice", "$sort", "$position":
		default:
			return nil, mongoerr.Newf(mongoerr.BadValue, "Unrecognized clause in $push: %s", el.Key())
		}
		if _, dup := seen[el.Key()]; dup {
			return nil, mongoerr.Newf(mongoerr.BadValue, "Only one %s is supported.", el.Key())
		}
		seen[el.Key()] = el.Value()
	}
	each := seen["$each"]
	if each.Type != bson.TypeArray {
		return nil, mongoerr.Newf(mongoerr.BadValue,
			"The argument to $each in $push must be an array but it was of type: %s", typeName(each.Type))
	}
	o.values = arrayValues(each)
	if s, ok := seen["$slice"]; ok {
		n, err := integerOf(s)
		if err != nil {
			return nil, mongoerr.Newf(mongoerr.BadValue,
				"The value for $slice must be an integer value but was given type: %s", typeName(s.Type))
		}
		o.slice = n
	}
	if s, ok := seen["$sort"]; ok {
		ps, err := parsePushSort(s)
		if err != nil {
			return nil, err
		}
		o.sort = ps
	}
	if p, ok := seen["$position"]; ok {
		n, err := integerOf(p)
		if err != nil {
			return nil, mongoerr.Newf(mongoerr.BadValue,
				"The value for $position must be an integer value, not of type: %s", typeName(p.Type))
		}
		o.position = n
	}
	return o, nil
}

func parsePushSort(s bson.RawValue) (*pushSort, error) {
	errOrder := mongoerr.New(mongoerr.BadValue, "The $sort element value must be either 1 or -1")
	if f, ok := numOf(s); ok {
		switch sortNumber(f) {
		case 1:
			return &pushSort{}, nil
		case -1:
			return &pushSort{desc: true}, nil
		}
		return nil, errOrder
	}
	doc, ok := s.DocumentOK()
	if !ok {
		return nil, mongoerr.New(mongoerr.BadValue,
			"The $sort is invalid: use 1/-1 to sort the whole element, or {field:1/-1} to sort embedded fields")
	}
	elems, err := doc.Elements()
	if err != nil {
		return nil, mongoerr.New(mongoerr.InvalidBSON, "invalid $sort pattern")
	}
	if len(elems) == 0 {
		return nil, mongoerr.New(mongoerr.BadValue, "The $sort pattern is empty when it should be a set of fields.")
	}
	ps := &pushSort{}
	for _, el := range elems {
		order := 0.0
		if f, ok := numOf(el.Value()); ok {
			order = sortNumber(f)
		}
		if order != 1 && order != -1 {
			return nil, errOrder
		}
		if el.Key() == "" {
			return nil, mongoerr.New(mongoerr.BadValue, "The $sort field cannot be empty")
		}
		parts := splitPath(el.Key())
		if slices.Contains(parts, "") {
			return nil, mongoerr.Newf(mongoerr.BadValue,
				"The $sort field is a dotted field but has an empty part: %s", el.Key())
		}
		ps.pattern = append(ps.pattern, sortKey{path: parts, desc: order < 0})
	}
	return ps, nil
}

// sortNumber converts a sort direction to a float the way mongod's
// BSONElement::Number does.
func sortNumber(n num) float64 {
	if n.t == bson.TypeDecimal128 {
		f, _ := decToFloat(n.d)
		return f
	}
	return n.float()
}

func (o *opPush) updateExisting(c *applyCtx, e *elem, path string) (bool, error) {
	if e.typ != bson.TypeArray {
		id := "no id"
		if idElem := c.root.child("_id"); idElem != nil {
			id = elemString(idElem)
		}
		return false, mongoerr.Newf(mongoerr.BadValue,
			"The field '%s' must be an array but is of type %s in document {%s}", path, typeName(e.typ), id)
	}
	return o.push(c, e), nil
}

func (o *opPush) create(c *applyCtx, e *elem) (bool, error) {
	e.setEmpty(bson.TypeArray)
	o.push(c, e)
	return true, nil
}

// push applies the insert, sort and slice steps to the array e.
func (o *opPush) push(c *applyCtx, e *elem) bool {
	changed := false
	if len(o.values) > 0 {
		changed = true
		size := int64(len(e.children()))
		var at int64
		switch {
		case size == 0 || o.position > size:
			at = size
		case o.position >= 0:
			at = o.position
		case -o.position < size:
			at = size + o.position
		default:
			at = 0
		}
		for i, v := range o.values {
			e.insertChild(int(at)+i, newValue("", v))
		}
	}
	if o.sort != nil {
		changed = true
		kids := e.children()
		// Divergence: mongod's sort is not stable; ties keep their order here.
		slices.SortStableFunc(kids, func(a, b *elem) int { return o.sort.compare(a.value(), b.value(), c.coll) })
	}
	limit := o.slice
	if limit < 0 {
		limit = -limit
		if limit < 0 { // MinInt64
			limit = math.MaxInt64
		}
	}
	kids := e.children()
	if int64(len(kids)) > limit {
		changed = true
		if o.slice >= 0 {
			e.kids = kids[:limit]
		} else {
			e.kids = kids[int64(len(kids))-limit:]
		}
	}
	return changed
}

// compare orders two array members by the $sort modifier.
func (s *pushSort) compare(a, b bson.RawValue, coll *collation.Collator) int {
	if s.pattern == nil {
		c := bsonkit.CompareWith(a, b, coll)
		if s.desc {
			return -c
		}
		return c
	}
	for _, k := range s.pattern {
		c := bsonkit.CompareWith(sortField(a, k.path), sortField(b, k.path), coll)
		if k.desc {
			c = -c
		}
		if c != 0 {
			return c
		}
	}
	return 0
}

var nullValue = bson.RawValue{Type: bson.TypeNull}

// sortField extracts the value at path from an array member for $sort;
// non-documents and missing fields sort as null.
func sortField(v bson.RawValue, path []string) bson.RawValue {
	cur := v
	if cur.Type != bson.TypeEmbeddedDocument {
		return nullValue
	}
	for _, p := range path {
		switch cur.Type {
		case bson.TypeEmbeddedDocument:
			nv, err := bson.Raw(cur.Value).LookupErr(p)
			if err != nil {
				return nullValue
			}
			cur = nv
		case bson.TypeArray:
			i, ok := arrayIndex(p)
			if !ok {
				return nullValue
			}
			nv, err := bson.Raw(cur.Value).IndexErr(uint(i))
			if err != nil {
				return nullValue
			}
			cur = nv.Value()
		default:
			return nullValue
		}
	}
	return cur
}

// arrayValues returns the members of an array value.
func arrayValues(v bson.RawValue) []bson.RawValue {
	vals, err := bson.Raw(v.Value).Values()
	if err != nil {
		return nil
	}
	return vals
}

// integerOf converts a number to int64 as mongod's
// parseIntegerElementToLong does: integral doubles and decimals are
// accepted, fractions, NaN and out-of-range values are not. The errors are
// FailedToParse with mongod's messages, naming the element as "": callers
// that report their own message ignore the text.
func integerOf(v bson.RawValue) (int64, error) {
	return integerOfField("", v)
}

// integerOfField is integerOf with the field name used in the messages.
func integerOfField(field string, v bson.RawValue) (int64, error) {
	n, ok := numOf(v)
	if !ok {
		return 0, mongoerr.Newf(mongoerr.FailedToParse, "Expected a number in: %s", fieldString(field, v))
	}
	switch n.t {
	case bson.TypeDouble:
		f := n.f
		if math.IsNaN(f) {
			return 0, mongoerr.Newf(mongoerr.FailedToParse, "Expected an integer, but found NaN in: %s", fieldString(field, v))
		}
		if f >= 9223372036854775808.0 || f < -9223372036854775808.0 {
			return 0, mongoerr.Newf(mongoerr.FailedToParse, "Cannot represent as a 64-bit integer: %s", fieldString(field, v))
		}
		if f != math.Trunc(f) {
			return 0, mongoerr.Newf(mongoerr.FailedToParse, "Expected an integer: %s", fieldString(field, v))
		}
		return int64(f), nil
	case bson.TypeDecimal128:
		i, ok := decToInt64Exact(n.d)
		if !ok {
			return 0, mongoerr.Newf(mongoerr.FailedToParse, "Cannot represent as a 64-bit integer: %s", fieldString(field, v))
		}
		return i, nil
	}
	return n.i, nil
}
