package timeseries

import (
	"encoding/binary"
	"math"
	"strings"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/x/bsonx/bsoncore"

	"github.com/formworkdb/formwork/engine/internal/bsonkit"
)

// maxPushdownDepth bounds the $and nesting the translation follows.
const maxPushdownDepth = 32

// BucketFilter translates a filter on measurements into a filter on
// buckets that every bucket holding a matching measurement passes (a
// superset: the measurement filter still runs after unpacking), as
// mongod's BucketSpec::createPredicatesOnBucketLevelField does for the
// meta and time fields:
//
//   - a predicate on the metaField (or a path below it) applies to the
//     bucket's meta unchanged but renamed, as does $or/$nor made only of
//     such predicates;
//
//   - $gt/$gte/$lt/$lte/$eq (or equality) on the timeField against a date
//     bounds control.min and control.max of the time field, including
//     control.min > date - bucketMaxSpanSeconds so that the {meta, time}
//     index bounds the scan on both sides; without a metaField, also
//     the buckets' _id (idBound), as mongod bounds its clustered _id;
//
//   - $gt/$gte/$lt/$lte/$eq on a top-level measurement field against a
//     number, string or date bounds that field's control.min/max, or
//     lets the bucket pass when the field holds arrays there.
//
// Other predicates are dropped. It returns nil when nothing translates.
func (o *Options) BucketFilter(filter bson.Raw) bson.Raw {
	var conj [][]byte
	o.translate(filter, &conj, 0)
	if len(conj) == 0 {
		return nil
	}
	return andOf(conj)
}

// andOf builds {$and: [c…]}, or c itself when there is one.
func andOf(conj [][]byte) bson.Raw {
	if len(conj) == 1 {
		return bson.Raw(conj[0])
	}
	aidx, arr := bsoncore.AppendArrayStart(nil)
	for i, c := range conj {
		arr = bsoncore.AppendDocumentElement(arr, itoa(i), c)
	}
	arr, _ = bsoncore.AppendArrayEnd(arr, aidx)
	idx, out := bsoncore.AppendDocumentStart(nil)
	out = bsoncore.AppendArrayElement(out, "$and", arr)
	out, _ = bsoncore.AppendDocumentEnd(out, idx)
	return out
}

// itoa is strconv.Itoa for array indexes.
func itoa(i int) string {
	if i < 10 {
		return string(rune('0' + i))
	}
	return itoa(i/10) + string(rune('0'+i%10))
}

// translate adds the bucket-level predicates of filter to conj.
func (o *Options) translate(filter []byte, conj *[][]byte, depth int) {
	if depth > maxPushdownDepth {
		return
	}
	bsonkit.ForEach(filter, func(k string, v bson.RawValue) bool {
		switch {
		case k == "$and" && v.Type == bson.TypeArray:
			for _, d := range bsonkit.Values(v.Value) {
				if d.Type == bson.TypeEmbeddedDocument {
					o.translate(d.Value, conj, depth+1)
				}
			}
		case (k == "$or" || k == "$nor") && v.Type == bson.TypeArray:
			if t, ok := o.metaOnlyLogical(k, v, depth+1); ok {
				*conj = append(*conj, t)
			}
		case o.isMetaPath(k):
			*conj = append(*conj, elem(o.metaRename(k), v))
		case k == o.TimeField:
			o.timePredicates(v, conj)
		case k != "" && k[0] != '$' && !strings.Contains(k, "."):
			o.metricPredicates(k, v, conj)
		}
		return true
	})
}

// metricPredicates adds bucket-level bounds for a comparison on a
// measurement field against a number, string or date. A bucket holds one
// canonical type per field (I2), so its control bounds bracket every
// value of that type; a bucket whose field holds arrays passes whatever
// its bounds, since an element may match.
func (o *Options) metricPredicates(k string, v bson.RawValue, conj *[][]byte) {
	if v.Type != bson.TypeEmbeddedDocument {
		o.metricBound(k, "$eq", v, conj)
		return
	}
	bsonkit.ForEach(v.Value, func(op string, arg bson.RawValue) bool {
		o.metricBound(k, op, arg, conj)
		return true
	})
}

// metricBound adds the bucket-level form of {k: {op: arg}}.
func (o *Options) metricBound(k, op string, arg bson.RawValue, conj *[][]byte) {
	switch arg.Type {
	case bson.TypeDouble, bson.TypeInt32, bson.TypeInt64, bson.TypeDecimal128, bson.TypeString, bson.TypeDateTime:
	default:
		return
	}
	minF, maxF := "control.min."+k, "control.max."+k
	cmp := func(field, c string) []byte {
		idx, inner := bsoncore.AppendDocumentStart(nil)
		inner = appendValue(inner, c, arg)
		inner, _ = bsoncore.AppendDocumentEnd(inner, idx)
		return elem(field, bson.RawValue{Type: bson.TypeEmbeddedDocument, Value: inner})
	}
	var preds [][]byte
	switch op {
	case "$eq":
		preds = [][]byte{cmp(minF, "$lte"), cmp(maxF, "$gte")}
	case "$gt", "$gte":
		preds = [][]byte{cmp(maxF, op)}
	case "$lt", "$lte":
		preds = [][]byte{cmp(minF, op)}
	default:
		return
	}
	typeArr, _ := bson.Marshal(bson.D{{Key: minF, Value: bson.D{{Key: "$type", Value: "array"}}}})
	aidx, arr := bsoncore.AppendArrayStart(nil)
	arr = bsoncore.AppendDocumentElement(arr, "0", andOf(preds))
	arr = bsoncore.AppendDocumentElement(arr, "1", typeArr)
	arr, _ = bsoncore.AppendArrayEnd(arr, aidx)
	idx, out := bsoncore.AppendDocumentStart(nil)
	out = bsoncore.AppendArrayElement(out, "$or", arr)
	out, _ = bsoncore.AppendDocumentEnd(out, idx)
	*conj = append(*conj, out)
}

// isMetaPath reports whether k is the metaField or a path below it.
func (o *Options) isMetaPath(k string) bool {
	return o.MetaField != "" && (k == o.MetaField || strings.HasPrefix(k, o.MetaField+"."))
}

// metaRename renames a meta path k to the bucket's meta.
func (o *Options) metaRename(k string) string { return "meta" + k[len(o.MetaField):] }

// metaOnlyLogical translates {$or|$nor: [...]} whose branches test only
// the meta field; ok is false otherwise.
func (o *Options) metaOnlyLogical(op string, v bson.RawValue, depth int) ([]byte, bool) {
	if depth > maxPushdownDepth {
		return nil, false
	}
	aidx, arr := bsoncore.AppendArrayStart(nil)
	for i, d := range bsonkit.Values(v.Value) {
		if d.Type != bson.TypeEmbeddedDocument {
			return nil, false
		}
		t, ok := o.metaOnly(d.Value, depth+1)
		if !ok {
			return nil, false
		}
		arr = bsoncore.AppendDocumentElement(arr, itoa(i), t)
	}
	arr, _ = bsoncore.AppendArrayEnd(arr, aidx)
	idx, out := bsoncore.AppendDocumentStart(nil)
	out = bsoncore.AppendArrayElement(out, op, arr)
	out, _ = bsoncore.AppendDocumentEnd(out, idx)
	return out, true
}

// metaOnly renames a filter document that tests only the meta field.
func (o *Options) metaOnly(d []byte, depth int) ([]byte, bool) {
	idx, out := bsoncore.AppendDocumentStart(nil)
	ok := true
	bsonkit.ForEach(d, func(k string, v bson.RawValue) bool {
		switch {
		case (k == "$and" || k == "$or" || k == "$nor") && v.Type == bson.TypeArray:
			t, good := o.metaOnlyLogical(k, v, depth)
			if !good {
				ok = false
				return false
			}
			out = append(out, t[4:len(t)-1]...)
		case o.isMetaPath(k):
			out = appendValue(out, o.metaRename(k), v)
		default:
			ok = false
		}
		return ok
	})
	if !ok {
		return nil, false
	}
	out, _ = bsoncore.AppendDocumentEnd(out, idx)
	return out, true
}

// elem builds the one-field document {k: v}.
func elem(k string, v bson.RawValue) []byte {
	idx, out := bsoncore.AppendDocumentStart(nil)
	out = appendValue(out, k, v)
	out, _ = bsoncore.AppendDocumentEnd(out, idx)
	return out
}

// timePredicates adds the bucket-level bounds of a time field predicate.
func (o *Options) timePredicates(v bson.RawValue, conj *[][]byte) {
	if v.Type == bson.TypeDateTime {
		o.timeBound("$eq", v.DateTime(), conj)
		return
	}
	if v.Type != bson.TypeEmbeddedDocument {
		return
	}
	bsonkit.ForEach(v.Value, func(op string, arg bson.RawValue) bool {
		if arg.Type == bson.TypeDateTime {
			o.timeBound(op, arg.DateTime(), conj)
		}
		return true
	})
}

// timeBound adds the bucket-level bounds of {time: {op: d}}.
func (o *Options) timeBound(op string, d int64, conj *[][]byte) {
	minF, maxF := "control.min."+o.TimeField, "control.max."+o.TimeField
	span := o.MaxSpan * 1000
	lowOK := d-span < d // no underflow
	add := func(field, cmp string, at int64) {
		idx, inner := bsoncore.AppendDocumentStart(nil)
		inner = bsoncore.AppendDateTimeElement(inner, cmp, at)
		inner, _ = bsoncore.AppendDocumentEnd(inner, idx)
		oidx, out := bsoncore.AppendDocumentStart(nil)
		out = bsoncore.AppendDocumentElement(out, field, inner)
		out, _ = bsoncore.AppendDocumentEnd(out, oidx)
		*conj = append(*conj, out)
	}
	switch op {
	case "$eq":
		add(minF, "$lte", d)
		add(maxF, "$gte", d)
		if lowOK {
			add(minF, "$gt", d-span)
			o.idBound("$gte", floorDiv(d-span, 1000), conj)
		}
		o.idBound("$lt", floorDiv(d, 1000)+1, conj)
	case "$gt", "$gte":
		add(maxF, op, d)
		if lowOK {
			add(minF, "$gt", d-span)
			o.idBound("$gte", floorDiv(d-span, 1000), conj)
		}
	case "$lt", "$lte":
		add(minF, op, d)
		o.idBound("$lt", floorDiv(d, 1000)+1, conj)
	}
}

// idBound adds, for a time series without metaField, a bound on the
// buckets' _id, whose ObjectId timestamp is the bucket's minimum time in
// seconds: the _id index then bounds a time range scan, as mongod's
// clustered buckets do. cmp is $gte or $lt against the first ObjectId of
// second sec; seconds outside the ObjectId range add nothing.
func (o *Options) idBound(cmp string, sec int64, conj *[][]byte) {
	if o.MetaField != "" || sec < 0 || sec > math.MaxUint32 {
		return
	}
	var id bson.ObjectID
	binary.BigEndian.PutUint32(id[:4], uint32(sec))
	idx, inner := bsoncore.AppendDocumentStart(nil)
	inner = bsoncore.AppendObjectIDElement(inner, cmp, id)
	inner, _ = bsoncore.AppendDocumentEnd(inner, idx)
	*conj = append(*conj, elem("_id", bson.RawValue{Type: bson.TypeEmbeddedDocument, Value: inner}))
}
