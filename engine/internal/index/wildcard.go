package index

import (
	"sort"
	"strings"

	"go.mongodb.org/mongo-driver/v2/bson"

	"github.com/formworkdb/formwork/engine/internal/mongoerr"
)

// projection selects the paths a wildcard field indexes.
type projection struct {
	paths     []string // included (or excluded) dotted paths, _id aside
	exclusion bool
	withID    bool // index _id (explicitly included)
}

// parseWildcardProjectionOption checks the wildcardProjection option as
// validateIndexSpec does.
func parseWildcardProjectionOption(spec bson.Raw, v bson.RawValue) (*projection, *mongoerr.Error) {
	key, _ := spec.Lookup("key").DocumentOK()
	if pluginOf(mustElems(key)) != "wildcard" {
		return nil, mongoerr.New(mongoerr.BadValue, "The field 'wildcardProjection' is only allowed in 'wildcard' indexes")
	}
	if v.Type != bson.TypeEmbeddedDocument {
		return nil, mongoerr.Newf(mongoerr.TypeMismatch, "The field 'wildcardProjection' must be a non-empty object, but got %s", typeName(v.Type))
	}
	if key.Lookup("$**").Type == 0 {
		return nil, mongoerr.New(mongoerr.FailedToParse, "The field 'wildcardProjection' is only allowed when 'key' is {\"$**\": ±1} or {\"$**\": \"columnstore\"}")
	}
	if len(v.Value) <= 5 {
		return nil, mongoerr.New(mongoerr.FailedToParse, "The 'wildcardProjection' field can't be an empty object")
	}
	p, err := parseProjection(bson.Raw(v.Value))
	if err != nil {
		return nil, mongoerr.Newf(err.Code, "Failed to parse projection: wildcardProjection :: caused by :: %s", err.Msg)
	}
	return p, nil
}

// parseProjection flattens an inclusion or exclusion projection.
func parseProjection(doc bson.Raw) (*projection, *mongoerr.Error) {
	p := &projection{}
	var included, excluded []string
	var walk func(prefix string, d bson.Raw) *mongoerr.Error
	walk = func(prefix string, d bson.Raw) *mongoerr.Error {
		for _, e := range mustElems(d) {
			path := e.Key()
			if prefix != "" {
				path = prefix + "." + path
			}
			v := e.Value()
			if sub, ok := v.DocumentOK(); ok {
				if isOperatorDoc(sub) {
					return mongoerr.Newf(mongoerr.Code(31325), "Unknown projection operator or expression in wildcardProjection at %s", path)
				}
				if err := walk(path, sub); err != nil {
					return err
				}
				continue
			}
			var on bool
			switch {
			case v.Type == bson.TypeBoolean:
				on = v.Boolean()
			case isNumberType(v.Type):
				n, _ := number(v)
				on = n != 0
			default:
				return mongoerr.Newf(mongoerr.Code(51271), "Cannot use an expression in wildcardProjection at %s", path)
			}
			if path == "_id" {
				p.withID = on
				continue
			}
			if on {
				included = append(included, path)
			} else {
				excluded = append(excluded, path)
			}
		}
		return nil
	}
	if err := walk("", doc); err != nil {
		return nil, err
	}
	switch {
	case len(included) > 0 && len(excluded) > 0:
		return nil, mongoerr.Newf(mongoerr.Code(31253), "Cannot do exclusion on field %s in inclusion projection", excluded[0])
	case len(excluded) > 0:
		p.exclusion, p.paths = true, excluded
	default:
		p.paths = included
	}
	return p, nil
}

// compileProjection returns the projection of s's wildcard field: the
// wildcardProjection, or an inclusion of the prefix of "path.$**".
func compileProjection(s Spec) (*projection, error) {
	for _, f := range s.Fields {
		if !f.Wildcard {
			continue
		}
		if f.Path != "" {
			return &projection{paths: []string{f.Path}}, nil
		}
		if s.WildcardProjection != nil {
			p, err := parseProjection(s.WildcardProjection)
			if err != nil {
				return nil, err
			}
			return p, nil
		}
		return &projection{exclusion: true}, nil
	}
	return nil, nil
}

// Path states for a projection.
const (
	pathOut     = iota // not indexed
	pathPartial        // not indexed itself, but descendants may be
	pathIn             // indexed with all descendants
)

func (p *projection) state(path string) int {
	isID := path == "_id" || strings.HasPrefix(path, "_id.")
	if isID && p.withID {
		return pathIn
	}
	if p.exclusion {
		if isID || p.covers(path) {
			return pathOut
		}
		if p.under(path) {
			return pathPartial
		}
		return pathIn
	}
	if p.covers(path) {
		return pathIn
	}
	if p.under(path) {
		return pathPartial
	}
	return pathOut
}

// covers reports whether path equals or lies below a projected path.
func (p *projection) covers(path string) bool {
	for _, q := range p.paths {
		if path == q || strings.HasPrefix(path, q+".") {
			return true
		}
	}
	return false
}

// under reports whether a projected path lies below path.
func (p *projection) under(path string) bool {
	for _, q := range p.paths {
		if strings.HasPrefix(q, path+".") {
			return true
		}
	}
	return false
}

// pairs returns the wildcard (path, value) pairs of doc and the sorted
// paths whose values were arrays.
func (p *projection) pairs(doc bson.Raw) ([][2]bson.RawValue, []string) {
	w := &wildWalk{p: p, arrays: map[string]bool{}}
	w.doc("", doc, 0)
	var arrays []string
	for a := range w.arrays {
		arrays = append(arrays, a)
	}
	sort.Strings(arrays)
	return w.out, arrays
}

type wildWalk struct {
	p      *projection
	out    [][2]bson.RawValue
	arrays map[string]bool
}

func (w *wildWalk) emit(path string, v bson.RawValue) {
	w.out = append(w.out, [2]bson.RawValue{stringValue(path), v})
}

func (w *wildWalk) doc(prefix string, d bson.Raw, depth int) {
	if depth > 200 {
		return
	}
	for _, e := range mustElems(d) {
		path := e.Key()
		if prefix != "" {
			path = prefix + "." + path
		}
		st := w.p.state(path)
		if st == pathOut {
			continue
		}
		w.value(path, e.Value(), st, depth+1)
	}
}

// value indexes v found at path; elements of an array keep the array's
// path, and arrays nested in arrays are indexed as values.
func (w *wildWalk) value(path string, v bson.RawValue, st int, depth int) {
	switch v.Type {
	case bson.TypeEmbeddedDocument:
		if len(v.Value) <= 5 {
			if st == pathIn {
				w.emit(path, v)
			}
			return
		}
		w.doc(path, bson.Raw(v.Value), depth)
	case bson.TypeArray:
		elems, _ := bson.RawArray(v.Value).Values()
		if st == pathIn {
			w.arrays[path] = true
			if len(elems) == 0 {
				w.emit(path, bson.RawValue{Type: bson.TypeUndefined})
			}
		}
		for _, e := range elems {
			switch {
			case e.Type == bson.TypeEmbeddedDocument:
				w.value(path, e, st, depth+1)
			case st == pathIn:
				w.emit(path, e)
			}
		}
	default:
		if st == pathIn {
			w.emit(path, v)
		}
	}
}

func stringValue(s string) bson.RawValue {
	t, b, _ := bson.MarshalValue(s)
	return bson.RawValue{Type: t, Value: b}
}
