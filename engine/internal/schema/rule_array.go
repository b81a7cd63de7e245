package schema

import (
	"sort"

	"go.mongodb.org/mongo-driver/v2/bson"

	"github.com/formworkdb/formwork/engine/internal/bsonkit"
)

func isArray(v value) bool { return v.present && v.v.Type == bson.TypeArray }

func elements(v value) []bson.RawValue { return bsonkit.Values(v.v.Value) }

// itemCountRule is minItems or maxItems.
type itemCountRule struct {
	kw  string
	arg bson.RawValue
	n   int64
	max bool
}

func (r *itemCountRule) match(v value) bool {
	if !isArray(v) {
		return true
	}
	l := int64(bsonkit.Len(v.v.Value))
	if r.max {
		return l <= r.n
	}
	return l >= r.n
}

func (r *itemCountRule) explain(v value) []any {
	return leafError(r.kw, bson.D{{Key: r.kw, Value: r.arg}}, "array did not match specified length", v.v,
		bson.E{Key: "numberOfItems", Value: int32(bsonkit.Len(v.v.Value))})
}

// uniqueRule is uniqueItems: true. Items compare as mongod's
// unordered-fields comparator does: documents equal whatever the order of
// their fields.
type uniqueRule struct{ arg bson.RawValue }

// firstDuplicate returns the index of the first item equal to an earlier
// one, or -1. It sorts normalized copies, so it takes O(n log n).
func firstDuplicate(items []bson.RawValue) int {
	norm := make([]bson.RawValue, len(items))
	idx := make([]int, len(items))
	for i, it := range items {
		norm[i], idx[i] = normalize(it, 0), i
	}
	sort.SliceStable(idx, func(a, b int) bool { return bsonkit.Compare(norm[idx[a]], norm[idx[b]]) < 0 })
	dup := -1
	for i := 1; i < len(idx); i++ {
		if bsonkit.Compare(norm[idx[i-1]], norm[idx[i]]) == 0 && (dup < 0 || idx[i] < dup) {
			dup = idx[i] // stable sort: idx[i] is the later of the pair
		}
	}
	return dup
}

func (r *uniqueRule) match(v value) bool { return !isArray(v) || firstDuplicate(elements(v)) < 0 }

func (r *uniqueRule) explain(v value) []any {
	items := elements(v)
	return leafError("uniqueItems", bson.D{{Key: "uniqueItems", Value: r.arg}}, "found a duplicate item", v.v,
		bson.E{Key: "duplicatedValue", Value: items[firstDuplicate(items)]})
}

// itemsRule is items with one schema (start 0) or additionalItems with a
// schema (start: the number of items schemas).
type itemsRule struct {
	kw    string
	arg   bson.RawValue
	sub   *node
	start int
}

func (r *itemsRule) firstFailure(v value) int {
	it := newFieldIter(v.v.Value)
	for i := 0; ; i++ {
		_, e, more := it.next()
		if !more {
			return -1
		}
		if i >= r.start && !r.sub.match(value{e, true}) {
			return i
		}
	}
}

func (r *itemsRule) match(v value) bool { return !isArray(v) || r.firstFailure(v) < 0 }

func (r *itemsRule) explain(v value) []any {
	i := r.firstFailure(v)
	reason := "At least one item did not match the sub-schema"
	if r.kw == "additionalItems" {
		reason = "At least one additional item did not match the sub-schema"
	}
	d := bson.D{{Key: "operatorName", Value: r.kw}}
	d = append(d, r.sub.annotations...)
	d = append(d, bson.E{Key: "reason", Value: reason}, bson.E{Key: "itemIndex", Value: int32(i)},
		bson.E{Key: "details", Value: r.sub.explainList(value{elements(v)[i], true})})
	return []any{d}
}

// itemsListRule is items with an array of schemas, one per position.
type itemsListRule struct {
	arg  bson.RawValue
	subs []*node
}

func (r *itemsListRule) match(v value) bool {
	if !isArray(v) {
		return true
	}
	for i, e := range elements(v) {
		if i < len(r.subs) && !r.subs[i].match(value{e, true}) {
			return false
		}
	}
	return true
}

func (r *itemsListRule) explain(v value) []any {
	var details bson.A
	for i, e := range elements(v) {
		if i < len(r.subs) && !r.subs[i].match(value{e, true}) {
			details = append(details, bson.D{{Key: "itemIndex", Value: int32(i)}, {Key: "details", Value: r.subs[i].explainList(value{e, true})}})
		}
	}
	return []any{bson.D{{Key: "operatorName", Value: "items"}, {Key: "details", Value: details}}}
}

// noMoreItemsRule is additionalItems: false after an items array.
type noMoreItemsRule struct {
	arg   bson.RawValue
	start int
}

func (r *noMoreItemsRule) match(v value) bool {
	return !isArray(v) || bsonkit.Len(v.v.Value) <= r.start
}

func (r *noMoreItemsRule) explain(v value) []any {
	extra := bson.A{}
	for _, e := range elements(v)[r.start:] {
		extra = append(extra, e)
	}
	return []any{bson.D{
		{Key: "operatorName", Value: "additionalItems"},
		{Key: "specifiedAs", Value: bson.D{{Key: "additionalItems", Value: r.arg}}},
		{Key: "reason", Value: "found additional items"},
		{Key: "additionalItems", Value: extra},
	}}
}
