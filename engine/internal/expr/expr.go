package expr

import (
	"strings"
	"unicode/utf8"

	"go.mongodb.org/mongo-driver/v2/bson"

	"github.com/formworkdb/formwork/engine/internal/mongoerr"
)

// MaxDepth bounds the nesting of an expression. Deeper expressions fail to
// parse with Overflow, so neither parsing nor evaluation can exhaust the
// stack.
const MaxDepth = 150

// Expr is a compiled expression. It is immutable and safe for concurrent
// use; Eval returns the value of the expression for the variables in c
// (missing has Type 0, see I3).
type Expr interface {
	Eval(c *Ctx) (bson.RawValue, error)
}

// parseFunc parses the argument of one operator ({$name: arg}).
type parseFunc func(p *Parser, name string, arg bson.RawValue) (Expr, error)

// operators maps each operator name ("$add") to its parser. The op_*.go
// files fill it in their init functions.
var operators = map[string]parseFunc{}

// register adds an operator. It panics on a duplicate name, a programming
// error caught by any test.
func register(name string, f parseFunc) {
	if _, dup := operators[name]; dup {
		panic("expr: operator registered twice: " + name)
	}
	operators[name] = f
}

// IsOperator reports whether name ("$add") is a known expression operator.
func IsOperator(name string) bool {
	_, ok := operators[name]
	return ok
}

// Deps collects what an expression reads from the document: the field
// paths (relative to $$CURRENT, without the "$") and whether it needs the
// whole document ($$ROOT or $$CURRENT itself).
type Deps struct {
	Paths []string
	Whole bool
}

// Parser holds the state of one parse: the scope of variables and the
// current depth. Operator parsers use its methods to parse their operands.
type Parser struct {
	sc    *Scope
	depth int
	deps  *Deps
}

// Parse compiles the expression v in scope sc. It returns MongoDB's error
// for a malformed expression (168 for an unknown operator, 15983 for an
// operator object with more than one field, 16410 for a field name that
// starts with '$', 17276 for an undefined variable …).
func Parse(v bson.RawValue, sc *Scope) (Expr, error) {
	return ParseDeps(v, sc, nil)
}

// ParseDeps is Parse that also records the expression's dependencies in d
// (which may be nil).
func ParseDeps(v bson.RawValue, sc *Scope, d *Deps) (Expr, error) {
	p := &Parser{sc: sc, deps: d}
	return p.Parse(v)
}

// ParseObjectDeps parses a document of field expressions such as
// {a: "$x", b: {$add: [1, 2]}} as an object expression, whatever its first
// key; it is what $addFields and $group's _id object use.
func ParseObjectDeps(doc bson.Raw, sc *Scope, d *Deps) (Expr, error) {
	p := &Parser{sc: sc, deps: d}
	return p.parseObject(doc)
}

// Scope returns the scope the parser resolves variables in.
func (p *Parser) Scope() *Scope { return p.sc }

// Parse parses one operand.
func (p *Parser) Parse(v bson.RawValue) (Expr, error) {
	if p.depth >= MaxDepth {
		return nil, mongoerr.Newf(mongoerr.Overflow, "expression nesting exceeds the maximum depth of %d", MaxDepth)
	}
	p.depth++
	defer func() { p.depth-- }()
	switch v.Type {
	case bson.TypeString:
		s := v.StringValue()
		if strings.HasPrefix(s, "$") {
			return p.parsePath(s)
		}
		return Const(v), nil
	case bson.TypeEmbeddedDocument:
		doc := v.Document()
		first, err := doc.IndexErr(0)
		if err == nil && strings.HasPrefix(first.Key(), "$") {
			return p.parseOperator(doc)
		}
		return p.parseObject(doc)
	case bson.TypeArray:
		vals, err := v.Array().Values()
		if err != nil {
			return nil, mongoerr.New(mongoerr.InvalidBSON, err.Error())
		}
		elems := make([]Expr, len(vals))
		for i, ev := range vals {
			if elems[i], err = p.Parse(ev); err != nil {
				return nil, err
			}
		}
		return &arrayExpr{elems: elems}, nil
	}
	return Const(v), nil
}

// parseOperator parses {$op: arg}.
func (p *Parser) parseOperator(doc bson.Raw) (Expr, error) {
	elems, err := doc.Elements()
	if err != nil {
		return nil, mongoerr.New(mongoerr.InvalidBSON, err.Error())
	}
	if len(elems) != 1 {
		return nil, mongoerr.Newf(mongoerr.Code(15983),
			"an expression specification must contain exactly one field, the name of the expression. Found %d fields in %s, while parsing object %s",
			len(elems), doc.String(), doc.String())
	}
	name := elems[0].Key()
	f, ok := operators[name]
	if !ok {
		return nil, mongoerr.Newf(mongoerr.Code(168), "Unrecognized expression '%s'", name)
	}
	return f(p, name, elems[0].Value())
}

// parseObject parses an object expression {a: expr, b: expr}.
func (p *Parser) parseObject(doc bson.Raw) (Expr, error) {
	elems, err := doc.Elements()
	if err != nil {
		return nil, mongoerr.New(mongoerr.InvalidBSON, err.Error())
	}
	o := &objectExpr{keys: make([]string, len(elems)), vals: make([]Expr, len(elems))}
	seen := make(map[string]bool, len(elems))
	for i, e := range elems {
		k := e.Key()
		if err := ValidateFieldName(k); err != nil {
			return nil, err
		}
		if strings.Contains(k, ".") {
			return nil, mongoerr.Newf(mongoerr.Code(16412), "FieldPath field names may not contain '.'. Consider using $getField or $setField.")
		}
		if seen[k] {
			return nil, mongoerr.Newf(mongoerr.Code(16406), "duplicate field name specified in object literal: %s", doc.String())
		}
		seen[k] = true
		o.keys[i] = k
		if o.vals[i], err = p.Parse(e.Value()); err != nil {
			return nil, err
		}
	}
	return o, nil
}

// ValidateFieldName checks one component of a field path as FieldPath
// does: not empty, not starting with '$', no NUL byte.
func ValidateFieldName(k string) error {
	switch {
	case k == "":
		return mongoerr.New(mongoerr.Code(15998), "FieldPath field names may not be empty strings.")
	case k[0] == '$':
		return mongoerr.Newf(mongoerr.Code(16410), "FieldPath field names may not start with '$'. Consider using $getField or $setField.")
	case strings.IndexByte(k, 0) >= 0:
		return mongoerr.New(mongoerr.Code(16411), "FieldPath field names may not contain '\\0'.")
	}
	return nil
}

// parsePath parses "$a.b" (a path under $$CURRENT) or "$$var.a.b".
func (p *Parser) parsePath(s string) (Expr, error) {
	if strings.HasPrefix(s, "$$") {
		name, rest, _ := strings.Cut(s[2:], ".")
		if err := validateVarRead(name); err != nil {
			return nil, err
		}
		var parts []string
		if rest != "" || strings.Contains(s[2:], ".") {
			var err error
			if parts, err = splitPath(rest); err != nil {
				return nil, err
			}
		}
		switch name {
		case "REMOVE":
			return Const(Missing), nil
		case "NOW":
			return &nowExpr{parts: parts}, nil
		case "CLUSTER_TIME":
			return &clusterTimeExpr{parts: parts}, nil
		case "DESCEND", "PRUNE", "KEEP":
			if parts != nil {
				return Const(Missing), nil
			}
			return Const(String(strings.ToLower(name))), nil
		}
		slot, ok := p.sc.lookup(name)
		if !ok {
			return nil, mongoerr.Newf(mongoerr.Code(17276), "Use of undefined variable: %s", name)
		}
		if p.deps != nil && (slot == SlotRoot || slot == SlotCurrent) {
			if parts == nil {
				p.deps.Whole = true
			} else {
				p.deps.Paths = append(p.deps.Paths, strings.Join(parts, "."))
			}
		}
		return &pathExpr{slot: slot, parts: parts}, nil
	}
	if s == "$" {
		return nil, mongoerr.New(mongoerr.Code(16872), "'$' by itself is not a valid FieldPath")
	}
	parts, err := splitPath(s[1:])
	if err != nil {
		return nil, err
	}
	if p.deps != nil {
		p.deps.Paths = append(p.deps.Paths, s[1:])
	}
	slot, _ := p.sc.lookup("CURRENT")
	return &pathExpr{slot: slot, parts: parts}, nil
}

// splitPath splits a dotted path and validates each component.
func splitPath(s string) ([]string, error) {
	parts := strings.Split(s, ".")
	for _, part := range parts {
		if err := ValidateFieldName(part); err != nil {
			return nil, err
		}
	}
	return parts, nil
}

// validateVarRead checks a variable name as it may be read: user names
// and the upper-case system names.
func validateVarRead(name string) error {
	if name == "" {
		return mongoerr.New(mongoerr.Code(16869), "empty variable names are not allowed")
	}
	r, _ := utf8.DecodeRuneInString(name)
	if !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= utf8.RuneSelf) {
		return mongoerr.Newf(mongoerr.Code(16870), "'%s' starts with an invalid character for a variable name", name)
	}
	return validateVarRest(name)
}

// ValidateVarName checks a variable name a user defines ($let, $map's as,
// let options): it starts with a lower-case letter or a non-ASCII
// character and goes on with letters, digits and '_'.
func ValidateVarName(name string) error {
	if name == "" {
		return mongoerr.New(mongoerr.Code(16866), "empty variable names are not allowed")
	}
	r, _ := utf8.DecodeRuneInString(name)
	if !(r >= 'a' && r <= 'z' || r >= utf8.RuneSelf) {
		return mongoerr.Newf(mongoerr.Code(16867), "'%s' starts with an invalid character for a user variable name", name)
	}
	return validateVarRest(name)
}

func validateVarRest(name string) error {
	for _, r := range name {
		if !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '_' || r >= utf8.RuneSelf) {
			return mongoerr.Newf(mongoerr.Code(16868), "'%s' contains an invalid character for a variable name: '%c'", name, r)
		}
	}
	return nil
}
