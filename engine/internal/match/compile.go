package match

import (
	"strings"

	"go.mongodb.org/mongo-driver/v2/bson"

	"github.com/formworkdb/formwork/engine/internal/bsonkit"
	"github.com/formworkdb/formwork/engine/internal/collation"
	"github.com/formworkdb/formwork/engine/internal/mongoerr"
)

// Compile converts a query filter into a Filter. It returns a
// *mongoerr.Error with mongod's code and message for a malformed filter:
// BadValue (2) for unknown operators and bad operands, FailedToParse (9),
// TypeMismatch (14), 51091/51108 for regexes, expression errors for $expr
// (whose $$NOW is the time of the call; CompileEnv gives let variables),
// $jsonSchema's errors (package schema), and NotImplemented (238) for $where, $text, $sampleRate and
// geo operators.
func Compile(filter bson.Raw) (*Filter, error) { return CompileEnv(filter, Env{}) }

// level mirrors mongod's DocumentParseLevel: where the parser stands.
type level int

const (
	levelTop    level = iota // the filter itself
	levelDoc                 // inside $and/$or/$nor of the filter
	levelSubDoc              // inside $elemMatch: array elements
)

type compiler struct {
	// paths collects the paths of predicates reachable through logical
	// operators from the root (see Filter.Paths).
	paths []string
	// depth counts $elemMatch nesting, during which paths are not
	// collected.
	depth int
	// env compiles $expr (CompileEnv).
	env     *exprEnv
	hasExpr bool
	// coll compares strings in $eq, $in, $lt… (nil: simple collation).
	coll *collation.Collator
}

func badValue(format string, args ...any) error {
	return mongoerr.Newf(mongoerr.BadValue, format, args...)
}

func notImplemented(op string) error {
	return mongoerr.Newf(mongoerr.NotImplemented, "%s is not supported by Formwork yet", op)
}

// elemString formats an element as mongod's error messages do.
func elemString(key string, v bson.RawValue) string {
	return key + ": " + v.String()
}

func (c *compiler) addPath(p string) {
	if c.depth == 0 {
		c.paths = append(c.paths, p)
	}
}

func andOf(children []node) node {
	if len(children) == 1 {
		return children[0]
	}
	return &andNode{children: children}
}

// parse compiles a filter document: an implicit $and of its elements.
func (c *compiler) parse(obj []byte, lv level) (node, error) {
	next := lv
	if lv == levelTop {
		next = levelDoc
	}
	var children []node
	var err error
	bsonkit.ForEach(obj, func(key string, v bson.RawValue) bool {
		var n node
		switch {
		case strings.HasPrefix(key, "$"):
			n, err = c.parsePathless(key, v, next, lv)
		case isOperatorDoc(v, false):
			var ns []node
			ns, err = c.parseSub(key, v.Value)
			children = append(children, ns...)
		case v.Type == bson.TypeRegex:
			c.addPath(key)
			n, err = newRegexLeaf(key, v)
		default:
			c.addPath(key)
			n, err = c.newCompare(key, opEQ, v)
		}
		if err != nil {
			return false
		}
		if n != nil {
			children = append(children, n)
		}
		return true
	})
	if err != nil {
		return nil, err
	}
	if len(children) == 0 {
		return &andNode{}, nil
	}
	return andOf(children), nil
}

// parsePathless handles an operator at the top of a filter document.
func (c *compiler) parsePathless(key string, v bson.RawValue, next, lv level) (node, error) {
	switch key {
	case "$and", "$or", "$nor":
		if v.Type != bson.TypeArray {
			return nil, badValue("%s must be an array", key)
		}
		children, err := c.parseList(v.Value, next)
		if err != nil {
			return nil, err
		}
		switch key {
		case "$and":
			return &andNode{children: children}, nil
		case "$or":
			return &orNode{children: children}, nil
		}
		return &norNode{children: children}, nil
	case "$comment":
		return nil, nil
	case "$alwaysTrue", "$alwaysFalse":
		if n, ok := bsonkit.ExactInt64(v); !ok || n != 1 {
			return nil, mongoerr.Newf(mongoerr.FailedToParse, "%s must be an integer value of 1", key)
		}
		return &constNode{value: key == "$alwaysTrue"}, nil
	case "$expr", "$text", "$where":
		if lv == levelSubDoc {
			return nil, badValue("%s can only be applied to the top-level document", key)
		}
		if key == "$where" {
			return nil, mongoerr.New(mongoerr.NotImplemented, "$where is not supported: Formwork does not run server-side JavaScript")
		}
		if key == "$expr" {
			return c.parseExpr(v)
		}
		return nil, notImplemented(key)
	case "$jsonSchema":
		return parseJSONSchema(v)
	case "$sampleRate":
		return nil, notImplemented(key)
	}
	return nil, badValue("unknown top level operator: %s. If you have a field name that starts with a '$' symbol, consider using $getField or $setField.", key)
}

// parseList compiles the array operand of $and, $or and $nor.
func (c *compiler) parseList(arr []byte, lv level) ([]node, error) {
	if bsonkit.Len(arr) == 0 {
		return nil, badValue("$and/$or/$nor must be a nonempty array")
	}
	var out []node
	var err error
	bsonkit.ForEach(arr, func(_ string, v bson.RawValue) bool {
		if v.Type != bson.TypeEmbeddedDocument {
			err = badValue("$or/$and/$nor entries need to be full objects")
			return false
		}
		var n node
		n, err = c.parse(v.Value, lv)
		if err != nil {
			return false
		}
		out = append(out, n)
		return true
	})
	return out, err
}

// isOperatorDoc reports whether v is an operator document such as
// {$gt: 1}: a non-empty document whose first field starts with "$" and that
// is not a DBRef. With incompleteDBRef, any of $ref, $id or $db makes it a
// DBRef; otherwise both $ref and $id are needed (mongod's
// isExpressionDocument).
func isOperatorDoc(v bson.RawValue, incompleteDBRef bool) bool {
	if v.Type != bson.TypeEmbeddedDocument {
		return false
	}
	first := ""
	hasRef, hasID, hasDB := false, false, false
	n := 0
	bsonkit.ForEach(v.Value, func(key string, _ bson.RawValue) bool {
		if n == 0 {
			first = key
		}
		n++
		switch key {
		case "$ref":
			hasRef = true
		case "$id":
			hasID = true
		case "$db":
			hasDB = true
		}
		return true
	})
	if n == 0 || !strings.HasPrefix(first, "$") {
		return false
	}
	if incompleteDBRef {
		return !(hasRef || hasID || hasDB)
	}
	return !(hasRef && hasID)
}

// IsOperatorDoc reports whether v is an operator document in a filter
// position, e.g. {$gt: 5}: a non-empty document whose first field name
// starts with "$" and that is not a DBRef ({$ref, $id}). The update package
// uses it to tell $pull's value conditions from document conditions.
func IsOperatorDoc(v bson.RawValue) bool { return isOperatorDoc(v, false) }

// parseSub compiles the operator document of field name, e.g. the
// {$gt: 1, $lt: 5} of {a: {$gt: 1, $lt: 5}}, into one node per operator.
func (c *compiler) parseSub(name string, obj []byte) ([]node, error) {
	c.addPath(name)
	var out []node
	var err error
	bsonkit.ForEach(obj, func(key string, v bson.RawValue) bool {
		var n node
		n, err = c.parseSubField(obj, name, key, v)
		if err != nil {
			return false
		}
		if n != nil {
			out = append(out, n)
		}
		return true
	})
	return out, err
}

// parseSubField compiles one operator of an operator document; context is
// the whole operator document ($regex and $options read each other).
func (c *compiler) parseSubField(context []byte, name, op string, v bson.RawValue) (node, error) {
	switch op {
	case "$eq":
		return c.newCompare(name, opEQ, v)
	case "$ne":
		if v.Type == bson.TypeRegex {
			return nil, badValue("Can't have regex as arg to $ne.")
		}
		eq, err := c.newCompare(name, opEQ, v)
		if err != nil {
			return nil, err
		}
		return &notNode{child: eq, path: name}, nil
	case "$gt":
		return c.newOrdered(name, opGT, v)
	case "$gte":
		return c.newOrdered(name, opGTE, v)
	case "$lt":
		return c.newOrdered(name, opLT, v)
	case "$lte":
		return c.newOrdered(name, opLTE, v)
	case "$in", "$nin":
		if v.Type != bson.TypeArray {
			return nil, badValue("%s needs an array", op)
		}
		in, err := c.newIn(name, v)
		if err != nil {
			return nil, err
		}
		if op == "$nin" {
			return &notNode{child: in, path: name}, nil
		}
		return in, nil
	case "$not":
		return c.parseNot(name, v)
	case "$exists":
		return newExists(name, v), nil
	case "$type":
		return newType(name, v)
	case "$size":
		return newSize(name, v)
	case "$mod":
		return newMod(name, v)
	case "$regex":
		return newRegexDoc(name, context)
	case "$options":
		hasRegex := false
		bsonkit.ForEach(context, func(key string, _ bson.RawValue) bool {
			hasRegex = key == "$regex"
			return !hasRegex
		})
		if !hasRegex {
			return nil, badValue("$options needs a $regex")
		}
		return nil, nil
	case "$elemMatch":
		return c.parseElemMatch(name, v)
	case "$all":
		return c.parseAll(name, v)
	case "$bitsAllSet", "$bitsAllClear", "$bitsAnySet", "$bitsAnyClear":
		return newBits(name, op, v)
	case "$near", "$nearSphere", "$geoNear", "$geoWithin", "$within", "$geoIntersects", "$maxDistance", "$minDistance":
		return nil, notImplemented(op)
	case "$where":
		return nil, badValue("$where cannot be applied to a field")
	}
	return nil, badValue("unknown operator: %s", op)
}

// parseNot compiles {$not: <regex or operator document>}.
func (c *compiler) parseNot(name string, v bson.RawValue) (node, error) {
	if v.Type == bson.TypeRegex {
		r, err := newRegexLeaf(name, v)
		if err != nil {
			return nil, err
		}
		return &notNode{child: r, path: name}, nil
	}
	if v.Type != bson.TypeEmbeddedDocument {
		return nil, badValue("$not needs a regex or a document")
	}
	if bsonkit.Len(v.Value) == 0 {
		return nil, badValue("$not cannot be empty")
	}
	children, err := c.parseSub(name, v.Value)
	if err != nil {
		return nil, err
	}
	return &notNode{child: andOf(children), path: name}, nil
}

func newLeaf(path string, kind Kind, op string, arg bson.RawValue, test func(bson.RawValue) bool) *leafNode {
	return &leafNode{path: path, parts: bsonkit.SplitPath(path), test: test, kind: kind, op: op, arg: arg}
}

func newArrayLeaf(path string, kind Kind, op string, arg bson.RawValue, test func([]byte) (bool, int)) *arrayNode {
	return &arrayNode{path: path, parts: bsonkit.SplitPath(path), test: test, kind: kind, op: op, arg: arg}
}
