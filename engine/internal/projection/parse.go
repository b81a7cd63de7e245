package projection

import (
	"strings"

	"go.mongodb.org/mongo-driver/v2/bson"

	"github.com/formworkdb/formwork/engine/internal/bsonkit"
	"github.com/formworkdb/formwork/engine/internal/expr"
	"github.com/formworkdb/formwork/engine/internal/match"
	"github.com/formworkdb/formwork/engine/internal/mongoerr"
)

type kind int

const (
	kindBranch kind = iota
	kindInclude
	kindExclude
	kindSlice
	kindElemMatch
	kindPositional
	kindExpr
)

// pnode is one node of the projection tree.
type pnode struct {
	kind     kind
	children map[string]*pnode
	order    []string // child names in spec order

	// kindSlice
	hasSkip bool
	skip    int
	limit   int
	// kindElemMatch
	filter *match.Filter
	// kindExpr: the computed value; on a branch, hasExpr marks a subtree
	// holding computed fields.
	expr    expr.Expr
	hasExpr bool
}

func newBranch() *pnode { return &pnode{kind: kindBranch, children: map[string]*pnode{}} }

// Projection is a compiled find projection.
type Projection struct {
	root      *pnode
	inclusion bool
	// positional is the path before ".$" of a positional projection.
	positional   []string
	positionalAt string
	elemMatch    []string // top-level fields with an $elemMatch projection
	// env evaluates computed fields; nil when the projection has none.
	env *exprEnv
}

// parseCtx carries what mongod's ParseContext tracks.
type parseCtx struct {
	typ                    int // 0 unknown, 1 inclusion, 2 exclusion
	hasPositional, hasElem bool
	hasSlice               bool
	idSpecified            bool
	idIncluded, idExcluded bool
	positional             []string
	positionalAt           string
	elemMatch              []string
	// sc is the scope computed fields are parsed in (let variables
	// defined); hasExpr is set once one is parsed.
	sc      *expr.Scope
	hasExpr bool
}

const (
	typeUnknown = iota
	typeInclusion
	typeExclusion
)

// Compile parses a find projection. Errors are *mongoerr.Error with
// mongod's codes: 31249/31250 path collisions, 31253/31254 mixing
// inclusion and exclusion, 31255/31256 positional with $elemMatch,
// 31270/31276/31287 positional misuse, 31271/31308 positional with a
// sub-object or literal, 31272/31273/31257/31258/31259 bad $slice,
// 31274/31275 bad $elemMatch, 31325 unknown $-operator, 51270 empty
// sub-projection, the FieldPath codes 40352/15998/16410, and
// 31252/31310 computed fields in an exclusion projection, expr.Parse's
// errors for aggregation expressions, and NotImplemented for $meta.
// Validate checks that a positional projection has a query. Computed
// fields see no let variables and $$NOW is the time of each Apply;
// CompileEnv gives the command's.
func Compile(spec bson.Raw) (*Projection, error) { return CompileEnv(spec, match.Env{}) }

// CompileEnv is Compile with the command's environment: env.Let holds the
// command's let variables, already evaluated to constants (names
// validated by the caller), and env.Now and env.ClusterTime are $$NOW and
// $$CLUSTER_TIME of every computed field.
// https://www.mongodb.com/docs/v7.0/reference/command/find/#std-label-find-let-syntax
func CompileEnv(spec bson.Raw, env match.Env) (*Projection, error) {
	if err := bsonkit.Validate(spec); err != nil {
		return nil, mongoerr.Newf(mongoerr.InvalidBSON, "invalid projection document: %v", err)
	}
	xe, err := newExprEnv(env)
	if err != nil {
		return nil, err
	}
	ctx := &parseCtx{sc: xe.sc}
	root := newBranch()
	bsonkit.ForEach(spec, func(key string, v bson.RawValue) bool {
		if key == "_id" || strings.HasPrefix(key, "_id.") {
			ctx.idSpecified = true
		}
		err = ctx.parseElement(root, nil, key, v)
		return err == nil
	})
	if err != nil {
		return nil, err
	}
	if ctx.typ == typeUnknown {
		ctx.typ = ctx.defaultType()
	}
	p := &Projection{root: root, inclusion: ctx.typ == typeInclusion,
		positional: ctx.positional, positionalAt: ctx.positionalAt, elemMatch: ctx.elemMatch}
	if ctx.hasExpr {
		p.env = xe
		markExprs(root)
	}
	if p.inclusion && !ctx.idSpecified {
		root.children["_id"] = &pnode{kind: kindInclude}
		root.order = append(root.order, "_id")
	}
	if !p.inclusion && ctx.idIncluded {
		delete(root.children, "_id")
	}
	return p, nil
}

// defaultType is mongod's computeProjectionType for find.
func (ctx *parseCtx) defaultType() int {
	switch {
	case ctx.hasSlice:
		if ctx.idIncluded {
			return typeInclusion
		}
		return typeExclusion
	case ctx.hasElem:
		return typeInclusion
	case ctx.idIncluded:
		return typeInclusion
	}
	return typeExclusion
}

func isInclusionType(t bson.Type) bool {
	switch t {
	case bson.TypeBoolean, bson.TypeInt32, bson.TypeInt64, bson.TypeDouble, bson.TypeDecimal128:
		return true
	}
	return false
}

// positionalIndex finds the first positional operator in a projection
// key: [begin, end) of ".$." or a trailing ".$", or the whole key "$".
func positionalIndex(key string) (int, int, bool) {
	if i := strings.Index(key, ".$."); i >= 0 {
		return i, i + 3, true
	}
	if strings.HasSuffix(key, ".$") {
		return len(key) - 2, len(key), true
	}
	if key == "$" {
		return 0, 1, true
	}
	return 0, 0, false
}

func (ctx *parseCtx) parseElement(parent *pnode, parentPath []string, key string, v bson.RawValue) error {
	pb, pe, positional := positionalIndex(key)
	switch {
	case v.Type == bson.TypeEmbeddedDocument:
		if positional {
			return mongoerr.New(mongoerr.Code(31271), "positional projection cannot be used with an expression or sub object")
		}
		return ctx.parseSubObject(parent, parentPath, key, v.Value)
	case isInclusionType(v.Type):
		if truthy(v) {
			return ctx.parseInclusion(parent, parentPath, key, positional, pb, pe)
		}
		return ctx.parseExclusion(parent, parentPath, key)
	default:
		if positional {
			return mongoerr.New(mongoerr.Code(31308), "positional projection cannot be used with a literal")
		}
		return ctx.parseLiteral(parent, key, v)
	}
}

func truthy(v bson.RawValue) bool {
	switch v.Type {
	case bson.TypeBoolean:
		return v.Boolean()
	case bson.TypeDecimal128:
		return !v.Decimal128().IsZero()
	}
	f, _ := bsonkit.Float64(v)
	return f != 0
}

func (ctx *parseCtx) parseInclusion(parent *pnode, parentPath []string, key string, positional bool, pb, pe int) error {
	isTopID := key == "_id" && parentPath == nil
	if !positional {
		if err := addAt(parent, key, &pnode{kind: kindInclude}); err != nil {
			return err
		}
		if isTopID {
			ctx.idIncluded = true
		}
	} else {
		if ctx.hasPositional {
			return mongoerr.New(mongoerr.Code(31276), "Cannot specify more than one positional projection per query.")
		}
		if ctx.hasElem {
			return mongoerr.New(mongoerr.Code(31256), "Cannot specify positional operator and $elemMatch.")
		}
		if strings.HasSuffix(key, ".$.") {
			return mongoerr.New(mongoerr.Code(31270), "Path cannot end with '.$.'")
		}
		rest := key[pe:]
		if _, _, again := positionalIndex(rest); again || rest == "$" {
			return mongoerr.Newf(mongoerr.Code(31287), "Cannot use positional operator twice: %s", key)
		}
		prefix := key[:pb]
		if err := addAt(parent, prefix, &pnode{kind: kindPositional}); err != nil {
			return err
		}
		ctx.hasPositional = true
		ctx.positional = append(append([]string(nil), parentPath...), strings.Split(prefix, ".")...)
		ctx.positionalAt = key
	}
	if !isTopID {
		if ctx.typ == typeExclusion {
			return mongoerr.Newf(mongoerr.Code(31253), "Cannot do inclusion on field %s in exclusion projection", key)
		}
		ctx.typ = typeInclusion
	}
	return nil
}

func (ctx *parseCtx) parseExclusion(parent *pnode, parentPath []string, key string) error {
	if err := addAt(parent, key, &pnode{kind: kindExclude}); err != nil {
		return err
	}
	if key == "_id" && parentPath == nil {
		ctx.idExcluded = true
		return nil
	}
	if ctx.typ == typeInclusion {
		return mongoerr.Newf(mongoerr.Code(31254), "Cannot do exclusion on field %s in inclusion projection", key)
	}
	ctx.typ = typeExclusion
	return nil
}

func (ctx *parseCtx) parseSubObject(parent *pnode, parentPath []string, key string, obj []byte) error {
	if err := checkFieldPath(key); err != nil {
		return err
	}
	first, n := "", 0
	var firstVal bson.RawValue
	bsonkit.ForEach(obj, func(k string, v bson.RawValue) bool {
		if n == 0 {
			first, firstVal = k, v
		}
		n++
		return true
	})
	if n == 0 {
		return mongoerr.Newf(mongoerr.Code(51270), "An empty sub-projection is not a valid value. Found empty object at path")
	}
	if n == 1 && strings.HasPrefix(first, "$") {
		switch {
		case first == "$slice":
			return ctx.parseSliceOrExpr(parent, key, firstVal, obj)
		case first == "$elemMatch":
			return ctx.parseElemMatch(parent, parentPath, key, firstVal, obj)
		case first == "$meta":
			return mongoerr.New(mongoerr.NotImplemented, "$meta in a projection is not supported by Formwork yet")
		case isExpressionName(first):
			return ctx.parseExpr(parent, key, obj)
		}
		return mongoerr.Newf(mongoerr.Code(31325), "Unknown expression %s", first)
	}
	child, err := branchAt(parent, key)
	if err != nil {
		return err
	}
	full := append(append([]string(nil), parentPath...), strings.Split(key, ".")...)
	bsonkit.ForEach(obj, func(k string, v bson.RawValue) bool {
		err = ctx.parseElement(child, full, k, v)
		return err == nil
	})
	return err
}

func (ctx *parseCtx) parseSlice(parent *pnode, key string, v bson.RawValue) error {
	node := &pnode{kind: kindSlice}
	switch {
	case bsonkit.IsNumber(v.Type):
		node.limit = numberInt(v)
	case v.Type == bson.TypeArray:
		vals := bsonkit.Values(v.Value)
		if len(vals) != 2 {
			return mongoerr.New(mongoerr.Code(31272), "$slice array argument should be of form [skip, limit]")
		}
		if !bsonkit.IsNumber(vals[0].Type) {
			return mongoerr.Newf(mongoerr.Code(31257), "$slice expects the skip argument to be a number, got %s", bsonkit.TypeName(vals[0].Type))
		}
		if !bsonkit.IsNumber(vals[1].Type) {
			return mongoerr.Newf(mongoerr.Code(31258), "$slice expects the limit argument to be a number, got %s", bsonkit.TypeName(vals[1].Type))
		}
		limit := numberInt(vals[1])
		if limit <= 0 {
			return mongoerr.Newf(mongoerr.Code(31259), "$slice limit must be positive, got %d", limit)
		}
		node.hasSkip, node.skip, node.limit = true, numberInt(vals[0]), limit
	default:
		return mongoerr.New(mongoerr.Code(31273), "$slice only supports numbers and [skip, limit] arrays")
	}
	if err := addAt(parent, key, node); err != nil {
		return err
	}
	ctx.hasSlice = true
	return nil
}

// numberInt is mongod's BSONElement::numberInt: truncation, saturated at
// the int32 bounds here.
func numberInt(v bson.RawValue) int {
	n, ok := bsonkit.TruncInt64(v)
	if !ok {
		return 0
	}
	if n > 1<<31-1 {
		return 1<<31 - 1
	}
	if n < -1<<31 {
		return -1 << 31
	}
	return int(n)
}

func (ctx *parseCtx) parseElemMatch(parent *pnode, parentPath []string, key string, v bson.RawValue, obj []byte) error {
	if v.Type != bson.TypeEmbeddedDocument {
		return mongoerr.Newf(mongoerr.Code(31274), "elemMatch: Invalid argument, object required, but got %s", bsonkit.TypeName(v.Type))
	}
	if ctx.hasPositional {
		return mongoerr.New(mongoerr.Code(31255), "Cannot specify positional operator and $elemMatch.")
	}
	if parentPath != nil || strings.Contains(key, ".") {
		return mongoerr.New(mongoerr.Code(31275), "Cannot use $elemMatch projection on a nested field.")
	}
	var env match.Env
	if ctx.sc != nil {
		env.Collation = ctx.sc.Collation()
	}
	f, err := match.CompileEnv(bsonkit.Elem(key, bson.RawValue{Type: bson.TypeEmbeddedDocument, Value: obj}), env)
	if err != nil {
		return err
	}
	if err := addAt(parent, key, &pnode{kind: kindElemMatch, filter: f}); err != nil {
		return err
	}
	ctx.hasElem = true
	ctx.elemMatch = append(ctx.elemMatch, key)
	return nil
}

// checkFieldPath applies mongod's FieldPath rules.
func checkFieldPath(p string) error {
	if p == "" {
		return mongoerr.New(mongoerr.Code(40352), "FieldPath cannot be constructed with empty string")
	}
	for _, part := range strings.Split(p, ".") {
		if part == "" {
			return mongoerr.New(mongoerr.Code(15998), "FieldPath field names may not be empty strings.")
		}
		if strings.HasPrefix(part, "$") {
			return mongoerr.New(mongoerr.Code(16410), "FieldPath field names may not start with '$'. Consider using $getField or $setField.")
		}
	}
	return nil
}

// addAt adds leaf at the dotted path under parent, creating branches, with
// mongod's collision errors.
func addAt(parent *pnode, path string, leaf *pnode) error {
	if err := checkFieldPath(path); err != nil {
		return err
	}
	parts := strings.Split(path, ".")
	cur := parent
	for i, part := range parts {
		child := cur.children[part]
		if i == len(parts)-1 {
			if child != nil {
				return mongoerr.Newf(mongoerr.Code(31250), "Path collision at %s", path)
			}
			cur.children[part] = leaf
			cur.order = append(cur.order, part)
			return nil
		}
		if child == nil {
			child = newBranch()
			cur.children[part] = child
			cur.order = append(cur.order, part)
		} else if child.kind != kindBranch {
			return mongoerr.Newf(mongoerr.Code(31249), "Path collision at %s remaining portion %s", path, strings.Join(parts[i+1:], "."))
		}
		cur = child
	}
	return nil
}

// branchAt returns the branch at the dotted path, creating it; an existing
// leaf there is a collision.
func branchAt(parent *pnode, path string) (*pnode, error) {
	parts := strings.Split(path, ".")
	cur := parent
	for i, part := range parts {
		child := cur.children[part]
		if child == nil {
			child = newBranch()
			cur.children[part] = child
			cur.order = append(cur.order, part)
		} else if child.kind != kindBranch {
			if i == len(parts)-1 {
				return nil, mongoerr.Newf(mongoerr.Code(31250), "Path collision at %s", path)
			}
			return nil, mongoerr.Newf(mongoerr.Code(31249), "Path collision at %s remaining portion %s", path, strings.Join(parts[i+1:], "."))
		}
		cur = child
	}
	return cur, nil
}

// Validate checks the projection against the query it runs with: a
// positional projection needs a query (51050 "Projections with a
// positional operator require a matcher" when f is nil).
//
// mongod 4.4's parser also refused (31277) a positional projection whose
// field the query does not mention; mongod 7.0's find accepts it and fails
// at run time with 51246 when no array position was recorded, which Apply
// reproduces. Validate follows 7.0.
func (p *Projection) Validate(f *match.Filter) error {
	if p.positional != nil && f == nil {
		return mongoerr.New(mongoerr.Code(51050), "Projections with a positional operator require a matcher")
	}
	return nil
}

// IsInclusion reports whether p is an inclusion projection.
func (p *Projection) IsInclusion() bool { return p.inclusion }
