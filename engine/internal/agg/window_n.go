package agg

import (
	"go.mongodb.org/mongo-driver/v2/bson"

	"github.com/formworkdb/formwork/engine/internal/expr"
)

func init() {
	for _, n := range []string{"$firstN", "$lastN", "$minN", "$maxN", "$topN", "$bottomN", "$top", "$bottom"} {
		registerWin(n, parseWinN)
	}
}

// winNFunc is an n-function ($firstN, $lastN, $minN, $maxN, $topN,
// $bottomN, $top, $bottom) computed by the $group accumulator of the same
// name over the window's documents. A whole-partition window runs the
// accumulator once and a left-unbounded one feeds it incrementally; a
// sliding window runs it afresh for each document (O(window) each, as
// these functions are not removable here).
type winNFunc struct {
	make func(c *expr.Ctx) (accumulator, error)
	win  winBounds
}

// parseWinN parses {$topN: {...}, window: {...}} as ExpressionN::parse
// does: the accumulator's own codes for its argument, FailedToParse for a
// second window or an unknown field.
func parseWinN(env *winParseEnv, name string, spec bson.Raw) (winFunc, error) {
	f := &winNFunc{win: wholePartition}
	seenWindow := false
	for _, el := range mustElems(spec) {
		switch el.Key() {
		case name:
			if f.make != nil {
				return nil, failedToParse("saw multiple specifications for '%s' expression", name)
			}
			mk, err := accums[name](env.pc, name, el.Value(), &expr.Deps{})
			if err != nil {
				return nil, err
			}
			f.make = mk
		case "window":
			if seenWindow {
				return nil, failedToParse("saw multiple 'window' fields in '%s' expression", name)
			}
			seenWindow = true
			w, err := parseWindow(el.Value(), env.sortBy)
			if err != nil {
				return nil, err
			}
			f.win = w
		default:
			return nil, failedToParse("%s got unexpected argument: %s", name, el.Key())
		}
	}
	return f, nil
}

func (f *winNFunc) start(p *winPartition) (winCursor, error) {
	// 'n' is evaluated without a document, as mongod's window functions
	// do: a field path in it is missing.
	nctx := &expr.Ctx{Vars: append([]bson.RawValue(nil), p.ctx.Vars...), Now: p.ctx.Now, ClusterTime: p.ctx.ClusterTime, Collation: p.ctx.Collation}
	nctx.SetRoot(newEmptyDoc())
	feed := func(acc accumulator, lo, hi int) error {
		for j := lo; j <= hi; j++ {
			d, err := p.doc(j)
			if err != nil {
				return err
			}
			p.ctx.SetRoot(d)
			if err := acc.process(p.ctx); err != nil {
				return err
			}
		}
		return nil
	}
	if f.win.whole() {
		acc, err := f.make(nctx)
		if err != nil {
			return nil, err
		}
		if err := feed(acc, 0, p.len()-1); err != nil {
			return nil, err
		}
		v, err := acc.result()
		if err != nil {
			return nil, err
		}
		return func(int) (bson.RawValue, error) { return v, nil }, nil
	}
	var inc accumulator
	fed := -1
	return func(i int) (bson.RawValue, error) {
		lo, hi, ok, err := p.endpoints(f.win, i)
		if err != nil {
			return bson.RawValue{}, err
		}
		if !ok {
			acc, err := f.make(nctx)
			if err != nil {
				return bson.RawValue{}, err
			}
			return acc.result()
		}
		if f.win.leftUnbounded() {
			if inc == nil {
				if inc, err = f.make(nctx); err != nil {
					return bson.RawValue{}, err
				}
			}
			if err := feed(inc, max(fed+1, lo), hi); err != nil {
				return bson.RawValue{}, err
			}
			fed = max(fed, hi)
			return inc.result()
		}
		acc, err := f.make(nctx)
		if err != nil {
			return bson.RawValue{}, err
		}
		if err := feed(acc, lo, hi); err != nil {
			return bson.RawValue{}, err
		}
		return acc.result()
	}, nil
}
