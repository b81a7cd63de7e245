package timeseries

import (
	"strings"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/x/bsonx/bsoncore"

	"github.com/formworkdb/formwork/engine/internal/bsonkit"
	"github.com/formworkdb/formwork/engine/internal/mongoerr"
)

// errIneligible is mongod's assertion 5916301: a partialFilterExpression
// predicate that cannot be translated to the buckets.
const errIneligible = mongoerr.Code(5916301)

// PartialFilter translates the partialFilterExpression of an index on the
// time series into the one of its index on the buckets, as mongod 7.0's
// BucketSpec::pushdownPredicate does with IneligiblePredicatePolicy::
// kError: the conjuncts that test only the metaField are renamed to the
// bucket's meta; the others map to control.min/max bounds a bucket
// holding a matching measurement always passes ($eq, $gt, $gte, $lt,
// $lte, $in, $exists: true on a measurement field or the time field,
// combined with $and and $or, meta predicates inside $or renamed).
// Anything else is Location5916301 with mongod's reason. metric reports
// whether any predicate is not on the metaField.
func (o *Options) PartialFilter(filter bson.Raw) (out bson.Raw, metric bool, err error) {
	var meta, rest [][]byte
	err = o.partialConjuncts(filter, &meta, &rest, 0)
	if err != nil {
		return nil, false, err
	}
	all := append(meta, rest...)
	if len(all) == 0 {
		return bson.Raw(elemDoc()), false, nil
	}
	return andOf(all), len(rest) > 0, nil
}

// elemDoc is the empty document.
func elemDoc() []byte {
	idx, out := bsoncore.AppendDocumentStart(nil)
	out, _ = bsoncore.AppendDocumentEnd(out, idx)
	return out
}

// partialConjuncts splits filter's conjuncts (top-level fields, $and
// flattened) into meta-only ones and translated others.
func (o *Options) partialConjuncts(filter []byte, meta, rest *[][]byte, depth int) error {
	if depth > maxPushdownDepth {
		return ineligible("can't handle this predicate", filter)
	}
	var err error
	bsonkit.ForEach(filter, func(k string, v bson.RawValue) bool {
		one := elem(k, v)
		if k == "$and" && v.Type == bson.TypeArray {
			for _, d := range bsonkit.Values(v.Value) {
				if d.Type != bson.TypeEmbeddedDocument {
					err = ineligible("can't handle this predicate", one)
					return false
				}
				if err = o.partialConjuncts(d.Value, meta, rest, depth+1); err != nil {
					return false
				}
			}
			return true
		}
		if t, ok := o.metaOnly(one, depth); ok {
			*meta = append(*meta, t)
			return true
		}
		var t []byte
		if t, err = o.partialPredicate(k, v, depth); err != nil {
			return false
		}
		*rest = append(*rest, t)
		return true
	})
	return err
}

// partialDoc translates every predicate of the filter document d (an
// $and or $or branch), meta ones renamed.
func (o *Options) partialDoc(d []byte, depth int) ([]byte, error) {
	var meta, rest [][]byte
	if err := o.partialConjuncts(d, &meta, &rest, depth); err != nil {
		return nil, err
	}
	all := append(meta, rest...)
	if len(all) == 0 {
		return elemDoc(), nil
	}
	return andOf(all), nil
}

// partialPredicate translates one non-meta predicate {k: v}.
func (o *Options) partialPredicate(k string, v bson.RawValue, depth int) ([]byte, error) {
	one := elem(k, v)
	switch {
	case k == "$or" && v.Type == bson.TypeArray:
		var branches [][]byte
		for _, d := range bsonkit.Values(v.Value) {
			if d.Type != bson.TypeEmbeddedDocument {
				return nil, ineligible("can't handle this predicate", one)
			}
			t, err := o.partialDoc(d.Value, depth+1)
			if err != nil {
				return nil, err
			}
			branches = append(branches, t)
		}
		return orOf(branches), nil
	case strings.HasPrefix(k, "$") || k == "":
		return nil, ineligible("can't handle this predicate", one)
	}
	if v.Type != bson.TypeEmbeddedDocument || !isOperatorDoc(v.Value) {
		if v.Type == bson.TypeRegex {
			return nil, ineligible("can't handle this predicate", one)
		}
		return o.partialCompare(k, "$eq", v)
	}
	var conj [][]byte
	var err error
	bsonkit.ForEach(v.Value, func(op string, arg bson.RawValue) bool {
		var t []byte
		switch op {
		case "$eq", "$gt", "$gte", "$lt", "$lte":
			t, err = o.partialCompare(k, op, arg)
		case "$exists":
			if on, ok := truthy(arg); !ok || !on {
				err = ineligible("can't handle this predicate", elem(k, bson.RawValue{Type: bson.TypeEmbeddedDocument, Value: elem(op, arg)}))
				return false
			}
			top, _, _ := strings.Cut(k, ".")
			t = andOf([][]byte{existsDoc("control.min." + top), existsDoc("control.max." + top)})
		case "$in":
			t, err = o.partialIn(k, arg)
		default:
			err = ineligible("can't handle this predicate", elem(k, bson.RawValue{Type: bson.TypeEmbeddedDocument, Value: elem(op, arg)}))
		}
		if err != nil {
			return false
		}
		conj = append(conj, t)
		return true
	})
	if err != nil {
		return nil, err
	}
	if len(conj) == 0 {
		return nil, ineligible("can't handle this predicate", one)
	}
	return andOf(conj), nil
}

// partialIn translates {k: {$in: [...]}} as the $or of its equalities.
func (o *Options) partialIn(k string, arg bson.RawValue) ([]byte, error) {
	pred := elem(k, bson.RawValue{Type: bson.TypeEmbeddedDocument, Value: elem("$in", arg)})
	if arg.Type != bson.TypeArray {
		return nil, ineligible("can't handle this predicate", pred)
	}
	var branches [][]byte
	for _, x := range bsonkit.Values(arg.Value) {
		switch x.Type {
		case bson.TypeRegex:
			return nil, ineligible("can't handle $regex predicate (inside $in predicate)", pred)
		case bson.TypeNull:
			return nil, ineligible("can't handle {$eq: null} predicate (inside $in predicate)", pred)
		}
		t, err := o.partialCompare(k, "$eq", x)
		if err != nil {
			return nil, err
		}
		branches = append(branches, t)
	}
	if len(branches) == 0 {
		// {$in: []} matches nothing; so does an empty $in on the bounds.
		return elem("control.min."+k, bson.RawValue{Type: bson.TypeEmbeddedDocument, Value: elem("$in", arg)}), nil
	}
	return orOf(branches), nil
}

// partialCompare translates {k: {op: arg}} with mongod's refusals
// (checkComparisonPredicateErrors).
func (o *Options) partialCompare(k, op string, arg bson.RawValue) ([]byte, error) {
	pred := elem(k, bson.RawValue{Type: bson.TypeEmbeddedDocument, Value: elem(op, arg)})
	switch arg.Type {
	case bson.TypeEmbeddedDocument, bson.TypeArray:
		return nil, ineligible("operand can't be an object or array", pred)
	case bson.TypeNull:
		return nil, ineligible("can't handle {$eq: null}", pred)
	case bson.TypeRegex:
		return nil, ineligible("can't handle this predicate", pred)
	}
	if k == o.TimeField {
		if arg.Type != bson.TypeDateTime {
			return nil, ineligible("This predicate will never be true, because the time field always contains a Date", pred)
		}
		var conj [][]byte
		o.timeBound(op, arg.DateTime(), &conj)
		return andOf(conj), nil
	}
	if top, _, dotted := strings.Cut(k, "."); dotted {
		// Divergence: mongod bounds control.min/max.<a.b>; the engine's
		// bounds of an embedded document are whole values (see Add), so
		// a predicate below a top-level measurement field only requires
		// that field in the bucket. Tested by TestPartialFilter.
		return existsDoc("control.min." + top), nil
	}
	minF, maxF := "control.min."+k, "control.max."+k
	cmp := func(field, c string) []byte {
		return elem(field, bson.RawValue{Type: bson.TypeEmbeddedDocument, Value: elem(c, arg)})
	}
	var preds [][]byte
	switch op {
	case "$eq":
		preds = [][]byte{cmp(minF, "$lte"), cmp(maxF, "$gte")}
	case "$gt", "$gte":
		preds = [][]byte{cmp(maxF, op)}
	default:
		preds = [][]byte{cmp(minF, op)}
	}
	// A bucket whose field holds arrays passes: its whole-value bounds
	// say nothing of the elements (see Add).
	typeArr, _ := bson.Marshal(bson.D{{Key: minF, Value: bson.D{{Key: "$type", Value: "array"}}}})
	return orOf([][]byte{andOf(preds), typeArr}), nil
}

// orOf builds {$or: [b…]}, or b itself when there is one; a branch that
// is itself an $or is spliced in.
func orOf(branches [][]byte) []byte {
	if len(branches) == 1 {
		return branches[0]
	}
	var flat [][]byte
	for _, b := range branches {
		inner, ok := soleOr(b)
		if !ok {
			flat = append(flat, b)
			continue
		}
		for _, x := range bsonkit.Values(inner) {
			flat = append(flat, x.Value)
		}
	}
	aidx, arr := bsoncore.AppendArrayStart(nil)
	for i, b := range flat {
		arr = bsoncore.AppendDocumentElement(arr, itoa(i), b)
	}
	arr, _ = bsoncore.AppendArrayEnd(arr, aidx)
	idx, out := bsoncore.AppendDocumentStart(nil)
	out = bsoncore.AppendArrayElement(out, "$or", arr)
	out, _ = bsoncore.AppendDocumentEnd(out, idx)
	return out
}

// existsDoc is {path: {$exists: true}}.
func existsDoc(path string) []byte {
	return elem(path, bson.RawValue{Type: bson.TypeEmbeddedDocument, Value: elem("$exists", bson.RawValue{Type: bson.TypeBoolean, Value: []byte{1}})})
}

// isOperatorDoc reports whether d's first field is an operator.
func isOperatorDoc(d []byte) bool {
	op := false
	bsonkit.ForEach(d, func(k string, _ bson.RawValue) bool {
		op = strings.HasPrefix(k, "$")
		return false
	})
	return op
}

// truthy reads a boolean or number argument.
func truthy(v bson.RawValue) (bool, bool) {
	if v.Type == bson.TypeBoolean {
		return v.Boolean(), true
	}
	if f, ok := bsonkit.Float64(v); ok {
		return f != 0, true
	}
	return false, false
}

// ineligible is mongod's error for a predicate the translation refuses.
func ineligible(reason string, pred []byte) error {
	return mongoerr.Newf(errIneligible, "Error translating non-metadata time-series predicate to operate on buckets: %s: %s", reason, fmtKey(pred))
}

// soleOr returns the array of b when b is {$or: [documents…]} alone.
func soleOr(b []byte) ([]byte, bool) {
	var arr []byte
	n := 0
	bsonkit.ForEach(b, func(k string, v bson.RawValue) bool {
		n++
		if k == "$or" && v.Type == bson.TypeArray {
			arr = v.Value
		}
		return n == 1
	})
	if n != 1 || arr == nil {
		return nil, false
	}
	for _, x := range bsonkit.Values(arr) {
		if x.Type != bson.TypeEmbeddedDocument {
			return nil, false
		}
	}
	return arr, true
}
