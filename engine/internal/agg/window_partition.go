package agg

import (
	"math"

	"go.mongodb.org/mongo-driver/v2/bson"

	"github.com/formworkdb/formwork/engine/internal/bsonkit"
	"github.com/formworkdb/formwork/engine/internal/expr"
	"github.com/formworkdb/formwork/engine/internal/mongoerr"
)

// winPartition is one buffered partition of $setWindowFields, in sortBy
// order, with what the window functions share: the evaluation context,
// the values of the single sortBy field, and the memory account.
type winPartition struct {
	docs  []bson.Raw // the documents, while in memory
	spill *winSpill  // the documents, once spilled to disk
	ctx   *expr.Ctx
	sort  *winSort
	mem   *winMemory

	sortVals []bson.RawValue // the sortBy field of each document, computed on first use
	typed    [2][2]int       // [numbers|dates] → first and last index of that type, -1 when none
}

// len is the number of documents in the partition.
func (p *winPartition) len() int {
	if p.spill != nil {
		return len(p.spill.offs)
	}
	return len(p.docs)
}

// doc returns document i, from memory or from the spill file.
func (p *winPartition) doc(i int) (bson.Raw, error) {
	if p.spill != nil {
		return p.spill.doc(i)
	}
	return p.docs[i], nil
}

// eval evaluates e against document i. The result may alias the document
// in memory; from a spilled partition it is a copy.
func (p *winPartition) eval(e expr.Expr, i int) (bson.RawValue, error) {
	d, err := p.doc(i)
	if err != nil {
		return bson.RawValue{}, err
	}
	p.ctx.SetRoot(d)
	v, err := e.Eval(p.ctx)
	if err != nil || p.spill == nil {
		return v, err
	}
	return cloneValue(v), nil
}

// evalAll evaluates e against every document, counting the values against
// the memory limit.
func (p *winPartition) evalAll(e expr.Expr) ([]bson.RawValue, error) {
	out := make([]bson.RawValue, p.len())
	for i := range out {
		v, err := p.eval(e, i)
		if err != nil {
			return nil, err
		}
		out[i] = v
	}
	return out, nil
}

// sortValues returns the value of the single sortBy field of each
// document (missing where absent).
func (p *winPartition) sortValues() ([]bson.RawValue, error) {
	if p.sortVals != nil || p.len() == 0 {
		return p.sortVals, nil
	}
	vals, err := p.evalAll(p.sort.first)
	if err != nil {
		return nil, err
	}
	p.sortVals = vals
	for k := range p.typed {
		p.typed[k] = [2]int{-1, -1}
	}
	for i, v := range vals {
		k := -1
		switch {
		case bsonkit.IsNumber(v.Type):
			k = 0
		case v.Type == bson.TypeDateTime:
			k = 1
		}
		if k < 0 {
			continue
		}
		if p.typed[k][0] < 0 {
			p.typed[k][0] = i
		}
		p.typed[k][1] = i
	}
	return vals, nil
}

// endpoints returns the window w of document i as the inclusive index
// range [lo, hi]; ok is false when the window is empty. Range windows fail
// with mongod's codes when the current document's sortBy value is not of
// the window's type (5429413, 5429414, 5429513) or the sortBy is
// descending (5429404).
func (p *winPartition) endpoints(w winBounds, i int) (lo, hi int, ok bool, err error) {
	n := p.len()
	if !w.rng {
		lo, hi = 0, n-1
		if w.lo.kind == boundCurrent {
			lo = i
		} else if w.lo.kind == boundValue {
			lo = clampAdd(i, w.lo.n)
		}
		if w.hi.kind == boundCurrent {
			hi = i
		} else if w.hi.kind == boundValue {
			hi = clampAdd(i, w.hi.n)
		}
		if lo > n-1 || hi < 0 {
			return 0, 0, false, nil
		}
		return max(lo, 0), min(hi, n-1), true, nil
	}
	if p.sort.dirs[0] < 0 {
		return 0, 0, false, mongoerr.New(mongoerr.Code(5429404), "Missing _sortExpr with range-based bounds")
	}
	vals, err := p.sortValues()
	if err != nil {
		return 0, 0, false, err
	}
	base := vals[i]
	k := 0
	if w.unit != "" {
		if base.Type != bson.TypeDateTime {
			return 0, 0, false, mongoerr.Newf(mongoerr.Code(5429513), "Invalid range: Expected the sortBy field to be a Date, but it was %s", typeNameOf(base))
		}
		k = 1
	} else {
		if base.Type == bson.TypeDateTime {
			return 0, 0, false, mongoerr.New(mongoerr.Code(5429413), "Invalid range: For windows that involve date or time ranges, a unit must be provided.")
		}
		if !bsonkit.IsNumber(base.Type) {
			return 0, 0, false, mongoerr.Newf(mongoerr.Code(5429414), "Invalid range: Expected the sortBy field to be a number, but it was %s", typeNameOf(base))
		}
	}
	first, last := p.typed[k][0], p.typed[k][1]
	switch w.lo.kind {
	case boundCurrent:
		lo = i
	case boundUnbounded:
		lo = first
	default:
		thr := rangeThreshold(base, w.lo, w.unit)
		lo = -1
		// The first document of the typed block at or above the threshold.
		a, b := first, last+1
		for a < b {
			m := (a + b) / 2
			if bsonkit.Compare(vals[m], thr) < 0 {
				a = m + 1
			} else {
				b = m
			}
		}
		if a > last {
			return 0, 0, false, nil
		}
		lo = a
	}
	switch w.hi.kind {
	case boundCurrent:
		hi = i
	case boundUnbounded:
		hi = last
	default:
		thr := rangeThreshold(base, w.hi, w.unit)
		// The last document from lo on at or below the threshold.
		a, b := lo, last+1
		for a < b {
			m := (a + b) / 2
			if bsonkit.Compare(vals[m], thr) <= 0 {
				a = m + 1
			} else {
				b = m
			}
		}
		hi = a - 1
	}
	if hi < lo {
		return 0, 0, false, nil
	}
	return lo, hi, true, nil
}

// clampAdd returns i+d clamped to the int range that endpoints use.
func clampAdd(i int, d int64) int {
	r := int64(i) + d
	if r > math.MaxInt32 {
		return math.MaxInt32
	}
	if r < math.MinInt32 {
		return math.MinInt32
	}
	return int(r)
}

// rangeThreshold is base + the bound's offset: dates move by the unit,
// numbers add exactly where both are integers and in double precision
// otherwise.
func rangeThreshold(base bson.RawValue, b winBound, unit string) bson.RawValue {
	if unit != "" {
		r, ok := dateAdd(base.DateTime(), unit, b.n)
		if !ok {
			if b.n < 0 {
				return expr.Date(math.MinInt64)
			}
			return expr.Date(math.MaxInt64)
		}
		return expr.Date(r)
	}
	x, xok := intOf(base)
	y, yok := intOf(b.v)
	if xok && yok {
		if s := x + y; (s > x) == (y > 0) || y == 0 {
			return expr.Int64(s)
		}
	}
	fx, _ := bsonkit.Float64(base)
	fy, _ := bsonkit.Float64(b.v)
	return expr.Double(fx + fy)
}

// intOf returns an int or long value as an int64.
func intOf(v bson.RawValue) (int64, bool) {
	switch v.Type {
	case bson.TypeInt32:
		return int64(v.Int32()), true
	case bson.TypeInt64:
		return v.Int64(), true
	}
	return 0, false
}

// typeNameOf names v's type as mongod's messages do, "missing" included.
func typeNameOf(v bson.RawValue) string {
	if v.Type == 0 {
		return "missing"
	}
	return bsonkit.TypeName(v.Type)
}
