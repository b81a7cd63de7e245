package schema

import (
	"go.mongodb.org/mongo-driver/v2/bson"
)

// logicalRule is allOf, anyOf or oneOf over subschemas applied to the
// same value.
type logicalRule struct {
	kw   string
	subs []*node
	top  bool
}

func (r *logicalRule) matching(v value) []int32 {
	var out []int32
	for i, s := range r.subs {
		if s.match(v) {
			out = append(out, int32(i))
		}
	}
	return out
}

func (r *logicalRule) match(v value) bool {
	switch r.kw {
	case "allOf":
		for _, s := range r.subs {
			if !s.match(v) {
				return false
			}
		}
		return true
	case "anyOf":
		for _, s := range r.subs {
			if s.match(v) {
				return true
			}
		}
		return false
	}
	return len(r.matching(v)) == 1
}

func (r *logicalRule) explain(v value) []any {
	if r.kw == "oneOf" {
		if m := r.matching(v); len(m) > 1 {
			return []any{bson.D{{Key: "operatorName", Value: "oneOf"}, {Key: "reason", Value: "more than one subschema matched"}, {Key: "matchingSchemaIndexes", Value: m}}}
		}
	}
	failed := bson.A{}
	for i, s := range r.subs {
		if s.match(v) {
			continue
		}
		d := bson.D{{Key: "index", Value: int32(i)}}
		d = append(d, s.annotations...)
		failed = append(failed, append(d, bson.E{Key: "details", Value: s.explainDetails(v)}))
	}
	return []any{bson.D{{Key: "operatorName", Value: r.kw}, {Key: "schemasNotSatisfied", Value: failed}}}
}

// notRule is the not keyword.
type notRule struct{ sub *node }

func (r *notRule) match(v value) bool { return !r.sub.match(v) }

func (r *notRule) explain(value) []any {
	return []any{bson.D{{Key: "operatorName", Value: "not"}, {Key: "reason", Value: "child expression matched"}}}
}

// enumRule is the enum keyword. At the top level only its documents can
// match (mongod stores nothing else), compared with the whole document.
type enumRule struct {
	arg    bson.RawValue
	values []bson.RawValue
	top    bool
}

func (r *enumRule) match(v value) bool {
	if !v.present {
		return false
	}
	for _, e := range r.values {
		if equalUnordered(v.v, e) {
			return true
		}
	}
	return false
}

func (r *enumRule) explain(v value) []any {
	spec := bson.D{{Key: "enum", Value: r.arg}}
	if r.top && len(r.values) == 0 {
		return []any{bson.D{{Key: "operatorName", Value: "enum"}, {Key: "specifiedAs", Value: spec}, {Key: "reason", Value: "expression always evaluates to false"}}}
	}
	if !v.present {
		return nil
	}
	return leafError("enum", spec, "value was not found in enum", v.v)
}
