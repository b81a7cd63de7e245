package agg

import (
	"strings"

	"go.mongodb.org/mongo-driver/v2/bson"
)

// swapMatch moves m ahead of x as mongod's pushMatchBefore does: the
// top-level clauses of m that read no path x modifies (blocked reports
// those) run before x, the others stay after it. It answers false when
// no clause can move. A clause that needs the whole document never
// moves.
func swapMatch(x stage, m *stageMatch, blocked func(string) bool) ([]stage, bool) {
	if paths, whole := m.paths(); !whole && !anyBlocked(paths, blocked) {
		return []stage{m, x}, true
	}
	if m.compile == nil || len(m.parts) != len(m.filters) {
		return nil, false
	}
	var before, after bson.D
	var fb, fa []*Filter
	for _, part := range m.parts {
		for _, el := range mustElems(part) {
			clause := bson.D{{Key: el.Key(), Value: el.Value()}}
			raw, err := bson.Marshal(clause)
			if err != nil {
				return nil, false
			}
			f, err := m.compile(raw)
			if err != nil {
				return nil, false
			}
			paths, whole := f.paths()
			if !whole && !anyBlocked(paths, blocked) {
				before = append(before, clause[0])
				fb = append(fb, f)
			} else {
				after = append(after, clause[0])
				fa = append(fa, f)
			}
		}
	}
	if len(fb) == 0 {
		return nil, false
	}
	b, err := splitMatch(before, fb, m.compile)
	if err != nil {
		return nil, false
	}
	if len(fa) == 0 {
		return []stage{b, x}, true
	}
	a, err := splitMatch(after, fa, m.compile)
	if err != nil {
		return nil, false
	}
	return []stage{b, x, a}, true
}

// anyBlocked reports whether blocked holds for one of paths.
func anyBlocked(paths []string, blocked func(string) bool) bool {
	for _, p := range paths {
		if blocked(p) {
			return true
		}
	}
	return false
}

// splitMatch builds the $match of clauses (one filter each), its spec
// {$and: clauses} when there are several, as mongod prints a split match.
//
// Divergence: the clauses print as written; mongod prints a split
// $match from its parsed form, an equality as {path: {$eq: value}}
// (TestMatchSwapsAhead shows the form printed here).
func splitMatch(clauses bson.D, fs []*Filter, compile func(bson.Raw) (*Filter, error)) (*stageMatch, error) {
	var spec bson.Raw
	var err error
	if len(clauses) == 1 {
		spec, err = bson.Marshal(clauses)
	} else {
		arr := make(bson.A, len(clauses))
		for i, c := range clauses {
			arr[i] = bson.D{c}
		}
		spec, err = bson.Marshal(bson.D{{Key: "$and", Value: arr}})
	}
	if err != nil {
		return nil, err
	}
	parts := make([]bson.Raw, len(clauses))
	for i, c := range clauses {
		parts[i], err = bson.Marshal(bson.D{c})
		if err != nil {
			return nil, err
		}
	}
	return &stageMatch{spec: spec, filters: fs, parts: parts, compile: compile}, nil
}

// overlaps reports whether the dotted paths p and q are equal or one is
// a prefix of the other, so that changing one changes the other.
func overlaps(p, q string) bool {
	if len(p) > len(q) {
		p, q = q, p
	}
	return strings.HasPrefix(q, p) && (len(q) == len(p) || q[len(p)] == '.')
}

// blocksMatch reports whether a $match reading path must stay after the
// $lookup: mongod's getModifiedPaths of $lookup is its "as" field, and
// with an absorbed $unwind also that $unwind's includeArrayIndex field.
func (s *stageLookup) blocksMatch(path string) bool {
	if overlaps(path, s.as) {
		return true
	}
	return s.unwind != nil && s.unwind.index != "" && overlaps(path, s.unwind.index)
}

// blocksMatch reports whether a $match reading path must stay after the
// $unwind: it modifies its path and its includeArrayIndex field.
func (s *stageUnwind) blocksMatch(path string) bool {
	return overlaps(path, s.path) || (s.index != "" && overlaps(path, s.index))
}
