package plan

import (
	"strings"

	"go.mongodb.org/mongo-driver/v2/bson"

	"github.com/formworkdb/formwork/engine/internal/collation"
	"github.com/formworkdb/formwork/engine/internal/index"
	"github.com/formworkdb/formwork/engine/internal/storage"
)

// indexInfo is the planner's view of one index.
type indexInfo struct {
	st       *storage.Index
	spec     index.Spec
	paths    []string
	desc     []bool
	mk       [][]int // multikey path components per field
	multikey bool
	partial  *expr
	// keyPattern is the key pattern explain shows: the spec's, or an
	// expanded wildcard entry's {..., $_path: 1, <path>: ±1, ...}.
	keyPattern bson.Raw
	// wild is set on an expanded wildcard entry (wildcard.go).
	wild *wildEntry
	// coll is the index's collation and qcoll the query's (nil: simple);
	// see collation.go.
	coll, qcoll *collation.Collator
}

func newIndexInfo(st *storage.Index) *indexInfo {
	sp := st.Def.Spec()
	ix := &indexInfo{st: st, spec: sp, keyPattern: sp.Key, coll: st.Def.Collator()}
	for i, f := range sp.Fields {
		ix.paths = append(ix.paths, f.Path)
		ix.desc = append(ix.desc, f.Desc)
		var comps []int
		if i < len(st.Multikey.Paths) {
			comps = st.Multikey.Paths[i]
		}
		ix.mk = append(ix.mk, comps)
		if len(comps) > 0 {
			ix.multikey = true
		}
	}
	if sp.PartialFilterExpression != nil {
		ix.partial = parseFilter(sp.PartialFilterExpression)
	}
	return ix
}

// usable reports whether the planner may scan the index as it is: a
// wildcard index only through its expanded entries.
func (ix *indexInfo) usable() bool {
	return (ix.wild != nil || !ix.spec.IsWildcard()) && len(ix.paths) > 0
}

// id names the index (or wildcard entry) in plan cache entries.
func (ix *indexInfo) id() string {
	if ix.wild != nil {
		return ix.spec.Name + "|" + ix.wild.path
	}
	return ix.spec.Name
}

// serves reports whether an assignment lets the index answer the query:
// its leading field is bounded and, on a wildcard entry for a concrete
// path, so is that path (the index holds no key for documents without
// it).
func (ix *indexInfo) serves(a *assignment) bool {
	if ix.wild == nil {
		return len(a.assigned[0]) > 0
	}
	if ix.wild.pathCol > 0 && len(a.assigned[0]) == 0 {
		return false
	}
	return ix.wild.prefixOnly || len(a.assigned[ix.wild.valueCol()]) > 0
}

// fieldOf returns the position of path in the key pattern, or -1.
func (ix *indexInfo) fieldOf(path string) int {
	for i, p := range ix.paths {
		if p == path {
			return i
		}
	}
	return -1
}

// multiKeyPaths renders mongod's multiKeyPaths explain field: for each
// field, the dotted prefixes that are arrays.
func (ix *indexInfo) multiKeyPaths() bson.D {
	var d bson.D
	for i, p := range ix.paths {
		parts := strings.Split(p, ".")
		arr := bson.A{}
		for _, c := range ix.mk[i] {
			if c < len(parts) {
				arr = append(arr, strings.Join(parts[:c+1], "."))
			}
		}
		d = append(d, bson.E{Key: p, Value: arr})
	}
	return d
}

// keyPatternString renders the key pattern as planSummary shows it:
// "{ a: 1, b: -1 }".
func (ix *indexInfo) keyPatternString() string {
	var b strings.Builder
	formatValue(&b, bson.RawValue{Type: bson.TypeEmbeddedDocument, Value: ix.keyPattern})
	return b.String()
}

// components returns the number of dotted components of p.
func components(p string) int { return strings.Count(p, ".") + 1 }

// sharedComponents returns how many leading path components a and b share.
func sharedComponents(a, b string) int {
	pa, pb := strings.Split(a, "."), strings.Split(b, ".")
	n := 0
	for n < len(pa) && n < len(pb) && pa[n] == pb[n] {
		n++
	}
	return n
}

// sameElem reports whether two predicates sit under one $elemMatch whose
// path covers path component c (so both constrain the same array element).
func sameElem(a, b *expr, c int) bool {
	return a.group != 0 && a.group == b.group && components(a.groupPath) > c
}

// compatible reports whether predicate p on field f may join the bounds
// already assigned (mongod's multikey rules, I2).
func (ix *indexInfo) compatible(assigned [][]*expr, f int, p *expr) bool {
	for _, c := range ix.mk[f] {
		for _, q := range assigned[f] {
			if !sameElem(p, q, c) {
				return false
			}
		}
	}
	for g := 0; g < f; g++ {
		if len(assigned[g]) == 0 {
			continue
		}
		shared := sharedComponents(ix.paths[g], ix.paths[f])
		for _, c := range ix.mk[f] {
			if c >= shared {
				continue
			}
			for _, q := range assigned[g] {
				if !sameElem(p, q, c) {
					return false
				}
			}
		}
	}
	return true
}

// matchesMissing reports whether a predicate can match a document lacking
// the field (a sparse index cannot answer it).
func matchesMissing(p *expr) bool {
	switch p.kind {
	case kEq:
		return p.val.Type == bson.TypeNull
	case kLte, kGte:
		if p.val.Type == bson.TypeNull {
			return true
		}
		fallthrough
	case kLt, kGt:
		// A missing field compares below MaxKey and above MinKey.
		lower := p.kind == kLt || p.kind == kLte
		return lower && p.val.Type == bson.TypeMaxKey || !lower && p.val.Type == bson.TypeMinKey
	case kIn:
		for _, v := range p.vals {
			if v.Type == bson.TypeNull {
				return true
			}
		}
		return false
	case kNot:
		return !matchesMissing(p.children[0])
	}
	return false
}

// assignment is the outcome of fitting a conjunction to one index.
type assignment struct {
	bounds   []oil
	assigned [][]*expr
	tight    map[*expr]tightness
	// dedup: one document may have several keys within the bounds
	// beyond what multikey metadata says (wildcard subpaths).
	dedup bool
}

// assign fits the predicates preds (a conjunction, $elemMatch leaves
// included) to ix's fields in key order.
func (ix *indexInfo) assign(preds []*expr) *assignment {
	a := &assignment{assigned: make([][]*expr, len(ix.paths)), tight: map[*expr]tightness{}}
	for f, path := range ix.paths {
		if ix.wild != nil && (f == ix.wild.pathCol || ix.wild.prefixOnly && f == ix.wild.valueCol()) {
			continue
		}
		for _, p := range preds {
			if p.path != path || !indexable(p) {
				continue
			}
			if ix.spec.Sparse && matchesMissing(p) {
				continue
			}
			if ix.wild != nil && f == ix.wild.valueCol() && !wildSupports(p, len(ix.mk[f]) > 0) {
				continue
			}
			if !ix.compatible(a.assigned, f, p) || !ix.collationServes(p) {
				continue
			}
			a.assigned[f] = append(a.assigned[f], p)
		}
	}
	for f := range ix.paths {
		o := oil{allValues}
		for _, p := range a.assigned[f] {
			var po oil
			var t tightness
			if ix.wild != nil && f == ix.wild.valueCol() {
				// A wildcard index is sparse: it holds no key for a
				// missing path.
				po, t = ix.translate(p, len(ix.mk[f]) > 0, true, len(ix.spec.Fields) > 1)
				po, t = ix.wild.translate(po, t)
			} else {
				po, t = ix.translate(p, len(ix.mk[f]) > 0, ix.spec.Sparse, len(ix.paths) > 1)
			}
			o = intersect(o, po)
			a.tight[p] = t
		}
		a.bounds = append(a.bounds, o)
	}
	if ix.wild != nil {
		vc := ix.wild.valueCol()
		a.bounds[vc] = ix.wild.valueBounds(a.bounds[vc])
		a.bounds[ix.wild.pathCol], a.dedup = ix.wild.pathBounds(a.bounds[vc])
	}
	return a
}

// indexablePreds returns the leaves of a conjunction that may bound an
// index: top-level leaves, and the leaves inside $elemMatch objects.
func indexablePreds(conj []*expr) []*expr {
	var out []*expr
	var walk func(e *expr)
	walk = func(e *expr) {
		switch e.kind {
		case kAnd:
			for _, c := range e.children {
				walk(c)
			}
		case kElemObj:
			for _, c := range e.children {
				walk(c)
			}
		case kOr, kNor, kOther:
		default:
			if e.path != "" {
				out = append(out, e)
			}
		}
	}
	for _, c := range conj {
		walk(c)
	}
	return out
}
