package agg

import (
	"math"

	"go.mongodb.org/mongo-driver/v2/bson"

	"github.com/formworkdb/formwork/engine/internal/bsonkit"
	"github.com/formworkdb/formwork/engine/internal/expr"
)

func init() {
	registerWin("$first", parseFirstLast)
	registerWin("$last", parseFirstLast)
	registerWin("$shift", parseShift)
}

// endpointFunc is $first, $last and $shift: the input evaluated on the
// first or last document of the window, or def when the window is empty.
type endpointFunc struct {
	input expr.Expr
	win   winBounds
	last  bool
	def   bson.RawValue
}

func (f *endpointFunc) start(p *winPartition) (winCursor, error) { return eagerStart(f, p) }

func (f *endpointFunc) compute(p *winPartition, out []bson.RawValue) error {
	for i := range out {
		lo, hi, ok, err := p.endpoints(f.win, i)
		if err != nil {
			return err
		}
		if !ok {
			out[i] = f.def
			continue
		}
		j := lo
		if f.last {
			j = hi
		}
		if out[i], err = p.eval(f.input, j); err != nil {
			return err
		}
	}
	return nil
}

// parseFirstLast parses {$first: <expr>, window: {...}} as
// ExpressionFirstLast::parse does.
func parseFirstLast(env *winParseEnv, name string, spec bson.Raw) (winFunc, error) {
	f := &endpointFunc{last: name == "$last", def: expr.Null(), win: wholePartition}
	seenWindow := false
	elems, _ := spec.Elements()
	for _, el := range elems {
		switch el.Key() {
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
		case name:
			in, err := env.parseInput(el.Value())
			if err != nil {
				return nil, err
			}
			f.input = in
		default:
			return nil, failedToParse("%s got unexpected argument: %s", name, el.Key())
		}
	}
	return f, nil
}

// parseShift parses {$shift: {output: <expr>, by: <int>, default: <const>}}
// as ExpressionShift::parse does.
func parseShift(env *winParseEnv, name string, spec bson.Raw) (winFunc, error) {
	var f *endpointFunc
	elems, _ := spec.Elements()
	for _, el := range elems {
		k := el.Key()
		switch {
		case k == "window":
			return nil, failedToParse("$shift does not accept a 'window' field")
		case isWinFunc(k):
			if f != nil {
				return nil, failedToParse("Cannot specify multiple functions in window function spec")
			}
			if el.Value().Type != bson.TypeEmbeddedDocument {
				return nil, failedToParse("Argument to $shift must be an object")
			}
			var err error
			if f, err = parseShiftArgs(env, k, el.Value().Document()); err != nil {
				return nil, err
			}
		default:
			return nil, failedToParse("Window function found an unknown argument: %s", k)
		}
	}
	if env.sortBy == nil {
		return nil, failedToParse("'%s' requires a sortBy", name)
	}
	return f, nil
}

// parseShiftArgs parses $shift's argument document: output, by, default.
func parseShiftArgs(env *winParseEnv, name string, args bson.Raw) (*endpointFunc, error) {
	f := &endpointFunc{def: expr.Null()}
	haveBy := false
	elems, _ := args.Elements()
	for _, el := range elems {
		switch el.Key() {
		case "output":
			in, err := env.parseInput(el.Value())
			if err != nil {
				return nil, err
			}
			f.input = in
		case "default":
			e, err := env.parseInput(el.Value())
			if err != nil {
				return nil, err
			}
			c, ok := expr.IsConst(e)
			if !ok {
				return nil, failedToParse("'$shift:default' expression must yield a constant value.")
			}
			f.def = c
		case "by":
			by, ok := bsonkit.ExactInt64(el.Value())
			if !ok || by < math.MinInt32 || by > math.MaxInt32 {
				return nil, failedToParse("'$shift:by' field must be an integer, but found  by: %s", showElem(el.Value()))
			}
			f.win = winBounds{lo: winBound{kind: boundValue, n: by}, hi: winBound{kind: boundValue, n: by}}
			haveBy = true
		default:
			return nil, failedToParse("Unknown argument in %s", name)
		}
	}
	if f.input == nil {
		return nil, failedToParse("%s requires an 'output' expression.", name)
	}
	if !haveBy {
		return nil, failedToParse("%s requires 'by' as an integer value.", name)
	}
	return f, nil
}
