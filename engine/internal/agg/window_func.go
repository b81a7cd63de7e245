package agg

import (
	"strings"

	"go.mongodb.org/mongo-driver/v2/bson"

	"github.com/formworkdb/formwork/engine/internal/expr"
	"github.com/formworkdb/formwork/engine/internal/mongoerr"
)

// winFunc is one parsed output of $setWindowFields. It is immutable after
// parsing; compute runs it over one partition.
type winFunc interface {
	// start begins the function over partition p and returns a cursor
	// that yields its value for documents 0, 1, 2 … in turn (missing
	// removes the output field).
	start(p *winPartition) (winCursor, error)
}

// winCursor returns a window function's value for document i of the
// partition; it is called with i = 0, 1, 2 … in order.
type winCursor func(i int) (bson.RawValue, error)

// winComputer is a window function that computes all its values of a
// partition at once; they are small or alias the partition's documents.
type winComputer interface {
	compute(p *winPartition, out []bson.RawValue) error
}

// eagerStart starts a winComputer: it fills the values (counted against the
// memory limit until the partition is done) and hands them out.
func eagerStart(c winComputer, p *winPartition) (winCursor, error) {
	out := make([]bson.RawValue, p.len())
	if err := c.compute(p, out); err != nil {
		return nil, err
	}
	if err := p.mem.hold(valuesBytes(out)); err != nil {
		return nil, err
	}
	return func(i int) (bson.RawValue, error) { return out[i], nil }, nil
}

// winParseEnv is what a window function parser needs: the stage's sortBy
// (nil when absent) and the expression scope.
type winParseEnv struct {
	sortBy *winSort
	scope  *expr.Scope
	pc     *parseCtx // for the $group accumulators the n-functions reuse
}

// parseInput parses a window function's input expression.
func (e *winParseEnv) parseInput(v bson.RawValue) (expr.Expr, error) {
	return expr.Parse(v, e.scope)
}

// winParser parses the whole output specification of one function, such
// as {$sum: "$x", window: {...}}, whose field name is the function's.
type winParser func(env *winParseEnv, name string, spec bson.Raw) (winFunc, error)

// winFuncs maps window function names ("$sum") to their parsers; the
// window_*.go files fill it in init functions.
var winFuncs = map[string]winParser{}

// registerWin adds a window function; it panics on a duplicate.
func registerWin(name string, p winParser) {
	if _, dup := winFuncs[name]; dup {
		panic("agg: window function registered twice: " + name)
	}
	winFuncs[name] = p
}

// parseWinFunc parses one output field's specification as
// window_function::Expression::parse does: the first $-prefixed field
// names the function (FailedToParse for an unknown one, or when there is
// none).
func parseWinFunc(env *winParseEnv, field string, v bson.RawValue) (winFunc, error) {
	if v.Type != bson.TypeEmbeddedDocument {
		return nil, failedToParse("The field '%s' must be an object", field)
	}
	spec := v.Document()
	elems, err := spec.Elements()
	if err != nil {
		return nil, mongoerr.New(mongoerr.InvalidBSON, err.Error())
	}
	for _, el := range elems {
		k := el.Key()
		if !strings.HasPrefix(k, "$") {
			continue
		}
		p, ok := winFuncs[k]
		if !ok {
			return nil, failedToParse("Unrecognized window function, %s", k)
		}
		return p(env, k, spec)
	}
	msg := "Expected a $-prefixed window function"
	if len(elems) > 0 && elems[0].Key() != "" {
		msg += ", " + elems[0].Key()
	}
	return nil, failedToParse("%s", msg)
}

// winArgs splits a function specification into the function's argument
// and its window (nil when absent), as ExpressionRemovable::parse does:
// another function name fails with "Cannot specify two functions", any
// other field with "unknown argument".
func winArgs(spec bson.Raw, name string) (arg bson.RawValue, window *bson.RawValue, err error) {
	elems, _ := spec.Elements()
	found := false
	for _, el := range elems {
		k := el.Key()
		switch {
		case k == "window":
			w := el.Value()
			window = &w
		case isWinFunc(k):
			if found {
				return arg, nil, failedToParse("Cannot specify two functions in window function spec")
			}
			found = true
			arg = el.Value()
		default:
			return arg, nil, failedToParse("Window function found an unknown argument: %s", k)
		}
	}
	if !found {
		return arg, nil, failedToParse("Must specify a window function in output field")
	}
	return arg, window, nil
}

// isWinFunc reports whether name is a window function.
func isWinFunc(name string) bool {
	_, ok := winFuncs[name]
	return ok
}

// parseBounds parses an optional window, defaulting to the whole
// partition.
func (e *winParseEnv) parseBounds(window *bson.RawValue) (winBounds, error) {
	if window == nil {
		return wholePartition, nil
	}
	return parseWindow(*window, e.sortBy)
}
