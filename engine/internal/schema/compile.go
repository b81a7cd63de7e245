package schema

import (
	"math"
	"sort"

	"go.mongodb.org/mongo-driver/v2/bson"

	"github.com/formworkdb/formwork/engine/internal/bsonkit"
	"github.com/formworkdb/formwork/engine/internal/mongoerr"
	"github.com/formworkdb/formwork/engine/internal/regex"
)

// MaxDepth bounds the nesting of subschemas (I2).
//
// Divergence: mongod has no limit of its own beyond BSON's nesting depth;
// a schema nested deeper than MaxDepth fails with FailedToParse here.
const MaxDepth = 64

// Schema is a compiled $jsonSchema. It is immutable and safe for
// concurrent use.
type Schema struct {
	spec bson.Raw
	root *node
	// never is set when the top-level type excludes "object": the schema
	// matches no document.
	never bool
}

// node is one compiled subschema: its rules in the order mongod checks
// and reports them.
type node struct {
	rules       []rule
	annotations bson.D // title and description, as written
	// never marks a top-level subschema whose type excludes "object": it
	// matches no document, and spec is what its error shows.
	never bool
	spec  bson.Raw
}

// value is what a subschema applies to: a value, or nothing when the
// property is missing.
type value struct {
	v       bson.RawValue
	present bool
}

// rule is one keyword (or keyword pair) of a subschema.
type rule interface {
	match(v value) bool
	// explain returns the error details of a value match rejected, none
	// when another rule reports the failure.
	explain(v value) []any
}

var keywords = map[string]bool{
	"additionalItems": true, "additionalProperties": true, "allOf": true, "anyOf": true,
	"bsonType": true, "dependencies": true, "description": true, "encrypt": true,
	"encryptMetadata": true, "enum": true, "exclusiveMaximum": true, "exclusiveMinimum": true,
	"items": true, "maxItems": true, "maxLength": true, "maxProperties": true, "maximum": true,
	"minItems": true, "minLength": true, "minProperties": true, "minimum": true, "multipleOf": true,
	"not": true, "oneOf": true, "pattern": true, "patternProperties": true, "properties": true,
	"required": true, "title": true, "type": true, "uniqueItems": true,
}

var unsupported = map[string]bool{"$ref": true, "$schema": true, "default": true, "definitions": true, "format": true, "id": true}

func failed(format string, args ...any) error {
	return mongoerr.Newf(mongoerr.FailedToParse, format, args...)
}

func mismatch(format string, args ...any) error {
	return mongoerr.Newf(mongoerr.TypeMismatch, format, args...)
}

// Compile compiles a $jsonSchema document. It returns FailedToParse (9),
// TypeMismatch (14) or BadValue (2) with mongod's messages for a schema
// mongod rejects.
func Compile(spec bson.Raw) (*Schema, error) {
	if err := bsonkit.Validate(spec); err != nil {
		return nil, mongoerr.Newf(mongoerr.InvalidBSON, "invalid $jsonSchema: %v", err)
	}
	c := &compiler{}
	root, typ, err := c.parse(spec, true, 0)
	if err != nil {
		return nil, err
	}
	_ = typ
	return &Schema{spec: spec, root: root, never: root.never}, nil
}

type compiler struct{}

// parse compiles one subschema; top marks the schema of the whole
// document. It returns the subschema's type rule as well.
func (c *compiler) parse(spec bson.Raw, top bool, depth int) (*node, *typeRule, error) {
	if depth > MaxDepth {
		return nil, nil, failed("$jsonSchema is nested more than %d levels deep", MaxDepth)
	}
	kw := map[string]bson.RawValue{}
	n := &node{spec: spec}
	elems, err := spec.Elements()
	if err != nil {
		return nil, nil, mongoerr.Newf(mongoerr.InvalidBSON, "invalid $jsonSchema: %v", err)
	}
	for _, e := range elems {
		k := e.Key()
		if !keywords[k] {
			if unsupported[k] {
				return nil, nil, failed("$jsonSchema keyword '%s' is not currently supported", k)
			}
			return nil, nil, failed("Unknown $jsonSchema keyword: %s", k)
		}
		if _, dup := kw[k]; dup {
			return nil, nil, failed("Duplicate $jsonSchema keyword: %s", k)
		}
		kw[k] = e.Value()
	}
	for _, k := range []string{"description", "title"} {
		if v, ok := kw[k]; ok && v.Type != bson.TypeString {
			return nil, nil, mismatch("$jsonSchema keyword '%s' must be of type string", k)
		}
	}
	// Errors show title, then description (mongod's ErrorAnnotation).
	for _, k := range []string{"title", "description"} {
		if v, ok := kw[k]; ok {
			n.annotations = append(n.annotations, bson.E{Key: k, Value: v})
		}
	}
	_, hasType := kw["type"]
	_, hasBSONType := kw["bsonType"]
	if hasType && hasBSONType {
		return nil, nil, failed("Cannot specify both $jsonSchema keywords 'type' and 'bsonType'")
	}
	if _, ok := kw["encrypt"]; ok {
		// Divergence: client-side field level encryption schemas are not
		// supported; mongod accepts encrypt/encryptMetadata in validators.
		return nil, nil, mongoerr.New(mongoerr.NotImplemented, "$jsonSchema keyword 'encrypt' is not supported by Formwork")
	}
	if _, ok := kw["encryptMetadata"]; ok {
		return nil, nil, mongoerr.New(mongoerr.NotImplemented, "$jsonSchema keyword 'encryptMetadata' is not supported by Formwork")
	}
	var typ *typeRule
	switch {
	case hasType:
		if typ, err = parseType("type", kw["type"], jsonTypeAlias); err != nil {
			return nil, nil, err
		}
	case hasBSONType:
		if typ, err = parseType("bsonType", kw["bsonType"], bsonTypeAlias); err != nil {
			return nil, nil, err
		}
	}
	steps := []func(map[string]bson.RawValue, *node, bool, int) error{c.scalar, c.array, c.object, c.logical}
	for _, step := range steps {
		if err := step(kw, n, top, depth); err != nil {
			return nil, nil, err
		}
	}
	if !top && typ != nil {
		n.rules = append(n.rules, typ)
	}
	n.never = top && typ != nil && !typ.has(bson.TypeEmbeddedDocument)
	return n, typ, nil
}

// scalar compiles pattern, maxLength, minLength, multipleOf, maximum and
// minimum, which have no effect at the top level.
func (c *compiler) scalar(kw map[string]bson.RawValue, n *node, top bool, _ int) error {
	add := func(r rule) {
		if !top {
			n.rules = append(n.rules, r)
		}
	}
	if v, ok := kw["pattern"]; ok {
		if v.Type != bson.TypeString {
			return mismatch("$jsonSchema keyword 'pattern' must be a string")
		}
		re, err := regex.Compile("", v.StringValue(), "")
		if err != nil {
			return err
		}
		add(newPatternRule(v, re))
	}
	for _, k := range []string{"maxLength", "minLength"} {
		if v, ok := kw[k]; ok {
			n64, err := nonNegative(k, v)
			if err != nil {
				return err
			}
			add(&lengthRule{kw: k, arg: v, n: n64, max: k == "maxLength"})
		}
	}
	if v, ok := kw["multipleOf"]; ok {
		if !bsonkit.IsNumber(v.Type) {
			return mismatch("$jsonSchema keyword 'multipleOf' must be a number")
		}
		d, ok := toRat(v)
		if !ok || d.Sign() <= 0 {
			f, _ := bsonkit.Float64(v)
			if !(math.IsInf(f, 1)) {
				return failed("$jsonSchema keyword 'multipleOf' must have a positive value")
			}
		}
		add(&multipleRule{arg: v, d: d})
	}
	for _, b := range []struct {
		kw, excl string
		max      bool
	}{{"maximum", "exclusiveMaximum", true}, {"minimum", "exclusiveMinimum", false}} {
		v, ok := kw[b.kw]
		ex, hasEx := kw[b.excl]
		if !ok {
			if hasEx {
				return failed("$jsonSchema keyword '%s' must be a present if %s is present", b.kw, b.excl)
			}
			continue
		}
		exclusive := false
		if hasEx {
			if ex.Type != bson.TypeBoolean {
				return mismatch("$jsonSchema keyword '%s' must be a boolean", b.excl)
			}
			exclusive = ex.Boolean()
		}
		if !bsonkit.IsNumber(v.Type) {
			return mismatch("$jsonSchema keyword '%s' must be a number", b.kw)
		}
		add(&boundRule{kw: b.kw, excl: b.excl, arg: v, max: b.max, exclusive: exclusive})
	}
	return nil
}

// array compiles minItems, maxItems, uniqueItems, items and
// additionalItems, which have no effect at the top level.
func (c *compiler) array(kw map[string]bson.RawValue, n *node, top bool, depth int) error {
	add := func(r rule) {
		if !top {
			n.rules = append(n.rules, r)
		}
	}
	for _, k := range []string{"minItems", "maxItems"} {
		if v, ok := kw[k]; ok {
			n64, err := nonNegative(k, v)
			if err != nil {
				return err
			}
			add(&itemCountRule{kw: k, arg: v, n: n64, max: k == "maxItems"})
		}
	}
	if v, ok := kw["uniqueItems"]; ok {
		if v.Type != bson.TypeBoolean {
			return mismatch("$jsonSchema keyword 'uniqueItems' must be a boolean")
		}
		if v.Boolean() {
			add(&uniqueRule{arg: v})
		}
	}
	start := -1
	if v, ok := kw["items"]; ok {
		switch v.Type {
		case bson.TypeArray:
			r := &itemsListRule{arg: v}
			var err error
			bsonkit.ForEach(v.Value, func(_ string, e bson.RawValue) bool {
				if e.Type != bson.TypeEmbeddedDocument {
					err = mismatch("$jsonSchema keyword 'items' requires that each element of the array is an object, but found a %s", typeName(e.Type))
					return false
				}
				var sub *node
				sub, _, err = c.parse(e.Document(), false, depth+1)
				r.subs = append(r.subs, sub)
				return err == nil
			})
			if err != nil {
				return err
			}
			start = len(r.subs)
			if len(r.subs) > 0 {
				add(r)
			}
		case bson.TypeEmbeddedDocument:
			sub, _, err := c.parse(v.Document(), false, depth+1)
			if err != nil {
				return err
			}
			add(&itemsRule{kw: "items", arg: v, sub: sub})
		default:
			return mismatch("$jsonSchema keyword 'items' must be an array or an object, not %s", typeName(v.Type))
		}
	}
	if v, ok := kw["additionalItems"]; ok {
		var r rule
		switch v.Type {
		case bson.TypeBoolean:
			if !v.Boolean() {
				r = &noMoreItemsRule{arg: v, start: start}
			}
		case bson.TypeEmbeddedDocument:
			sub, _, err := c.parse(v.Document(), false, depth+1)
			if err != nil {
				return err
			}
			r = &itemsRule{kw: "additionalItems", arg: v, sub: sub, start: start}
		default:
			return mismatch("$jsonSchema keyword 'additionalItems' must be either an object or a boolean, but got a %s", typeName(v.Type))
		}
		if start >= 0 && r != nil {
			add(r)
		}
	}
	return nil
}

// object compiles properties, patternProperties, additionalProperties,
// required, minProperties, maxProperties and dependencies.
func (c *compiler) object(kw map[string]bson.RawValue, n *node, top bool, depth int) error {
	required := map[string]bool{}
	var names []string
	reqArg, hasReq := kw["required"]
	if hasReq {
		if reqArg.Type != bson.TypeArray {
			return mismatch("$jsonSchema keyword 'required' must be an array, but found an element of type %s", typeName(reqArg.Type))
		}
		var err error
		bsonkit.ForEach(reqArg.Value, func(_ string, e bson.RawValue) bool {
			if e.Type != bson.TypeString {
				err = mismatch("$jsonSchema keyword 'required' must be an array of strings, but found an element of type: %s", typeName(e.Type))
				return false
			}
			if required[e.StringValue()] {
				err = failed("$jsonSchema keyword 'required' array cannot contain duplicate values")
				return false
			}
			required[e.StringValue()] = true
			names = append(names, e.StringValue())
			return true
		})
		if err != nil {
			return err
		}
		if len(names) == 0 {
			return failed("$jsonSchema keyword 'required' cannot be an empty array")
		}
		sort.Strings(names)
	}
	props := map[string]bool{}
	if v, ok := kw["properties"]; ok {
		if v.Type != bson.TypeEmbeddedDocument {
			return mismatch("$jsonSchema keyword 'properties' must be an object")
		}
		var plist []property
		var err error
		bsonkit.ForEach(v.Value, func(name string, e bson.RawValue) bool {
			if e.Type != bson.TypeEmbeddedDocument {
				err = mismatch("Nested schema for $jsonSchema property '%s' must be an object", name)
				return false
			}
			var sub *node
			if sub, _, err = c.parse(e.Document(), false, depth+1); err != nil {
				return false
			}
			props[name] = true
			plist = append(plist, property{name: name, sub: sub, required: required[name]})
			return true
		})
		if err != nil {
			return err
		}
		n.rules = append(n.rules, newPropertiesRule(plist))
	}
	pp, hasPP := kw["patternProperties"]
	ap, hasAP := kw["additionalProperties"]
	if hasPP || hasAP {
		r := &allowedRule{props: props}
		if hasPP {
			if pp.Type != bson.TypeEmbeddedDocument {
				return mismatch("$jsonSchema keyword 'patternProperties' must be an object")
			}
			var err error
			bsonkit.ForEach(pp.Value, func(pat string, e bson.RawValue) bool {
				if e.Type != bson.TypeEmbeddedDocument {
					err = mismatch("$jsonSchema keyword 'patternProperties' has property '%s' which is not an object", pat)
					return false
				}
				var re *regex.Regexp
				if re, err = regex.Compile("", pat, ""); err != nil {
					return false
				}
				var sub *node
				if sub, _, err = c.parse(e.Document(), false, depth+1); err != nil {
					return false
				}
				r.patterns = append(r.patterns, patternProp{raw: pat, re: re, sub: sub})
				return true
			})
			if err != nil {
				return err
			}
		}
		r.allowOthers = true
		if hasAP {
			r.additionalArg = ap
			switch ap.Type {
			case bson.TypeBoolean:
				r.allowOthers = ap.Boolean()
			case bson.TypeEmbeddedDocument:
				sub, _, err := c.parse(ap.Document(), false, depth+1)
				if err != nil {
					return err
				}
				r.others = sub
			default:
				return mismatch("$jsonSchema keyword 'additionalProperties' must be an object or a boolean")
			}
		}
		n.rules = append(n.rules, r)
	}
	if hasReq {
		n.rules = append(n.rules, &requiredRule{arg: reqArg, names: names, set: required})
	}
	for _, k := range []string{"minProperties", "maxProperties"} {
		if v, ok := kw[k]; ok {
			n64, err := nonNegative(k, v)
			if err != nil {
				return err
			}
			n.rules = append(n.rules, &propCountRule{kw: k, arg: v, n: n64, max: k == "maxProperties"})
		}
	}
	if v, ok := kw["dependencies"]; ok {
		r, err := c.dependencies(v, depth)
		if err != nil {
			return err
		}
		n.rules = append(n.rules, r)
	}
	return nil
}

// dependencies compiles the dependencies keyword.
func (c *compiler) dependencies(v bson.RawValue, depth int) (rule, error) {
	if v.Type != bson.TypeEmbeddedDocument {
		return nil, mismatch("$jsonSchema keyword 'dependencies' must be an object")
	}
	r := &dependenciesRule{}
	var err error
	bsonkit.ForEach(v.Value, func(name string, e bson.RawValue) bool {
		switch e.Type {
		case bson.TypeEmbeddedDocument:
			var sub *node
			if sub, _, err = c.parse(e.Document(), false, depth+1); err != nil {
				return false
			}
			r.deps = append(r.deps, dependency{name: name, sub: sub})
		case bson.TypeArray:
			d := dependency{name: name}
			seen := map[string]bool{}
			bsonkit.ForEach(e.Value, func(_ string, p bson.RawValue) bool {
				if p.Type != bson.TypeString {
					err = mismatch("array '%s' in $jsonSchema keyword 'dependencies' can only contain strings, but found element of type: %s", name, typeName(p.Type))
					return false
				}
				if seen[p.StringValue()] {
					err = failed("array '%s' in $jsonSchema keyword 'dependencies' contains duplicate element: %s", name, p.StringValue())
					return false
				}
				seen[p.StringValue()] = true
				d.props = append(d.props, p.StringValue())
				return true
			})
			if err != nil {
				return false
			}
			if len(d.props) == 0 {
				err = failed("property '%s' in $jsonSchema keyword 'dependencies' cannot be an empty array", name)
				return false
			}
			r.deps = append(r.deps, d)
		default:
			if e.Type == bson.TypeString && (name == "title" || name == "description") {
				return true
			}
			err = mismatch("property '%s' in $jsonSchema keyword 'dependencies' must be either an object or an array", name)
			return false
		}
		return true
	})
	return r, err
}

// logical compiles allOf, anyOf, oneOf, not and enum.
func (c *compiler) logical(kw map[string]bson.RawValue, n *node, top bool, depth int) error {
	for _, k := range []string{"allOf", "anyOf", "oneOf"} {
		v, ok := kw[k]
		if !ok {
			continue
		}
		if v.Type != bson.TypeArray {
			return mismatch("$jsonSchema keyword '%s' must be an array", k)
		}
		if bsonkit.Len(v.Value) == 0 {
			return mongoerr.Newf(mongoerr.BadValue, "$jsonSchema keyword '%s' must be a non-empty array", k)
		}
		r := &logicalRule{kw: k, top: top}
		var err error
		bsonkit.ForEach(v.Value, func(_ string, e bson.RawValue) bool {
			if e.Type != bson.TypeEmbeddedDocument {
				err = mismatch("$jsonSchema keyword '%s' must be an array of objects, but found an element of type %s", k, typeName(e.Type))
				return false
			}
			var sub *node
			sub, _, err = c.parse(e.Document(), top, depth+1)
			r.subs = append(r.subs, sub)
			return err == nil
		})
		if err != nil {
			return err
		}
		n.rules = append(n.rules, r)
	}
	if v, ok := kw["not"]; ok {
		if v.Type != bson.TypeEmbeddedDocument {
			return mismatch("$jsonSchema keyword 'not' must be an object, but found an element of type %s", typeName(v.Type))
		}
		sub, _, err := c.parse(v.Document(), top, depth+1)
		if err != nil {
			return err
		}
		n.rules = append(n.rules, &notRule{sub: sub})
	}
	if v, ok := kw["enum"]; ok {
		r, err := parseEnum(v, top)
		if err != nil {
			return err
		}
		n.rules = append(n.rules, r)
	}
	return nil
}

func parseEnum(v bson.RawValue, top bool) (rule, error) {
	if v.Type != bson.TypeArray {
		return nil, mismatch("$jsonSchema keyword 'enum' must be an array, but found an element of type %s", typeName(v.Type))
	}
	vals := bsonkit.Values(v.Value)
	if len(vals) == 0 {
		return nil, failed("$jsonSchema keyword 'enum' cannot be an empty array")
	}
	r := &enumRule{arg: v, top: top}
	for i, a := range vals {
		for _, b := range vals[:i] {
			if equalUnordered(a, b) {
				return nil, failed("$jsonSchema keyword 'enum' array cannot contain duplicate values.")
			}
		}
		if !top || a.Type == bson.TypeEmbeddedDocument {
			r.values = append(r.values, a)
		}
	}
	return r, nil
}

// nonNegative parses the operand of a length keyword as mongod's
// parseIntegerElementToNonNegativeLong does.
//
// Divergence: the codes are mongod's (TypeMismatch for a non-number,
// FailedToParse otherwise), but the value in the message prints as the
// driver prints it, not as mongod's BSONElement::toString does
// (TestCompileErrors checks the codes only).
func nonNegative(k string, v bson.RawValue) (int64, error) {
	if !bsonkit.IsNumber(v.Type) {
		return 0, mismatch("Expected a number in: %s: %s", k, v.String())
	}
	n, ok := bsonkit.ExactInt64(v)
	if !ok {
		f, _ := bsonkit.Float64(v)
		if v.Type == bson.TypeDouble && (f != math.Trunc(f) || math.IsNaN(f)) || v.Type == bson.TypeDecimal128 {
			return 0, failed("Expected an integer: %s: %s", k, v.String())
		}
		return 0, failed("Cannot represent as a 64-bit integer: %s: %s", k, v.String())
	}
	if n < 0 {
		return 0, failed("Expected a positive number in: %s: %s", k, v.String())
	}
	return n, nil
}

func typeName(t bson.Type) string { return bsonkit.TypeName(t) }
