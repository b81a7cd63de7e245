package schema

import (
	"go.mongodb.org/mongo-driver/v2/bson"

	"github.com/formworkdb/formwork/engine/internal/bsonkit"
	"github.com/formworkdb/formwork/engine/internal/regex"
)

func isObject(v value) bool { return v.present && v.v.Type == bson.TypeEmbeddedDocument }

// field returns the property name of the object v.
//
// Divergence: a property name with a dot ("a.b" in properties, required
// or dependencies) names the field "a.b" here; mongod reads it as a path
// into the subdocument a (TestDottedPropertyNames).
func field(v value, name string) value {
	f, ok := bsonkit.Field(v.v.Value, name)
	return value{f, ok}
}

// property is one entry of properties.
type property struct {
	name     string
	sub      *node
	required bool
}

// propertiesRule is the properties keyword: each named property that
// exists (or is required) matches its schema.
type propertiesRule struct {
	props []property
	index map[string]int // property name → position in props
	// required lists the positions of required properties.
	required []int
}

// newPropertiesRule indexes props for one pass over an object.
func newPropertiesRule(props []property) *propertiesRule {
	r := &propertiesRule{props: props, index: make(map[string]int, len(props))}
	for i, p := range props {
		r.index[p.name] = i
		if p.required {
			r.required = append(r.required, i)
		}
	}
	return r
}

func (p property) ok(obj value) bool {
	f := field(obj, p.name)
	if !f.present && !p.required {
		return true
	}
	return p.sub.match(f)
}

// match reads the object once: each field named in properties matches
// its schema, then each required property that is missing matches its
// schema as a missing value.
func (r *propertiesRule) match(v value) bool {
	if !isObject(v) {
		return true
	}
	seen := 0
	var seenReq uint64 // bit i: required[i] present (first 64)
	for it := newFieldIter(v.v.Value); ; {
		key, e, more := it.next()
		if !more {
			break
		}
		i, named := r.index[string(key)]
		if !named {
			continue
		}
		if !r.props[i].sub.match(value{e, true}) {
			return false
		}
		if r.props[i].required {
			for j, ri := range r.required {
				if ri == i && j < 64 {
					seenReq |= 1 << j
				}
			}
			seen++
		}
	}
	if seen == len(r.required) {
		return true
	}
	for j, i := range r.required {
		if j < 64 && seenReq&(1<<j) != 0 {
			continue
		}
		if !r.props[i].ok(v) {
			return false
		}
	}
	return true
}

func (r *propertiesRule) explain(v value) []any {
	var failed bson.A
	for _, p := range r.props {
		if p.ok(v) {
			continue
		}
		details := p.sub.explainList(field(v, p.name))
		if len(details) == 0 {
			continue // a missing required property: required reports it
		}
		d := bson.D{{Key: "propertyName", Value: p.name}}
		d = append(d, p.sub.annotations...)
		failed = append(failed, append(d, bson.E{Key: "details", Value: details}))
	}
	if len(failed) == 0 {
		return nil
	}
	return []any{bson.D{{Key: "operatorName", Value: "properties"}, {Key: "propertiesNotSatisfied", Value: failed}}}
}

// patternProp is one entry of patternProperties.
type patternProp struct {
	raw string
	re  *regex.Regexp
	sub *node
}

func (p patternProp) matches(name string) bool {
	ok, err := p.re.MatchString(name)
	return ok && err == nil
}

// allowedRule is patternProperties and additionalProperties together:
// a property whose name matches a pattern matches that pattern's schema;
// one neither named in properties nor matching a pattern is additional,
// allowed or not, or matched against a schema.
type allowedRule struct {
	props         map[string]bool
	patterns      []patternProp
	allowOthers   bool
	others        *node // additionalProperties as a schema
	additionalArg bson.RawValue
}

func (r *allowedRule) match(v value) bool {
	if !isObject(v) {
		return true
	}
	ok := true
	bsonkit.ForEach(v.v.Value, func(name string, e bson.RawValue) bool {
		matched := false
		for _, p := range r.patterns {
			if p.matches(name) {
				matched = true
				if !p.sub.match(value{e, true}) {
					ok = false
					return false
				}
			}
		}
		if matched || r.props[name] {
			return true
		}
		if r.others != nil {
			ok = r.others.match(value{e, true})
		} else {
			ok = r.allowOthers
		}
		return ok
	})
	return ok
}

func (r *allowedRule) explain(v value) []any {
	var out []any
	var additional bson.A
	var failing string
	haveFailing := false
	bsonkit.ForEach(v.v.Value, func(name string, e bson.RawValue) bool {
		if r.props[name] {
			return true
		}
		for _, p := range r.patterns {
			if p.matches(name) {
				return true
			}
		}
		additional = append(additional, name)
		if r.others != nil && !haveFailing && !r.others.match(value{e, true}) {
			failing, haveFailing = name, true
		}
		return true
	})
	switch {
	case r.others == nil && !r.allowOthers && len(additional) > 0:
		out = append(out, bson.D{
			{Key: "operatorName", Value: "additionalProperties"},
			{Key: "specifiedAs", Value: bson.D{{Key: "additionalProperties", Value: r.additionalArg}}},
			{Key: "additionalProperties", Value: additional},
		})
	case haveFailing:
		d := bson.D{{Key: "operatorName", Value: "additionalProperties"}}
		d = append(d, r.others.annotations...)
		d = append(d, bson.E{Key: "reason", Value: "at least one additional property did not match the subschema"},
			bson.E{Key: "failingProperty", Value: failing},
			bson.E{Key: "details", Value: r.others.explainList(field(v, failing))})
		out = append(out, d)
	}
	var pats bson.A
	for _, p := range r.patterns {
		bsonkit.ForEach(v.v.Value, func(name string, e bson.RawValue) bool {
			if !p.matches(name) || p.sub.match(value{e, true}) {
				return true
			}
			d := bson.D{{Key: "propertyName", Value: name}}
			d = append(d, p.sub.annotations...)
			pats = append(pats, append(d, bson.E{Key: "regexMatched", Value: p.raw},
				bson.E{Key: "details", Value: p.sub.explainList(value{e, true})}))
			return false
		})
	}
	if len(pats) > 0 {
		out = append(out, bson.D{{Key: "operatorName", Value: "patternProperties"}, {Key: "details", Value: pats}})
	}
	return out
}

// requiredRule is the required keyword; names are sorted, as mongod
// reports them.
type requiredRule struct {
	arg   bson.RawValue
	names []string
	set   map[string]bool
}

func (r *requiredRule) missing(v value) bson.A {
	var out bson.A
	for _, n := range r.names {
		if !field(v, n).present {
			out = append(out, n)
		}
	}
	return out
}

// match counts the object's fields that are required names: one pass,
// duplicate field names aside.
func (r *requiredRule) match(v value) bool {
	if !isObject(v) {
		return true
	}
	n := 0
	for it := newFieldIter(v.v.Value); n < len(r.names); {
		key, _, more := it.next()
		if !more {
			break
		}
		if r.set[string(key)] {
			n++
		}
	}
	return n >= len(r.names) && len(r.missing(v)) == 0
}

func (r *requiredRule) explain(v value) []any {
	return []any{bson.D{
		{Key: "operatorName", Value: "required"},
		{Key: "specifiedAs", Value: bson.D{{Key: "required", Value: r.arg}}},
		{Key: "missingProperties", Value: r.missing(v)},
	}}
}

// propCountRule is minProperties or maxProperties.
type propCountRule struct {
	kw  string
	arg bson.RawValue
	n   int64
	max bool
}

func (r *propCountRule) match(v value) bool {
	if !isObject(v) {
		return true
	}
	l := int64(bsonkit.Len(v.v.Value))
	if r.max {
		return l <= r.n
	}
	return l >= r.n
}

func (r *propCountRule) explain(v value) []any {
	return []any{bson.D{
		{Key: "operatorName", Value: r.kw},
		{Key: "specifiedAs", Value: bson.D{{Key: r.kw, Value: r.arg}}},
		{Key: "reason", Value: "specified number of properties was not satisfied"},
		{Key: "numberOfProperties", Value: int32(bsonkit.Len(v.v.Value))},
	}}
}

// dependency is one entry of dependencies: properties that must exist, or
// a schema the object must match, when property name exists.
type dependency struct {
	name  string
	props []string
	sub   *node
}

func (d dependency) missing(v value) bson.A {
	var out bson.A
	for _, p := range d.props {
		if !field(v, p).present {
			out = append(out, p)
		}
	}
	return out
}

func (d dependency) ok(v value) bool {
	if !field(v, d.name).present {
		return true
	}
	if d.sub != nil {
		return d.sub.match(v)
	}
	return len(d.missing(v)) == 0
}

// dependenciesRule is the dependencies keyword.
type dependenciesRule struct{ deps []dependency }

func (r *dependenciesRule) match(v value) bool {
	if !isObject(v) {
		return true
	}
	for _, d := range r.deps {
		if !d.ok(v) {
			return false
		}
	}
	return true
}

func (r *dependenciesRule) explain(v value) []any {
	var failed bson.A
	for _, d := range r.deps {
		if d.ok(v) {
			continue
		}
		if d.sub != nil {
			failed = append(failed, bson.D{{Key: "conditionalProperty", Value: d.name}, {Key: "details", Value: d.sub.explainList(v)}})
		} else {
			failed = append(failed, bson.D{{Key: "conditionalProperty", Value: d.name}, {Key: "missingProperties", Value: d.missing(v)}})
		}
	}
	return []any{bson.D{{Key: "operatorName", Value: "dependencies"}, {Key: "failingDependencies", Value: failed}}}
}
