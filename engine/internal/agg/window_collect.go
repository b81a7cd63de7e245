package agg

import (
	"sort"

	"go.mongodb.org/mongo-driver/v2/bson"

	"github.com/formworkdb/formwork/engine/internal/bsonkit"
	"github.com/formworkdb/formwork/engine/internal/collation"
	"github.com/formworkdb/formwork/engine/internal/expr"
)

func init() {
	registerWin("$min", parseAccFunc(func(bool) winState { return &winMinMaxState{sign: 1} }))
	registerWin("$max", parseAccFunc(func(bool) winState { return &winMinMaxState{sign: -1} }))
	registerWin("$push", parseAccFunc(func(bool) winState { return &winPushState{} }))
	registerWin("$addToSet", parseAccFunc(func(bool) winState { return &winSetState{} }))
}

// seqValue is a value with its position among the values added.
type seqValue struct {
	seq int64
	v   bson.RawValue
}

// winMinMaxState is $min (sign 1) or $max (sign -1): a monotonic deque of
// the window's candidates, so that sliding costs amortised O(1). Null,
// undefined and missing values are ignored; an empty window gives null.
type winMinMaxState struct {
	sign           int
	coll           *collation.Collator // strings compare under it (nil: simple)
	dq             []seqValue
	head           int
	added, removed int64
	size           int64
}

func (s *winMinMaxState) add(v bson.RawValue) error {
	seq := s.added
	s.added++
	if expr.IsNullish(v) {
		return nil
	}
	for len(s.dq) > s.head && s.sign*bsonkit.CompareWith(s.dq[len(s.dq)-1].v, v, s.coll) > 0 {
		s.size -= int64(len(s.dq[len(s.dq)-1].v.Value))
		s.dq = s.dq[:len(s.dq)-1]
	}
	s.dq = append(s.dq, seqValue{seq, v})
	s.size += int64(len(v.Value))
	return nil
}

func (s *winMinMaxState) remove(bson.RawValue) error {
	s.removed++
	for s.head < len(s.dq) && s.dq[s.head].seq < s.removed {
		s.size -= int64(len(s.dq[s.head].v.Value))
		s.head++
	}
	if s.head > 64 && s.head*2 > len(s.dq) {
		s.dq = append(s.dq[:0], s.dq[s.head:]...)
		s.head = 0
	}
	return nil
}

func (s *winMinMaxState) value() (bson.RawValue, error) {
	if s.head == len(s.dq) {
		return expr.Null(), nil
	}
	return s.dq[s.head].v, nil
}

func (s *winMinMaxState) reset() { *s = winMinMaxState{sign: s.sign, coll: s.coll} }

// setCollation makes s compare strings under c.
func (s *winMinMaxState) setCollation(c *collation.Collator) { s.coll = c }

func (s *winMinMaxState) bytes() int64 { return s.size + int64(len(s.dq)-s.head)*40 }

// winPushState is $push: the window's values in order, missing ones left
// out.
type winPushState struct {
	vals []bson.RawValue
	head int
	size int64
}

func (s *winPushState) add(v bson.RawValue) error {
	if v.Type == 0 {
		return nil
	}
	s.vals = append(s.vals, v)
	s.size += int64(len(v.Value))
	return nil
}

func (s *winPushState) remove(v bson.RawValue) error {
	if v.Type == 0 || s.head >= len(s.vals) {
		return nil
	}
	s.size -= int64(len(s.vals[s.head].Value))
	s.head++
	if s.head > 64 && s.head*2 > len(s.vals) {
		s.vals = append(s.vals[:0], s.vals[s.head:]...)
		s.head = 0
	}
	return nil
}

func (s *winPushState) value() (bson.RawValue, error) {
	return arrayValue(s.vals[s.head:])
}

func (s *winPushState) reset() { *s = winPushState{} }

func (s *winPushState) bytes() int64 { return s.size + int64(len(s.vals)-s.head)*24 }

// arrayValue builds an array, failing with BSONObjectTooLarge past 16 MiB.
func arrayValue(vals []bson.RawValue) (bson.RawValue, error) {
	b := expr.NewArrayBuilder(len(vals))
	for _, v := range vals {
		b.Append(v)
		if b.Size() > expr.MaxBSONSize {
			return bson.RawValue{}, errTooLargeWin()
		}
	}
	return b.Value(), nil
}

// winSetState is $addToSet: the window's distinct values with their counts,
// kept sorted, so that the result lists them in ascending order (a
// removable window in mongod does the same; for an unbounded one mongod's
// order is unspecified). Missing values are left out.
type winSetState struct {
	coll   *collation.Collator // strings compare under it (nil: simple)
	vals   []bson.RawValue
	counts []int64
	size   int64
}

func (s *winSetState) find(v bson.RawValue) (int, bool) {
	i := sort.Search(len(s.vals), func(i int) bool { return bsonkit.CompareWith(s.vals[i], v, s.coll) >= 0 })
	return i, i < len(s.vals) && bsonkit.CompareWith(s.vals[i], v, s.coll) == 0
}

func (s *winSetState) add(v bson.RawValue) error {
	if v.Type == 0 {
		return nil
	}
	i, ok := s.find(v)
	if ok {
		s.counts[i]++
		return nil
	}
	s.vals = append(s.vals, bson.RawValue{})
	copy(s.vals[i+1:], s.vals[i:])
	s.vals[i] = v
	s.counts = append(s.counts, 0)
	copy(s.counts[i+1:], s.counts[i:])
	s.counts[i] = 1
	s.size += int64(len(v.Value))
	return nil
}

func (s *winSetState) remove(v bson.RawValue) error {
	if v.Type == 0 {
		return nil
	}
	i, ok := s.find(v)
	if !ok {
		return nil
	}
	if s.counts[i]--; s.counts[i] == 0 {
		s.size -= int64(len(s.vals[i].Value))
		s.vals = append(s.vals[:i], s.vals[i+1:]...)
		s.counts = append(s.counts[:i], s.counts[i+1:]...)
	}
	return nil
}

func (s *winSetState) value() (bson.RawValue, error) { return arrayValue(s.vals) }

func (s *winSetState) reset() { *s = winSetState{coll: s.coll} }

// setCollation makes s compare strings under c.
func (s *winSetState) setCollation(c *collation.Collator) { s.coll = c }

func (s *winSetState) bytes() int64 { return s.size + int64(len(s.vals))*32 }
