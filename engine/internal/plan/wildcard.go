package plan

import (
	"sort"
	"strings"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/x/bsonx/bsoncore"

	"github.com/formworkdb/formwork/engine/internal/bsonkit"
	"github.com/formworkdb/formwork/engine/internal/index"
)

// A wildcard index ({"$**": 1}, {"a.$**": 1}, compound wildcard indexes)
// stores, for every indexed leaf, a key whose wildcard part is two
// columns: the leaf's dotted path (array positions dropped) and its value.
// The planner never scans such an index as a whole: for each concrete path
// the query constrains it expands the index into an entry whose key
// pattern is the wildcard field replaced by {$_path: 1, <path>: ±1}, as
// mongod's wildcard_planning::expandWildcardIndexEntry does, and plans
// that entry like a regular index: a point on $_path, the value bounds of
// the path's predicates on the next column.
//
// Following mongod's planner_wildcard_helpers.cpp and
// https://www.mongodb.com/docs/manual/core/indexes/index-types/index-wildcard/

// wildPathField is the name of the path column in explain.
const wildPathField = "$_path"

// maxArrayIndexDepth is mongod's kWildcardMaxArrayIndexTraversalDepth: a
// query path with more positional components after arrays is not planned
// on a wildcard index (the $_path bounds grow as 2^n).
const maxArrayIndexDepth = 8

// wildEntry describes an expanded wildcard index entry.
type wildEntry struct {
	pathCol  int    // position of $_path in the entry's columns
	path     string // the concrete path; "$_path" for a regular-prefix entry
	arrayIdx []int  // components of path that may be array positions
	// prefixOnly marks the entry of a compound wildcard index that
	// answers predicates on its regular prefix only: $_path and the value
	// column are scanned whole.
	prefixOnly bool
}

// valueCol returns the position of the wildcard value column.
func (w *wildEntry) valueCol() int { return w.pathCol + 1 }

// wildProj is the planner's view of a wildcard projection: which paths
// the index holds, with all their descendants.
type wildProj struct {
	paths     []string // included (or excluded) paths, _id aside
	exclusion bool
	withID    bool
}

// newWildProj reads the projection of a wildcard spec as the index package
// applies it: "path.$**" includes path, wildcardProjection is an
// inclusion or an exclusion, and _id is out unless included explicitly.
func newWildProj(sp index.Spec) *wildProj {
	for _, f := range sp.Fields {
		if f.Wildcard && f.Path != "" {
			return &wildProj{paths: []string{f.Path}}
		}
	}
	p := &wildProj{exclusion: true}
	if sp.WildcardProjection == nil {
		return p
	}
	var incl, excl []string
	var walk func(prefix string, d bson.Raw)
	walk = func(prefix string, d bson.Raw) {
		bsonkit.ForEach(d, func(k string, v bson.RawValue) bool {
			path := join(prefix, k)
			if sub, ok := v.DocumentOK(); ok {
				walk(path, sub)
				return true
			}
			on := truthy(v)
			switch {
			case path == "_id":
				p.withID = on
			case on:
				incl = append(incl, path)
			default:
				excl = append(excl, path)
			}
			return true
		})
	}
	walk("", sp.WildcardProjection)
	if len(excl) == 0 && len(incl) > 0 {
		p.exclusion, p.paths = false, incl
	} else {
		p.paths = excl
	}
	return p
}

// holds reports whether the index holds path and everything below it.
func (p *wildProj) holds(path string) bool {
	if path == "_id" || strings.HasPrefix(path, "_id.") {
		return p.withID
	}
	covered, below := false, false
	for _, q := range p.paths {
		if path == q || strings.HasPrefix(path, q+".") {
			covered = true
		}
		if strings.HasPrefix(q, path+".") {
			below = true
		}
	}
	if p.exclusion {
		return !covered && !below
	}
	return covered
}

// included returns the inclusion path that holds path ("" for an
// exclusion projection).
func (p *wildProj) included(path string) string {
	if p.exclusion {
		return ""
	}
	for _, q := range p.paths {
		if path == q || strings.HasPrefix(path, q+".") {
			return q
		}
	}
	return ""
}

// isArrayIndex reports whether a path component can name an array
// position: digits only, without a leading zero (mongod's
// FieldRef::isNumericPathComponentStrict).
func isArrayIndex(s string) bool {
	if s == "" || (len(s) > 1 && s[0] == '0') {
		return false
	}
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return true
}

// looseMatch reports whether query path q names the stored path s once
// some of q's numeric components that follow multikey components (mk, in
// q's positions) are read as array positions.
func looseMatch(q, s []string, mk map[int]bool) bool {
	if len(s) > len(q) {
		return false
	}
	skip := 0
	for i := range q {
		if i-skip >= len(s) {
			return false
		}
		if q[i] == s[i-skip] {
			continue
		}
		if mk[i-1] && isArrayIndex(q[i]) {
			skip++
			continue
		}
		return false
	}
	return len(q) == len(s)+skip
}

// wildMultikey returns the components of path that are multikey for a
// wildcard index whose array paths are arrays. A component whose prefix
// the projection does not hold counts as multikey: the index package
// records arrays only at held paths, so nothing is known there.
//
// Divergence: mongod knows arrays above a projected subtree ("a" for
// {"a.b.$**": 1}); Formwork assumes them, so such paths explain as
// multikey and give up bound intersection, index sorts and covering.
func wildMultikey(path string, arrays map[string]bool, proj *wildProj) []int {
	parts := strings.Split(path, ".")
	mk := map[int]bool{}
	var out []int
	for i := range parts {
		prefix := parts[:i+1]
		ps := strings.Join(prefix, ".")
		hit := arrays[ps] || !proj.holds(ps)
		if !hit {
			for a := range arrays {
				if looseMatch(prefix, strings.Split(a, "."), mk) {
					hit = true
					break
				}
			}
		}
		if hit {
			mk[i] = true
			out = append(out, i)
		}
	}
	return out
}

// arrayIndexes returns the positions of path components that may be
// array positions: numeric components right after a multikey component.
func arrayIndexes(parts []string, mk []int) []int {
	var out []int
	for _, c := range mk {
		if c+1 < len(parts) && isArrayIndex(parts[c+1]) {
			out = append(out, c+1)
		}
	}
	return out
}

// wildPathOK reports whether a query on path can use a wildcard index
// given the positional components it may hold (mongod's
// validateNumericPathComponents): at most maxArrayIndexDepth of them,
// never two in a row, and none inside an included projection path (the
// index stores numeric components as field names only).
func wildPathOK(parts []string, arrayIdx []int, proj *wildProj) bool {
	if len(arrayIdx) == 0 {
		return true
	}
	if len(arrayIdx) > maxArrayIndexDepth {
		return false
	}
	for _, i := range arrayIdx {
		if i+1 < len(parts) && isArrayIndex(parts[i+1]) {
			return false
		}
	}
	inc := proj.included(strings.Join(parts, "."))
	return inc == "" || arrayIdx[0] >= components(inc)
}

// expandWildcard returns the entries of wildcard index ix for the query
// paths paths: one per path the index holds and can answer, plus the
// regular-prefix entry of a compound wildcard index whose leading regular
// field is among paths.
func (ix *indexInfo) expandWildcard(paths []string) []*indexInfo {
	var out []*indexInfo
	proj := newWildProj(ix.spec)
	arrays := map[string]bool{}
	for _, a := range ix.st.Multikey.Wildcard {
		arrays[a] = true
	}
	wild := -1
	for i, f := range ix.spec.Fields {
		if f.Wildcard {
			wild = i
		}
	}
	seen := map[string]bool{}
	for _, p := range paths {
		if seen[p] || p == "" || strings.Contains(p, "$") || strings.Contains(p, "..") || !proj.holds(p) {
			continue
		}
		seen[p] = true
		parts := strings.Split(p, ".")
		mk := wildMultikey(p, arrays, proj)
		aidx := arrayIndexes(parts, mk)
		if !wildPathOK(parts, aidx, proj) {
			continue
		}
		w := &wildEntry{pathCol: wild, path: p, arrayIdx: aidx}
		if !heldAll(w.variants(), proj) {
			// The index package stores no scalar under a path the
			// projection holds only in part, so an array position there
			// cannot be looked up.
			continue
		}
		out = append(out, ix.wildEntryFor(wild, w, mk))
	}
	if wild > 0 {
		for _, p := range paths {
			if p == ix.spec.Fields[0].Path {
				out = append(out, ix.wildEntryFor(wild, &wildEntry{pathCol: wild, path: wildPathField, prefixOnly: true}, nil))
				break
			}
		}
	}
	return out
}

// heldAll reports whether the projection holds every path of set.
func heldAll(set map[string][]string, proj *wildProj) bool {
	for p := range set {
		if !proj.holds(p) {
			return false
		}
	}
	return true
}

// wildEntryFor builds the expanded entry w of ix, the wildcard field at
// position wild, with multikey components mk on the value column.
func (ix *indexInfo) wildEntryFor(wild int, w *wildEntry, mk []int) *indexInfo {
	e := &indexInfo{st: ix.st, spec: ix.spec, partial: ix.partial, wild: w, coll: ix.coll, qcoll: ix.qcoll}
	idx, kp := bsoncore.AppendDocumentStart(nil)
	elems, _ := ix.spec.Key.Elements()
	for i, f := range ix.spec.Fields {
		if i != wild {
			e.paths = append(e.paths, f.Path)
			e.desc = append(e.desc, f.Desc)
			e.mk = append(e.mk, nil)
			if i < len(elems) {
				kp = bsoncore.AppendValueElement(kp, f.Path, bsoncore.Value{Type: bsoncore.Type(elems[i].Value().Type), Data: elems[i].Value().Value})
			}
			continue
		}
		e.paths = append(e.paths, wildPathField, w.path)
		e.desc = append(e.desc, false, f.Desc)
		e.mk = append(e.mk, nil, mk)
		kp = bsoncore.AppendInt32Element(kp, wildPathField, 1)
		if i < len(elems) {
			kp = bsoncore.AppendValueElement(kp, w.path, bsoncore.Value{Type: bsoncore.Type(elems[i].Value().Type), Data: elems[i].Value().Value})
		}
	}
	kp, _ = bsoncore.AppendDocumentEnd(kp, idx)
	e.keyPattern = bson.Raw(kp)
	e.multikey = len(mk) > 0
	return e
}

// wildSupports reports whether predicate p on a wildcard entry's path can
// bound the index (mongod's nodeIsSupportedByWildcardIndex and the sparse
// index rules): the index holds leaves only, so comparisons with objects
// and arrays other than {} and [] cannot use it, and it holds nothing for
// a missing path, so no predicate that a missing field satisfies can.
func wildSupports(p *expr, multikey bool) bool {
	if matchesMissing(p) && p.kind != kNot {
		return false
	}
	switch p.kind {
	case kEq, kLt, kLte, kGt, kGte:
		return wildComparable(p.val, p.kind)
	case kIn:
		for _, v := range p.vals {
			if !wildComparable(v, kEq) || v.Type == bson.TypeNull {
				return false
			}
		}
		return true
	case kNot:
		// {$ne: null} alone: the other negations match missing fields.
		c := p.children[0]
		return !multikey && c.kind == kEq && c.val.Type == bson.TypeNull
	case kElemVal:
		if parts := strings.Split(p.path, "."); len(parts) > 1 && isArrayIndex(parts[len(parts)-1]) {
			return false
		}
		for _, c := range p.children {
			if indexable(c) && c.kind != kElemVal && !wildSupports(c, multikey) {
				return false
			}
		}
		return true
	case kExists, kRegex, kType:
		return true
	}
	return false
}

// wildComparable is mongod's canUseWildcardIndex: objects only as {} under
// $eq or $lte, arrays only as [] under $eq.
func wildComparable(v bson.RawValue, k kind) bool {
	switch v.Type {
	case bson.TypeEmbeddedDocument:
		return len(v.Value) <= 5 && (k == kEq || k == kLte)
	case bson.TypeArray:
		return len(v.Value) <= 5 && k == kEq
	case bson.TypeUndefined:
		return false
	}
	return true
}

// overlapsObjects reports whether o holds a non-empty object: the values
// strictly between {} and [], which the index stores as their leaves
// under subpaths (mongod's boundsOverlapObjectTypeBracket).
func overlapsObjects(o oil) bool {
	for _, iv := range o {
		if cmpVal(iv.lo, emptyArrVal) < 0 && cmpVal(iv.hi, emptyDocVal) > 0 {
			return true
		}
	}
	return false
}

// wildTranslate adjusts the bounds of one predicate on a wildcard value
// column (mongod's translateWildcardIndexBoundsAndTightness): bounds that
// reach into objects must scan the path's subpaths, whose values are
// unrelated to the predicate, so they become [MinKey, MaxKey] and need the
// document; so does a path that may go through array positions.
func (w *wildEntry) translate(o oil, t tightness) (oil, tightness) {
	if overlapsObjects(o) && !(len(o) > 0 && o[0].isAll()) {
		o, t = oil{allValues}, inexactFetch
	}
	if len(w.arrayIdx) > 0 {
		t = inexactFetch
	}
	return o, t
}

// pathBounds returns the $_path bounds of the entry given the final value
// bounds, and whether the scan must dedup (subpaths or several paths give
// one document several keys). It follows mongod's
// finalizeWildcardIndexScanConfiguration.
func (w *wildEntry) pathBounds(value oil) (oil, bool) {
	if w.prefixOnly {
		// MinKey marks documents without any wildcard path.
		return oil{point(minKey), {lo: stringVal(""), hi: emptyDocVal, loInc: true}}, true
	}
	subpath := overlapsObjects(value)
	set := w.variants()
	var paths []string
	for p, kept := range set {
		if subpath && hasPrefixPath(set, kept) {
			continue // the shorter path's subpath range holds it
		}
		paths = append(paths, p)
	}
	sort.Strings(paths)
	var o oil
	for _, p := range paths {
		o = append(o, point(stringVal(p)))
		if subpath {
			o = append(o, interval{lo: stringVal(p + "."), hi: stringVal(p + "/"), loInc: true})
		}
	}
	return unionize(o), subpath || len(paths) > 1
}

// variants returns the stored paths a document may hold the entry's path
// under: with and without each component that may be an array position
// (mongod's generateFieldNameOrArrayIndexPathSet), keyed by dotted path.
// It adds the path of each array a position may select from: an element
// that is itself an array is stored whole under that path, yet the
// position (and any component after it, through implicit traversal)
// reaches into it.
//
// Divergence: mongod scans only the variants, and misses {a: [[1, 2]]}
// for {"a.0": 1} and {a: [[{x: 1}]]} for {"a.0.x": 1}. Formwork also
// scans the array's own path over the array type bracket (valueBounds).
func (w *wildEntry) variants() map[string][]string {
	parts := strings.Split(w.path, ".")
	set := map[string][]string{}
	for mask := 0; mask < 1<<len(w.arrayIdx); mask++ {
		var kept []string
		for i, part := range parts {
			drop := false
			for b, at := range w.arrayIdx {
				if at == i {
					set[strings.Join(kept, ".")] = append([]string(nil), kept...)
					drop = mask&(1<<b) != 0
				}
			}
			if !drop {
				kept = append(kept, part)
			}
		}
		set[strings.Join(kept, ".")] = kept
	}
	return set
}

// arrayBracket holds every array value: nested arrays are stored whole.
var arrayBracket = interval{lo: emptyArrVal, hi: emptyBinVal, loInc: true}

// valueBounds widens the final value bounds of an entry whose path may go
// through array positions by the array bracket (see variants).
func (w *wildEntry) valueBounds(o oil) oil {
	if len(w.arrayIdx) == 0 || w.prefixOnly {
		return o
	}
	return unionize(append(append(oil(nil), o...), arrayBracket))
}

// hasPrefixPath reports whether set holds a proper prefix of parts.
func hasPrefixPath(set map[string][]string, parts []string) bool {
	for n := 1; n < len(parts); n++ {
		if _, ok := set[strings.Join(parts[:n], ".")]; ok {
			return true
		}
	}
	return false
}

// wildPaths returns the paths of the predicates a wildcard index could be
// expanded for, in order (mongod's QueryPlannerIXSelect::getFields).
func wildPaths(preds []*expr) []string {
	var out []string
	for _, p := range preds {
		if p.path != "" && !containsPath(out, p.path) {
			out = append(out, p.path)
		}
	}
	sort.Strings(out)
	return out
}
