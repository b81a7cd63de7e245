package versioning

import (
	"strings"

	"go.mongodb.org/mongo-driver/v2/bson"
)

// maxPathDepth bounds the dotted paths the declarative upgrades follow.
const maxPathDepth = 32

// get returns the value at dotted path in d, nil when absent.
func get(d bson.D, path string) any {
	v, _ := lookup(d, path)
	return v
}

// lookup returns the value at dotted path in d and whether it is there.
func lookup(d bson.D, path string) (any, bool) {
	parts := strings.Split(path, ".")
	if len(parts) > maxPathDepth {
		return nil, false
	}
	var cur any = d
	for _, p := range parts {
		doc, ok := cur.(bson.D)
		if !ok {
			return nil, false
		}
		found := false
		for _, e := range doc {
			if e.Key == p {
				cur, found = e.Value, true
				break
			}
		}
		if !found {
			return nil, false
		}
	}
	return cur, true
}

// set returns d with v at dotted path, creating sub-documents (and
// replacing a non-document in the way) as $set does.
func set(d bson.D, path string, v any) bson.D {
	parts := strings.Split(path, ".")
	if len(parts) > maxPathDepth {
		return d
	}
	return setParts(d, parts, v)
}

// setParts is set on split path parts.
func setParts(d bson.D, parts []string, v any) bson.D {
	out := append(bson.D(nil), d...)
	for i, e := range out {
		if e.Key != parts[0] {
			continue
		}
		if len(parts) == 1 {
			out[i].Value = v
			return out
		}
		sub, _ := e.Value.(bson.D)
		out[i].Value = setParts(sub, parts[1:], v)
		return out
	}
	if len(parts) == 1 {
		return append(out, bson.E{Key: parts[0], Value: v})
	}
	return append(out, bson.E{Key: parts[0], Value: setParts(nil, parts[1:], v)})
}

// unset returns d without dotted path.
func unset(d bson.D, path string) bson.D {
	parts := strings.Split(path, ".")
	if len(parts) > maxPathDepth {
		return d
	}
	return unsetParts(d, parts)
}

// unsetParts is unset on split path parts.
func unsetParts(d bson.D, parts []string) bson.D {
	out := make(bson.D, 0, len(d))
	for _, e := range d {
		if e.Key != parts[0] {
			out = append(out, e)
			continue
		}
		if len(parts) == 1 {
			continue
		}
		if sub, ok := e.Value.(bson.D); ok {
			e.Value = unsetParts(sub, parts[1:])
		}
		out = append(out, e)
	}
	return out
}
