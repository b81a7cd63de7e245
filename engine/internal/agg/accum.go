package agg

import (
	"go.mongodb.org/mongo-driver/v2/bson"

	"github.com/formworkdb/formwork/engine/internal/collation"
	"github.com/formworkdb/formwork/engine/internal/expr"
	"github.com/formworkdb/formwork/engine/internal/mongoerr"
)

// accumulator is the per-group state of one $group accumulator. It is
// used by one goroutine.
type accumulator interface {
	// process folds one input document (already set as $$ROOT in c).
	process(c *expr.Ctx) error
	// result returns the accumulated value (never missing).
	result() (bson.RawValue, error)
	// partial returns the state as one value, for spilling; merge folds a
	// partial of the same accumulator into this one.
	partial() (bson.RawValue, error)
	merge(p bson.RawValue) error
	// memory is the approximate bytes the state holds.
	memory() int64
}

// accumSpec is a parsed accumulator ({$sum: "$a"}): it makes a new state
// for each group.
type accumSpec struct {
	name string        // "$sum"
	arg  bson.RawValue // the argument as written, for explain
	deps expr.Deps
	// make returns a fresh state; c has $$ROOT set to {_id: key} so that
	// an 'n' argument may read the group key.
	make func(c *expr.Ctx) (accumulator, error)
}

// accumParser parses an accumulator's argument.
type accumParser func(pc *parseCtx, name string, arg bson.RawValue, d *expr.Deps) (func(c *expr.Ctx) (accumulator, error), error)

// accums maps each accumulator name to its parser; accum_*.go files fill
// it in their init functions.
var accums = map[string]accumParser{}

// registerAccum adds an accumulator; it panics on a duplicate.
func registerAccum(name string, f accumParser) {
	if _, dup := accums[name]; dup {
		panic("agg: accumulator registered twice: " + name)
	}
	accums[name] = f
}

// parseAccumField parses one output field of $group, {name: {$acc: arg}},
// with mongod's codes: 40234 not an accumulator object, 40235 a dotted
// name, 40236 a $-name, 40238 more than one accumulator, 15952 unknown.
func parseAccumField(pc *parseCtx, field string, v bson.RawValue) (*accumSpec, error) {
	doc, ok := v.DocumentOK()
	if !ok || len(mustElems(doc)) == 0 || mustElems(doc)[0].Key()[0] != '$' {
		return nil, mongoerr.Newf(mongoerr.Code(40234), "The field '%s' must be an accumulator object", field)
	}
	for i := 0; i < len(field); i++ {
		if field[i] == '.' {
			return nil, mongoerr.Newf(mongoerr.Code(40235), "The field name '%s' cannot contain '.'", field)
		}
	}
	if field[0] == '$' {
		return nil, mongoerr.Newf(mongoerr.Code(40236), "The field name '%s' cannot be an operator name", field)
	}
	elems := mustElems(doc)
	if len(elems) != 1 {
		return nil, mongoerr.Newf(mongoerr.Code(40238), "The field '%s' must specify one accumulator", field)
	}
	name := elems[0].Key()
	p, ok := accums[name]
	if !ok {
		return nil, mongoerr.Newf(mongoerr.Code(15952), "unknown group operator '%s'", name)
	}
	s := &accumSpec{name: name, arg: elems[0].Value()}
	mk, err := p(pc, name, elems[0].Value(), &s.deps)
	if err != nil {
		return nil, err
	}
	s.make = mk
	return s, nil
}

// unaryArg parses the single expression argument of $sum, $avg, $push …:
// an array argument fails with 40237.
func unaryArg(pc *parseCtx, name string, arg bson.RawValue, d *expr.Deps) (expr.Expr, error) {
	if arg.Type == bson.TypeArray {
		return nil, mongoerr.Newf(mongoerr.Code(40237), "The %s accumulator is a unary operator", name)
	}
	return pc.parseExpr(arg, d)
}

// valueSize approximates the memory a value takes.
func valueSize(v bson.RawValue) int64 { return int64(len(v.Value)) + 16 }

// simpleAccum adapts a value-folding state to accumulator: the argument
// is evaluated and handed to add.
type simpleAccum struct {
	e     expr.Expr
	state valueState
}

// valueState folds evaluated values.
type valueState interface {
	add(v bson.RawValue) error
	result() (bson.RawValue, error)
	partial() (bson.RawValue, error)
	merge(p bson.RawValue) error
	memory() int64
}

func (a *simpleAccum) process(c *expr.Ctx) error {
	v, err := a.e.Eval(c)
	if err != nil {
		return err
	}
	return a.state.add(v)
}
func (a *simpleAccum) result() (bson.RawValue, error)  { return a.state.result() }
func (a *simpleAccum) partial() (bson.RawValue, error) { return a.state.partial() }
func (a *simpleAccum) merge(p bson.RawValue) error     { return a.state.merge(p) }
func (a *simpleAccum) memory() int64                   { return a.state.memory() }

// registerUnary registers an accumulator with one expression argument
// whose state newState makes.
func registerUnary(name string, newState func() valueState) {
	registerAccum(name, func(pc *parseCtx, name string, arg bson.RawValue, d *expr.Deps) (func(c *expr.Ctx) (accumulator, error), error) {
		e, err := unaryArg(pc, name, arg, d)
		if err != nil {
			return nil, err
		}
		return func(c *expr.Ctx) (accumulator, error) {
			st := newState()
			if cs, ok := st.(collated); ok && c != nil {
				cs.setCollation(c.Collation)
			}
			return &simpleAccum{e: e, state: st}, nil
		}, nil
	})
}

// collated is a value state whose comparisons follow the collation
// ($min, $max, $addToSet).
type collated interface {
	setCollation(c *collation.Collator)
}
