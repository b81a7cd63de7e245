package agg

import (
	"go.mongodb.org/mongo-driver/v2/bson"

	"github.com/formworkdb/formwork/engine/internal/expr"
	"github.com/formworkdb/formwork/engine/internal/match"
	"github.com/formworkdb/formwork/engine/internal/mongoerr"
)

// Filter is a query filter that may use $expr: the top-level $expr
// clauses (and those of a top-level $and) are compiled as aggregation
// expressions in the pipeline's scope, the rest by package match.
//
// Divergence: until package match compiles $expr itself, an $expr nested
// under $or, $nor, $not or $elemMatch answers NotImplemented (238).
type Filter struct {
	m     *match.Filter
	exprs []expr.Expr
	deps  expr.Deps
	sc    *expr.Scope
}

// compileFilter compiles filter in scope sc.
func compileFilter(filter bson.Raw, sc *expr.Scope) (*Filter, error) {
	f := &Filter{sc: sc}
	elems, err := filter.Elements()
	if err != nil {
		return nil, mongoerr.New(mongoerr.InvalidBSON, err.Error())
	}
	rest := expr.NewDocBuilder()
	nrest := 0
	for _, el := range elems {
		switch el.Key() {
		case "$expr":
			e, err := expr.ParseDeps(el.Value(), sc, &f.deps)
			if err != nil {
				return nil, err
			}
			f.exprs = append(f.exprs, e)
			continue
		case "$and":
			if ok, err := f.takeAnd(el.Value(), rest, &nrest); err != nil {
				return nil, err
			} else if ok {
				continue
			}
		}
		rest.Append(el.Key(), el.Value())
		nrest++
	}
	if nrest > 0 {
		if f.m, err = match.Compile(rest.Doc()); err != nil {
			return nil, err
		}
	}
	return f, nil
}

// takeAnd splits a top-level $and whose clauses are all documents: $expr
// clauses go to f.exprs, the others stay in the rest (as an $and, keeping
// match's own validation of the clauses).
func (f *Filter) takeAnd(v bson.RawValue, rest *expr.DocBuilder, nrest *int) (bool, error) {
	arr, ok := v.ArrayOK()
	if !ok {
		return false, nil
	}
	vals, err := arr.Values()
	if err != nil || len(vals) == 0 {
		return false, nil
	}
	var keep []bson.RawValue
	var exprs []bson.RawValue
	for _, cv := range vals {
		d, ok := cv.DocumentOK()
		if !ok {
			return false, nil
		}
		if e, err := d.LookupErr("$expr"); err == nil && len(mustElems(d)) == 1 {
			exprs = append(exprs, e)
			continue
		}
		keep = append(keep, cv)
	}
	if len(exprs) == 0 {
		return false, nil
	}
	for _, ev := range exprs {
		e, err := expr.ParseDeps(ev, f.sc, &f.deps)
		if err != nil {
			return false, err
		}
		f.exprs = append(f.exprs, e)
	}
	if len(keep) > 0 {
		rest.Append("$and", expr.Array(keep))
		*nrest++
	}
	return true, nil
}

func mustElems(d bson.Raw) []bson.RawElement {
	e, _ := d.Elements()
	return e
}

// NewFilter compiles a query filter whose $expr may read the variables of
// let (evaluated constants, as Query.Let carries them). Hosts may use it
// to run a Query's filter until package match handles $expr and let.
func NewFilter(filter, let bson.Raw) (*Filter, *expr.Ctx, error) {
	sc := expr.NewScope()
	type bind struct {
		slot int
		v    bson.RawValue
	}
	var binds []bind
	if len(let) > 0 {
		elems, err := let.Elements()
		if err != nil {
			return nil, nil, mongoerr.New(mongoerr.InvalidBSON, err.Error())
		}
		for _, el := range elems {
			binds = append(binds, bind{sc.Define(el.Key()), el.Value()})
		}
	}
	f, err := compileFilter(filter, sc)
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
	if f.m != nil && !f.m.Match(doc) {
		return false, nil
	}
	if len(f.exprs) == 0 {
		return true, nil
	}
	c.SetRoot(doc)
	for _, e := range f.exprs {
		v, err := e.Eval(c)
		if err != nil {
			return false, err
		}
		if !expr.Truthy(v) {
			return false, nil
		}
	}
	return true, nil
}

// paths returns the field paths the filter reads, and whether it needs
// the whole document.
func (f *Filter) paths() ([]string, bool) {
	var out []string
	if f.m != nil {
		out = append(out, f.m.Paths()...)
	}
	out = append(out, f.deps.Paths...)
	return out, f.deps.Whole
}
