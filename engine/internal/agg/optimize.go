package agg

import (
	"strings"

	"go.mongodb.org/mongo-driver/v2/bson"
)

// MaxOptimizePasses bounds the rewrite loop; each pass either changes
// the pipeline or ends it, and a pipeline of n stages needs at most about
// n² swaps.
const maxOptimizePasses = 64

// optimize applies mongod's pipeline rewrites that matter here, in
// passes until nothing changes (bounded):
//   - adjacent $match stages merge into one;
//   - $match moves ahead of $sort, and (mongod's pushMatchBefore) ahead
//     of $lookup, $unwind and $addFields/$set/$unset/$project, splitting
//     off the top-level clauses that read a path the stage modifies
//     (see swapMatch);
//   - $sort followed by $limit becomes a top-k $sort;
//   - adjacent $limit and adjacent $skip stages merge;
//   - $unwind of a $lookup's or $graphLookup's "as" field is absorbed.
//
// None of these changes a result (I3).
func optimize(ss []stage) []stage {
	for pass := 0; pass < maxOptimizePasses; pass++ {
		changed := false
		for i := 0; i+1 < len(ss); i++ {
			a, b := ss[i], ss[i+1]
			if r, ok := rewritePair(a, b); ok {
				ss = append(append(append([]stage(nil), ss[:i]...), r...), ss[i+2:]...)
				changed = true
				break
			}
		}
		if !changed {
			break
		}
	}
	return ss
}

// rewritePair rewrites two adjacent stages, returning the replacement.
func rewritePair(a, b stage) ([]stage, bool) {
	switch x := a.(type) {
	case *stageUnpackBucket:
		if y, ok := b.(*stageMatch); ok {
			return x.absorb(y), true
		}
	case *stageMatch:
		if y, ok := b.(*stageMatch); ok {
			return []stage{mergeMatches(x, y)}, true
		}
	case *stageSort:
		switch y := b.(type) {
		case *stageMatch:
			return []stage{y, x}, true
		case *stageLimit:
			n := *x
			if n.limit == 0 || y.n < n.limit {
				n.limit = y.n
			}
			return []stage{&n}, true
		}
	case *stageLimit:
		if y, ok := b.(*stageLimit); ok {
			return []stage{&stageLimit{n: min(x.n, y.n)}}, true
		}
		// A $skip past the limit leaves nothing to reorder; a $limit
		// then $skip stays as written.
	case *stageSkip:
		if y, ok := b.(*stageSkip); ok && x.n+y.n >= x.n {
			return []stage{&stageSkip{n: x.n + y.n}}, true
		}
		// $skip s, $limit l is $limit s+l, $skip s: the limit can then
		// bound a preceding $sort.
		if y, ok := b.(*stageLimit); ok && x.n+y.n >= x.n && x.n > 0 {
			return []stage{&stageLimit{n: x.n + y.n}, &stageSkip{n: x.n}}, true
		}
	case *stageAddFields:
		if y, ok := b.(*stageMatch); ok {
			return swapMatch(x, y, x.blocksMatch)
		}
	case *stageUnwind:
		if y, ok := b.(*stageMatch); ok {
			return swapMatch(x, y, x.blocksMatch)
		}
	case *stageLookup:
		if y, ok := b.(*stageUnwind); ok && x.unwind == nil && y.path == x.as {
			n := *x
			n.unwind = y
			return []stage{&n}, true
		}
		if y, ok := b.(*stageMatch); ok {
			return swapMatch(x, y, x.blocksMatch)
		}
	case *stageGraphLookup:
		if y, ok := b.(*stageUnwind); ok && x.unwind == nil && y.path == x.as {
			n := *x
			n.unwind = y
			return []stage{&n}, true
		}
	}
	return nil, false
}

// mergeMatches combines two $match stages into one {$and: [a, b]}.
func mergeMatches(a, b *stageMatch) *stageMatch {
	spec, _ := bson.Marshal(bson.D{{Key: "$and", Value: bson.A{a.spec, b.spec}}})
	fs := append(append([]*Filter(nil), a.filters...), b.filters...)
	m := &stageMatch{spec: spec, filters: fs}
	if a.compile != nil && b.compile != nil && len(a.parts) == len(a.filters) && len(b.parts) == len(b.filters) {
		m.parts = append(append([]bson.Raw(nil), a.parts...), b.parts...)
		m.compile = a.compile
	}
	return m
}

// touches reports whether the path p and any of the changed top-level
// fields share a first component.
func touches(paths []string, changed map[string]bool) bool {
	for _, p := range paths {
		head, _, _ := strings.Cut(p, ".")
		if changed[head] {
			return true
		}
	}
	return false
}

// pushdown takes the leading $match, $sort, $skip and $limit of a
// collection pipeline (and $sample when first) into a Query, and the
// fields the remaining stages read.
func pushdown(ss []stage) (Query, []stage) {
	var q Query
	i := 0
	if i < len(ss) {
		if s, ok := ss[i].(*stageSample); ok {
			q.Sample = s.size
			i++
			q.Fields = fieldsNeeded(ss[i:])
			return q, ss[i:]
		}
	}
	if i < len(ss) {
		if m, ok := ss[i].(*stageMatch); ok {
			q.Filter = m.spec
			i++
		}
	}
	if i < len(ss) {
		if s, ok := ss[i].(*stageSort); ok {
			q.Sort = s.spec
			q.Limit = s.limit
			i++
		}
	}
	for i < len(ss) {
		switch s := ss[i].(type) {
		case *stageSkip:
			if q.Limit != 0 {
				// [k, k+L) then skip s is [k+s, k+L).
				if q.Limit <= s.n {
					goto done
				}
				q.Limit -= s.n
			}
			q.Skip += s.n
		case *stageLimit:
			if q.Limit == 0 || s.n < q.Limit {
				q.Limit = s.n
			}
		default:
			goto done
		}
		i++
	}
done:
	q.Fields = fieldsNeeded(ss[i:])
	return q, ss[i:]
}

// fieldsNeeded returns the fields the stages read from their input, or
// nil when they need whole documents.
func fieldsNeeded(ss []stage) []string {
	d := &depSet{}
	for _, st := range ss {
		ds, ok := st.(depsStage)
		if !ok {
			return nil
		}
		fresh := ds.deps(d)
		if d.whole {
			return nil
		}
		if fresh {
			out := d.sorted()
			if len(out) == 0 {
				// Nothing is read: mongod still fetches _id.
				return []string{"_id"}
			}
			return out
		}
	}
	return nil
}
