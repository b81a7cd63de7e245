package agg

import (
	"strings"

	"go.mongodb.org/mongo-driver/v2/bson"

	"github.com/formworkdb/formwork/engine/internal/expr"
	"github.com/formworkdb/formwork/engine/internal/mongoerr"
)

// Projection modes.
const (
	modeInclusion = iota + 1
	modeExclusion
	modeAddFields
)

// Node kinds of a projection tree.
const (
	pBranch = iota
	pInclude
	pExclude
	pExpr
)

// pnode is one node of a projection tree: a leaf that includes,
// excludes or computes a field, or a branch with children in spec order.
type pnode struct {
	kind    int
	e       expr.Expr
	names   []string
	kids    map[string]*pnode
	hasExpr bool // a computed field somewhere below
}

func newBranch() *pnode { return &pnode{kind: pBranch, kids: map[string]*pnode{}} }

// projection is a compiled $project, $addFields/$set or $unset, shared by
// the pipeline stages and pipeline-style updates.
type projection struct {
	mode int
	root *pnode
	deps expr.Deps
}

// parseProjection compiles spec in mode modeAddFields, or in the mode
// the spec implies for $project (inclusion unless it only excludes).
// Errors carry mongod's codes: 31253/31254 mixing inclusion and
// exclusion, 40182 computed fields in an exclusion, 31249/31250 path
// collisions, 51270 an empty sub-projection, 51272 an empty $project,
// 40177 an empty $addFields, and the FieldPath and expression codes.
func parseProjection(pc *parseCtx, spec bson.Raw, addFields bool) (*projection, error) {
	p := &projection{root: newBranch()}
	if addFields {
		p.mode = modeAddFields
	}
	elems, err := spec.Elements()
	if err != nil {
		return nil, mongoerr.New(mongoerr.InvalidBSON, err.Error())
	}
	if len(elems) == 0 {
		if addFields {
			return nil, mongoerr.New(mongoerr.Code(40177), "specification must have at least one field")
		}
		return nil, mongoerr.New(mongoerr.Code(51272), "projection specification must have at least one field")
	}
	idSet := false
	if err := p.parseLevel(pc, spec, elems, "", &idSet); err != nil {
		return nil, err
	}
	if p.mode == 0 {
		// Only _id was given: {_id: 0} is an exclusion, {_id: 1} an
		// inclusion.
		p.mode = modeInclusion
		if k := p.root.kids["_id"]; k != nil && k.kind == pExclude {
			p.mode = modeExclusion
		}
	}
	if p.mode == modeInclusion && !idSet {
		p.root.kids["_id"] = &pnode{kind: pInclude}
		p.root.names = append([]string{"_id"}, p.root.names...)
	}
	if p.mode == modeInclusion {
		// An excluded _id in an inclusion is just absent.
		if k := p.root.kids["_id"]; k != nil && k.kind == pExclude {
			delete(p.root.kids, "_id")
			p.root.names = removeName(p.root.names, "_id")
		}
	}
	return p, nil
}

func removeName(names []string, n string) []string {
	out := names[:0:0]
	for _, x := range names {
		if x != n {
			out = append(out, x)
		}
	}
	return out
}

// parseLevel parses the fields of one level of the spec; prefix is the
// dotted path of the level.
func (p *projection) parseLevel(pc *parseCtx, spec bson.Raw, elems []bson.RawElement, prefix string, idSet *bool) error {
	for _, el := range elems {
		k := el.Key()
		full := k
		if prefix != "" {
			full = prefix + "." + k
		}
		for _, part := range strings.Split(k, ".") {
			if err := expr.ValidateFieldName(part); err != nil {
				return err
			}
		}
		v := el.Value()
		isID := full == "_id"
		if isID {
			*idSet = true
		}
		switch {
		case p.mode != modeAddFields && (v.Type == bson.TypeBoolean || isNumeric(v)):
			include := expr.Truthy(v)
			if include {
				if p.mode == modeExclusion {
					if !isID {
						return mongoerr.Newf(mongoerr.Code(31253), "Cannot do inclusion on field %s in exclusion projection", full)
					}
				} else if !isID {
					p.mode = modeInclusion
				}
				if err := p.put(full, &pnode{kind: pInclude}); err != nil {
					return err
				}
			} else {
				if p.mode == modeInclusion && !isID {
					return mongoerr.Newf(mongoerr.Code(31254), "Cannot do exclusion on field %s in inclusion projection", full)
				}
				if !isID {
					p.mode = modeExclusion
				}
				if err := p.put(full, &pnode{kind: pExclude}); err != nil {
					return err
				}
			}
		case v.Type == bson.TypeEmbeddedDocument && !isExprDoc(v):
			sub := v.Document()
			subElems, err := sub.Elements()
			if err != nil {
				return mongoerr.New(mongoerr.InvalidBSON, err.Error())
			}
			if len(subElems) == 0 {
				if p.mode == modeAddFields {
					if err := p.putExpr(pc, full, v); err != nil {
						return err
					}
					continue
				}
				return mongoerr.Newf(mongoerr.Code(51270), "An empty sub-projection is not a valid value. Found empty object at path")
			}
			if err := p.parseLevel(pc, sub, subElems, full, idSet); err != nil {
				return err
			}
		default:
			if p.mode == modeExclusion {
				return mongoerr.Newf(mongoerr.Code(40182), "Bad projection specification, cannot include fields or add computed fields during an exclusion projection: %s", spec.String())
			}
			if p.mode == 0 {
				p.mode = modeInclusion
			}
			if err := p.putExpr(pc, full, v); err != nil {
				return err
			}
		}
	}
	return nil
}

// isExprDoc reports whether v is an operator document {$op: …}.
func isExprDoc(v bson.RawValue) bool {
	doc, ok := v.DocumentOK()
	if !ok {
		return false
	}
	first, err := doc.IndexErr(0)
	return err == nil && strings.HasPrefix(first.Key(), "$")
}

func isNumeric(v bson.RawValue) bool {
	switch v.Type {
	case bson.TypeInt32, bson.TypeInt64, bson.TypeDouble, bson.TypeDecimal128:
		return true
	}
	return false
}

func (p *projection) putExpr(pc *parseCtx, full string, v bson.RawValue) error {
	e, err := pc.parseExpr(v, &p.deps)
	if err != nil {
		return err
	}
	return p.put(full, &pnode{kind: pExpr, e: e})
}

// put places a leaf at a dotted path, checking path collisions.
func (p *projection) put(full string, leaf *pnode) error {
	parts := strings.Split(full, ".")
	n := p.root
	for i, part := range parts {
		last := i == len(parts)-1
		k, ok := n.kids[part]
		if last {
			if ok {
				return mongoerr.Newf(mongoerr.Code(31250), "Path collision at %s", full)
			}
			n.kids[part] = leaf
			n.names = append(n.names, part)
			if leaf.kind == pExpr {
				markExpr(p.root, parts)
			}
			return nil
		}
		if ok && k.kind != pBranch {
			return mongoerr.Newf(mongoerr.Code(31249), "Path collision at %s remaining portion %s", full, strings.Join(parts[i+1:], "."))
		}
		if !ok {
			k = newBranch()
			n.kids[part] = k
			n.names = append(n.names, part)
		}
		n = k
	}
	return nil
}

func markExpr(n *pnode, parts []string) {
	for _, part := range parts {
		n.hasExpr = true
		n = n.kids[part]
	}
}

// apply runs the projection over doc with c's variables; $$ROOT and
// $$CURRENT are set to doc.
func (p *projection) apply(c *expr.Ctx, doc bson.Raw) (bson.Raw, error) {
	if p.hasExprs() {
		c.SetRoot(doc)
	}
	switch p.mode {
	case modeExclusion:
		return excludeDoc(p.root, doc), nil
	case modeInclusion:
		return includeDoc(c, p.root, doc)
	default:
		return addDoc(c, p.root, doc)
	}
}

func (p *projection) hasExprs() bool { return p.root.hasExpr }

// checkSize fails when a built document exceeds the BSON limit.
func checkSize(b *expr.DocBuilder) error {
	if b.Size() > expr.MaxBSONSize {
		return mongoerr.New(mongoerr.BSONObjectTooLarge, "BSONObj size is invalid: the document exceeds the maximum BSON size")
	}
	return nil
}

// includeDoc applies an inclusion node to a document.
func includeDoc(c *expr.Ctx, n *pnode, d bson.Raw) (bson.Raw, error) {
	b := expr.NewDocBuilder()
	seen := map[string]bool{}
	elems, _ := d.Elements()
	for _, el := range elems {
		k := el.Key()
		kid := n.kids[k]
		if kid == nil || seen[k] {
			continue
		}
		switch kid.kind {
		case pInclude:
			b.Append(k, el.Value())
			seen[k] = true
		case pBranch:
			v, err := includeValue(c, kid, el.Value())
			if err != nil {
				return nil, err
			}
			b.Append(k, v)
			seen[k] = true
		}
	}
	for _, k := range n.names {
		kid := n.kids[k]
		if seen[k] {
			continue
		}
		switch {
		case kid.kind == pExpr:
			v, err := kid.e.Eval(c)
			if err != nil {
				return nil, err
			}
			b.Append(k, v)
		case kid.kind == pBranch && kid.hasExpr:
			v, err := includeValue(c, kid, bson.RawValue{})
			if err != nil {
				return nil, err
			}
			b.Append(k, v)
		}
	}
	if err := checkSize(b); err != nil {
		return nil, err
	}
	return b.Doc(), nil
}

var emptyDoc = bson.Raw{5, 0, 0, 0, 0}

// includeValue applies an inclusion branch to the value of its field.
func includeValue(c *expr.Ctx, n *pnode, v bson.RawValue) (bson.RawValue, error) {
	switch v.Type {
	case bson.TypeEmbeddedDocument:
		d, err := includeDoc(c, n, v.Document())
		return expr.Doc(d), err
	case bson.TypeArray:
		ab := expr.NewArrayBuilder(0)
		for _, el := range expr.Values(v) {
			// The inclusion drops scalars inside arrays before any
			// computed field is added (mongod's two passes).
			if el.Type != bson.TypeEmbeddedDocument && el.Type != bson.TypeArray {
				continue
			}
			r, err := includeValue(c, n, el)
			if err != nil {
				return bson.RawValue{}, err
			}
			if r.Type != 0 {
				ab.Append(r)
			}
		}
		return ab.Value(), nil
	}
	if !n.hasExpr {
		return bson.RawValue{}, nil
	}
	d, err := includeDoc(c, n, emptyDoc)
	return expr.Doc(d), err
}

// excludeDoc applies an exclusion node to a document.
func excludeDoc(n *pnode, d bson.Raw) bson.Raw {
	b := expr.NewDocBuilder()
	elems, _ := d.Elements()
	for _, el := range elems {
		k := el.Key()
		kid := n.kids[k]
		switch {
		case kid == nil || kid.kind == pInclude:
			b.Append(k, el.Value())
		case kid.kind == pBranch:
			b.Append(k, excludeValue(kid, el.Value()))
		}
	}
	return b.Doc()
}

func excludeValue(n *pnode, v bson.RawValue) bson.RawValue {
	switch v.Type {
	case bson.TypeEmbeddedDocument:
		return expr.Doc(excludeDoc(n, v.Document()))
	case bson.TypeArray:
		ab := expr.NewArrayBuilder(0)
		for _, el := range expr.Values(v) {
			ab.Append(excludeValue(n, el))
		}
		return ab.Value()
	}
	return v
}

// addDoc applies an $addFields node to a document: existing fields keep
// their place, new ones follow in spec order.
func addDoc(c *expr.Ctx, n *pnode, d bson.Raw) (bson.Raw, error) {
	b := expr.NewDocBuilder()
	seen := map[string]bool{}
	elems, _ := d.Elements()
	for _, el := range elems {
		k := el.Key()
		kid := n.kids[k]
		if seen[k] {
			continue
		}
		switch {
		case kid == nil:
			b.Append(k, el.Value())
			continue
		case kid.kind == pExpr:
			v, err := kid.e.Eval(c)
			if err != nil {
				return nil, err
			}
			b.Append(k, v)
		case kid.kind == pBranch:
			v, err := addValue(c, kid, el.Value())
			if err != nil {
				return nil, err
			}
			b.Append(k, v)
		case kid.kind == pExclude:
		}
		seen[k] = true
	}
	for _, k := range n.names {
		kid := n.kids[k]
		if seen[k] {
			continue
		}
		switch kid.kind {
		case pExpr:
			v, err := kid.e.Eval(c)
			if err != nil {
				return nil, err
			}
			b.Append(k, v)
		case pBranch:
			if !kid.hasExpr {
				continue
			}
			v, err := addValue(c, kid, bson.RawValue{})
			if err != nil {
				return nil, err
			}
			b.Append(k, v)
		}
	}
	if err := checkSize(b); err != nil {
		return nil, err
	}
	return b.Doc(), nil
}

func addValue(c *expr.Ctx, n *pnode, v bson.RawValue) (bson.RawValue, error) {
	switch v.Type {
	case bson.TypeEmbeddedDocument:
		d, err := addDoc(c, n, v.Document())
		return expr.Doc(d), err
	case bson.TypeArray:
		ab := expr.NewArrayBuilder(0)
		for _, el := range expr.Values(v) {
			r, err := addValue(c, n, el)
			if err != nil {
				return bson.RawValue{}, err
			}
			ab.Append(r)
		}
		return ab.Value(), nil
	}
	d, err := addDoc(c, n, emptyDoc)
	return expr.Doc(d), err
}

// changedTop returns the top-level fields the projection changes or
// removes ($addFields and exclusions), for moving a $match ahead of it.
func (p *projection) changedTop() map[string]bool {
	out := map[string]bool{}
	for _, k := range p.root.names {
		out[k] = true
	}
	return out
}
