package agg

import (
	"go.mongodb.org/mongo-driver/v2/bson"

	"github.com/formworkdb/formwork/engine/internal/expr"
)

// winState is the running state of an accumulating window function over
// the documents of its window. Values are added in window order and
// removed oldest first, so a window that slides forward costs one add and
// one remove per document (MongoDB's removable window functions); a
// left-unbounded window only adds (its non-removable executors).
type winState interface {
	add(v bson.RawValue) error
	// remove takes out the oldest value still in the window, v.
	remove(v bson.RawValue) error
	value() (bson.RawValue, error)
	reset()
	// bytes approximates the memory the state holds.
	bytes() int64
}

// winAccFunc is a window function computed by a winState over its window's
// inputs: $sum, $avg, $count, $min, $max, $push, $addToSet, the standard
// deviations and covariances, $integral, and the n-functions.
type winAccFunc struct {
	input expr.Expr
	win   winBounds
	// newState makes a state; removable is false for left-unbounded
	// windows, whose results some functions type differently.
	newState func(removable bool) winState
	// inputs, when set, computes the inputs instead of input.
	inputs func(p *winPartition) ([]bson.RawValue, error)
}

func (f *winAccFunc) start(p *winPartition) (winCursor, error) {
	// The inputs are evaluated as documents enter the window and kept
	// only while they are in it (a removable state removes the value it
	// added), so a spilled partition is not read into memory again.
	var get func(i int) (bson.RawValue, error)
	if f.inputs != nil {
		in, err := f.inputs(p)
		if err != nil {
			return nil, err
		}
		if err := p.mem.hold(valuesBytes(in)); err != nil {
			return nil, err
		}
		get = func(i int) (bson.RawValue, error) { return in[i], nil }
	} else {
		get = func(i int) (bson.RawValue, error) { return p.eval(f.input, i) }
	}
	removable := !f.win.leftUnbounded()
	st := f.newState(removable)
	if cs, ok := st.(collated); ok {
		cs.setCollation(p.ctx.Collation)
	}
	if f.win.whole() {
		for i := range p.len() {
			v, err := get(i)
			if err != nil {
				return nil, err
			}
			if err := st.add(v); err != nil {
				return nil, err
			}
			if i%1024 == 0 {
				if err := p.mem.check(st.bytes()); err != nil {
					return nil, err
				}
			}
		}
		if err := p.mem.check(st.bytes()); err != nil {
			return nil, err
		}
		v, err := st.value()
		if err != nil {
			return nil, err
		}
		return func(int) (bson.RawValue, error) { return v, nil }, nil
	}
	var emptyVal *bson.RawValue
	l, r := 0, -1            // the window the state holds: in[l..r]
	var held []bson.RawValue // the inputs of in[l..r] (removable windows)
	head := 0
	var heldBytes int64
	return func(i int) (bson.RawValue, error) {
		lo, hi, ok, err := p.endpoints(f.win, i)
		if err != nil {
			return bson.RawValue{}, err
		}
		if !ok {
			if emptyVal == nil {
				v, err := f.newState(removable).value()
				if err != nil {
					return bson.RawValue{}, err
				}
				emptyVal = &v
			}
			return *emptyVal, nil
		}
		if r < l || lo > r || lo < l || hi < r {
			// Disjoint from (or, never for sorted input, behind) the
			// previous window: start again.
			st.reset()
			l, r = lo, lo-1
			held, head, heldBytes = held[:0], 0, 0
		}
		for r < hi {
			r++
			v, err := get(r)
			if err != nil {
				return bson.RawValue{}, err
			}
			if err := st.add(v); err != nil {
				return bson.RawValue{}, err
			}
			if removable {
				held = append(held, v)
				heldBytes += int64(len(v.Value)) + 32
			}
		}
		for l < lo {
			v := held[head]
			held[head] = bson.RawValue{}
			head++
			heldBytes -= int64(len(v.Value)) + 32
			if err := st.remove(v); err != nil {
				return bson.RawValue{}, err
			}
			l++
		}
		if head > 1024 && head*2 > len(held) {
			held = append(held[:0], held[head:]...)
			head = 0
		}
		if err := p.mem.check(st.bytes() + heldBytes); err != nil {
			return bson.RawValue{}, err
		}
		return st.value()
	}, nil
}

// valuesBytes approximates the memory of a slice of values.
func valuesBytes(vals []bson.RawValue) int64 {
	n := int64(len(vals)) * 32
	for _, v := range vals {
		n += int64(len(v.Value))
	}
	return n
}

// parseAccFunc parses {$name: <input>, window: {...}} for a function
// computed by a winState.
func parseAccFunc(newState func(removable bool) winState) winParser {
	return func(env *winParseEnv, name string, spec bson.Raw) (winFunc, error) {
		arg, window, err := winArgs(spec, name)
		if err != nil {
			return nil, err
		}
		in, err := env.parseInput(arg)
		if err != nil {
			return nil, err
		}
		w, err := env.parseBounds(window)
		if err != nil {
			return nil, err
		}
		return &winAccFunc{input: in, win: w, newState: newState}, nil
	}
}
