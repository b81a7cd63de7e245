package agg

import (
	"time"

	"go.mongodb.org/mongo-driver/v2/bson"

	"github.com/formworkdb/formwork/engine/internal/collation"
	"github.com/formworkdb/formwork/engine/internal/expr"
	"github.com/formworkdb/formwork/engine/internal/match"
	"github.com/formworkdb/formwork/engine/internal/mongoerr"
)

// Filter is a query filter that may use $expr wherever the query language
// allows it: at the top level and under $and, $or and $nor, at any depth.
//
// Package match validates the whole filter (match.CompileEnv with the
// visible variables, so its errors are the host's) and runs every part
// without $expr. The $expr operands are parsed here, in the pipeline's
// scope, so that they read the run's variables directly: $lookup's let
// values change with each input document and may be missing, which a
// constant let document could not carry.
type Filter struct {
	root filterNode
	deps expr.Deps
}

// filterNode is one filter document: the implicit and of its $expr-free
// predicates (m), its $expr clauses and its logical operators that hold
// $expr below them.
type filterNode struct {
	m     *match.Filter
	exprs []expr.Expr
	kids  []logicalNode
}

// logicalNode is {$and|$or|$nor: [filter, …]} with $expr below it.
type logicalNode struct {
	op   string
	docs []filterNode
}

// compileFilter compiles filter in scope sc, where the user variables
// vars are visible; now is the run's $$NOW.
func compileFilter(filter bson.Raw, sc *expr.Scope, vars []letVar, now time.Time) (*Filter, error) {
	env := match.Env{Now: now, Collation: sc.Collation()}
	if len(vars) > 0 {
		b := expr.NewDocBuilder()
		for _, v := range vars {
			b.Append(v.name, expr.Null())
		}
		env.Let = b.Doc()
	}
	whole, err := match.CompileEnv(filter, env)
	if err != nil {
		return nil, err
	}
	f := &Filter{}
	if !hasExpr(filter, 0) {
		f.root.m = whole
		f.deps.Paths = whole.Paths()
	} else if err := f.compileDoc(&f.root, filter, sc, 0); err != nil {
		return nil, err
	}
	if readsWhole(filter, 0) {
		f.deps.Whole = true
	}
	return f, nil
}

// readsWhole reports whether the filter document d holds an operator
// that reads the whole document ($jsonSchema, $where, $text) at a
// position the query language allows them (the top level, under $and,
// $or, $nor), so no stage that changes a field may run after it. Past
// the depth limit it answers true, the safe side.
func readsWhole(d bson.Raw, depth int) bool {
	return hasTopLevel(d, depth, true, func(k string) bool {
		return k == "$jsonSchema" || k == "$where" || k == "$text"
	})
}

// hasExpr reports whether the filter document d holds $expr at a position
// the query language allows (the top level, under $and, $or, $nor).
func hasExpr(d bson.Raw, depth int) bool {
	return hasTopLevel(d, depth, false, func(k string) bool { return k == "$expr" })
}

// hasTopLevel reports whether the filter document d holds an operator
// match accepts at the top level or under $and, $or and $nor, at any
// depth up to expr.MaxDepth; past it, it answers deep.
func hasTopLevel(d bson.Raw, depth int, deep bool, match func(key string) bool) bool {
	if depth > expr.MaxDepth {
		return deep
	}
	for _, el := range mustElems(d) {
		switch k := el.Key(); {
		case match(k):
			return true
		case k == "$and" || k == "$or" || k == "$nor":
			arr, ok := el.Value().ArrayOK()
			if !ok {
				continue
			}
			vals, _ := arr.Values()
			for _, v := range vals {
				if sub, ok := v.DocumentOK(); ok && hasTopLevel(sub, depth+1, deep, match) {
					return true
				}
			}
		}
	}
	return false
}

// compileDoc splits the (already validated) filter document d into n.
func (f *Filter) compileDoc(n *filterNode, d bson.Raw, sc *expr.Scope, depth int) error {
	elems, err := d.Elements()
	if err != nil {
		return mongoerr.New(mongoerr.InvalidBSON, err.Error())
	}
	rest := expr.NewDocBuilder()
	nrest := 0
	for _, el := range elems {
		switch el.Key() {
		case "$expr":
			e, err := expr.ParseDeps(el.Value(), sc, &f.deps)
			if err != nil {
				return err
			}
			n.exprs = append(n.exprs, e)
			continue
		case "$and", "$or", "$nor":
			sub := bson.Raw(nil)
			if arr, ok := el.Value().ArrayOK(); ok {
				sub = bson.Raw(arr)
			}
			if sub != nil && hasExpr(wrapArray(el.Key(), el.Value()), depth) {
				vals, _ := sub.Values()
				ln := logicalNode{op: el.Key(), docs: make([]filterNode, len(vals))}
				for i, v := range vals {
					if err := f.compileDoc(&ln.docs[i], v.Document(), sc, depth+1); err != nil {
						return err
					}
				}
				n.kids = append(n.kids, ln)
				continue
			}
		}
		rest.Append(el.Key(), el.Value())
		nrest++
	}
	if nrest > 0 {
		m, err := match.CompileEnv(rest.Doc(), match.Env{Collation: sc.Collation()})
		if err != nil {
			return err
		}
		n.m = m
		f.deps.Paths = append(f.deps.Paths, m.Paths()...)
	}
	return nil
}

// wrapArray returns {key: v}.
func wrapArray(key string, v bson.RawValue) bson.Raw {
	b := expr.NewDocBuilder()
	b.Append(key, v)
	return b.Doc()
}

// NewFilter compiles a query filter whose $expr may read the variables of
// let (evaluated constants, as Query.Let carries them), for hosts and
// tests that run a Query's filter outside package match.
func NewFilter(filter, let bson.Raw, coll *collation.Collator) (*Filter, *expr.Ctx, error) {
	sc := expr.NewScope()
	sc.SetCollation(coll)
	type bind struct {
		slot int
		v    bson.RawValue
	}
	var binds []bind
	var vars []letVar
	if len(let) > 0 {
		elems, err := let.Elements()
		if err != nil {
			return nil, nil, mongoerr.New(mongoerr.InvalidBSON, err.Error())
		}
		for _, el := range elems {
			slot := sc.Define(el.Key())
			binds = append(binds, bind{slot, el.Value()})
			vars = append(vars, letVar{name: el.Key(), slot: slot})
		}
	}
	f, err := compileFilter(filter, sc, vars, time.Time{})
	if err != nil {
		return nil, nil, err
	}
	c := expr.NewCtx(sc)
	for _, b := range binds {
		c.Set(b.slot, b.v)
	}
	return f, c, nil
}

// Match reports whether doc satisfies the filter; c supplies the
// variables ($$ROOT and $$CURRENT are set to doc here).
func (f *Filter) Match(c *expr.Ctx, doc bson.Raw) (bool, error) {
	if f.root.exprs == nil && f.root.kids == nil {
		return f.root.m == nil || f.root.m.Match(doc), nil
	}
	c.SetRoot(doc)
	return f.root.match(c, doc)
}

// match evaluates one filter document.
func (n *filterNode) match(c *expr.Ctx, doc bson.Raw) (bool, error) {
	if n.m != nil && !n.m.Match(doc) {
		return false, nil
	}
	for _, e := range n.exprs {
		v, err := e.Eval(c)
		if err != nil {
			return false, err
		}
		if !expr.Truthy(v) {
			return false, nil
		}
	}
	for i := range n.kids {
		ok, err := n.kids[i].match(c, doc)
		if err != nil || !ok {
			return false, err
		}
	}
	return true, nil
}

// match evaluates $and, $or or $nor over its filter documents.
func (l *logicalNode) match(c *expr.Ctx, doc bson.Raw) (bool, error) {
	for i := range l.docs {
		ok, err := l.docs[i].match(c, doc)
		if err != nil {
			return false, err
		}
		switch {
		case l.op == "$and" && !ok:
			return false, nil
		case l.op == "$or" && ok:
			return true, nil
		case l.op == "$nor" && ok:
			return false, nil
		}
	}
	return l.op != "$or", nil
}

// paths returns the field paths the filter reads, and whether it needs
// the whole document.
func (f *Filter) paths() ([]string, bool) {
	return f.deps.Paths, f.deps.Whole
}

// mustElems returns d's elements, none when d is malformed.
func mustElems(d bson.Raw) []bson.RawElement {
	e, _ := d.Elements()
	return e
}
