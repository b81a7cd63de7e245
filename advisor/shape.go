package advisor

import (
	"strings"

	"go.mongodb.org/mongo-driver/v2/bson"
)

// maxShapeDepth bounds the recursion of normalize; deeper values become
// "?deep".
const maxShapeDepth = 20

// normalize replaces the values of a filter or update with their type
// ("?string", "?int") so that operations differing only in values share
// a shape. Operators and field names stay.
func normalize(v any, depth int) any {
	if depth > maxShapeDepth {
		return "?deep"
	}
	switch x := v.(type) {
	case bson.D:
		out := make(bson.D, 0, len(x))
		for _, e := range x {
			if e.Key == "$in" || e.Key == "$nin" || e.Key == "$all" {
				out = append(out, bson.E{Key: e.Key, Value: "?array"})
				continue
			}
			out = append(out, bson.E{Key: e.Key, Value: normalize(e.Value, depth+1)})
		}
		return out
	case bson.A:
		out := make(bson.A, 0, len(x))
		for _, e := range x {
			out = append(out, normalize(e, depth+1))
		}
		return out
	case bson.Regex:
		return "?regex"
	}
	return "?" + typeName(v)
}

// typeName names the BSON type of a decoded value as $type does.
func typeName(v any) string {
	switch v.(type) {
	case string:
		return "string"
	case int32:
		return "int"
	case int64:
		return "long"
	case float64:
		return "double"
	case bool:
		return "bool"
	case nil:
		return "null"
	case bson.DateTime:
		return "date"
	case bson.ObjectID:
		return "objectId"
	case bson.Decimal128:
		return "decimal"
	case bson.Binary:
		return "binData"
	case bson.Timestamp:
		return "timestamp"
	}
	return "value"
}

// normalizePipeline keeps each stage as written except the values inside
// $match stages and the counts of $skip and $limit.
func normalizePipeline(stages []bson.D) bson.A {
	out := make(bson.A, 0, len(stages))
	for _, st := range stages {
		if len(st) != 1 {
			out = append(out, "?stage")
			continue
		}
		switch st[0].Key {
		case "$match":
			out = append(out, bson.D{{Key: "$match", Value: normalize(st[0].Value, 0)}})
		case "$skip", "$limit":
			out = append(out, bson.D{{Key: st[0].Key, Value: "?n"}})
		default:
			out = append(out, st)
		}
	}
	return out
}

// shapeText prints a normalized shape compactly as relaxed Extended JSON.
func shapeText(v any) string {
	b, err := bson.MarshalExtJSON(bson.D{{Key: "s", Value: v}}, false, false)
	if err != nil {
		return "?"
	}
	s := string(b)
	s = strings.TrimPrefix(s, `{"s":`)
	return strings.TrimSuffix(s, "}")
}

// filterFields is a filter split by the ESR rule: fields compared for
// equality, and fields with a range (or $regex, $ne, $nin, $exists…).
type filterFields struct {
	Eq, Range []string
	// Regexes are the regular expressions applied to each field.
	Regexes map[string][]bson.Regex
	// OK is false when the filter has a clause the split cannot place
	// ($or, $nor, $expr, $where, $text).
	OK bool
}

// splitFilter splits filter into equality and range fields.
func splitFilter(filter bson.D) filterFields {
	ff := filterFields{OK: true, Regexes: map[string][]bson.Regex{}}
	ff.add(filter, 0)
	return ff
}

func (ff *filterFields) add(filter bson.D, depth int) {
	if depth > maxShapeDepth {
		ff.OK = false
		return
	}
	for _, e := range filter {
		switch {
		case e.Key == "$and":
			arr, _ := e.Value.(bson.A)
			for _, c := range arr {
				if cd, ok := c.(bson.D); ok {
					ff.add(cd, depth+1)
				}
			}
		case strings.HasPrefix(e.Key, "$"):
			if e.Key != "$comment" {
				ff.OK = false
			}
		default:
			ff.field(e.Key, e.Value)
		}
	}
}

// field places one field's condition.
func (ff *filterFields) field(path string, v any) {
	switch x := v.(type) {
	case bson.Regex:
		ff.Regexes[path] = append(ff.Regexes[path], x)
		ff.Range = appendNew(ff.Range, path)
		return
	case bson.D:
		if len(x) > 0 && strings.HasPrefix(x[0].Key, "$") {
			eq := true
			for _, op := range x {
				switch op.Key {
				case "$eq", "$in":
				case "$regex":
					eq = false
					ff.Regexes[path] = append(ff.Regexes[path], regexOf(x))
				default:
					eq = false
				}
			}
			if eq {
				ff.Eq = appendNew(ff.Eq, path)
			} else {
				ff.Range = appendNew(ff.Range, path)
			}
			return
		}
	}
	ff.Eq = appendNew(ff.Eq, path)
}

// regexOf reads {$regex, $options} into a bson.Regex.
func regexOf(ops bson.D) bson.Regex {
	var r bson.Regex
	for _, op := range ops {
		switch op.Key {
		case "$regex":
			switch p := op.Value.(type) {
			case string:
				r.Pattern = p
			case bson.Regex:
				r = p
			}
		case "$options":
			if s, ok := op.Value.(string); ok {
				r.Options += s
			}
		}
	}
	return r
}

// appendNew appends s unless xs holds it.
func appendNew(xs []string, s string) []string {
	for _, x := range xs {
		if x == s {
			return xs
		}
	}
	return append(xs, s)
}

// esrKeys returns the index for a query by the ESR rule: equality fields,
// then the sort fields in the sort's directions, then range fields.
func esrKeys(ff filterFields, sortSpec bson.D) []Key {
	var keys []Key
	seen := map[string]bool{}
	add := func(f string, dir any) {
		if !seen[f] && len(keys) < 32 {
			seen[f] = true
			keys = append(keys, Key{Field: f, Dir: dir})
		}
	}
	for _, f := range ff.Eq {
		add(f, 1)
	}
	for _, e := range sortSpec {
		dir := 1
		if asNumber(e.Value) < 0 {
			dir = -1
		}
		add(e.Key, dir)
	}
	for _, f := range ff.Range {
		add(f, 1)
	}
	return keys
}

// asNumber reads a decoded number; anything else is 0.
func asNumber(v any) float64 {
	switch x := v.(type) {
	case int32:
		return float64(x)
	case int64:
		return float64(x)
	case float64:
		return x
	case int:
		return float64(x)
	}
	return 0
}
