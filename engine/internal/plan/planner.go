package plan

import (
	"context"
	"errors"
	"fmt"
	"hash/fnv"
	"strings"

	"go.mongodb.org/mongo-driver/v2/bson"

	"github.com/formworkdb/formwork/engine/internal/bsonkit"
	"github.com/formworkdb/formwork/engine/internal/collation"
	"github.com/formworkdb/formwork/engine/internal/match"
	"github.com/formworkdb/formwork/engine/internal/mongoerr"
)

// candidate is one plan built for a query.
type candidate struct {
	root     stage
	id       string   // identity in the plan cache
	indexes  []string // names of the indexes it reads
	summary  string   // planSummary
	hasSort  bool
	hasFetch bool
	covered  bool
	failed   error
	buf      []*member
	// trial statistics, kept for allPlansExecution
	trialN, trialKeys, trialDocs int64
	trialDoc                     bson.D
}

// builder builds the candidates of one query.
type builder struct {
	q    *Query
	env  *env
	root *expr
	conj []*expr
	ixs  []*indexInfo
	proj projInfo
}

// projInfo is what the planner needs of a find projection.
type projInfo struct {
	present   bool
	simple    bool     // plain inclusions/exclusions of field paths
	inclusion bool     // an inclusion projection
	paths     []string // included paths, _id excluded
	idOut     bool     // _id excluded
}

func parseProjection(spec bson.Raw) projInfo {
	if len(spec) <= 5 {
		return projInfo{}
	}
	p := projInfo{present: true, simple: true}
	idSeen := false
	incl, excl := false, false
	bsonkit.ForEach(spec, func(k string, v bson.RawValue) bool {
		on := false
		switch {
		case v.Type == bson.TypeBoolean:
			on = v.Boolean()
		case bsonkit.IsNumber(v.Type):
			f, _ := bsonkit.Float64(v)
			on = f != 0
		default:
			p.simple = false
			return true
		}
		if strings.Contains(k, "$") {
			p.simple = false
			return true
		}
		if k == "_id" {
			idSeen = true
			p.idOut = !on
			return true
		}
		if on {
			incl = true
			p.paths = append(p.paths, k)
		} else {
			excl = true
		}
		return true
	})
	p.inclusion = incl || (!excl && idSeen && !p.idOut)
	if !idSeen {
		p.idOut = false
	}
	return p
}

// projectionStage returns the projection stage name for a plan.
func (p projInfo) stageName(covered bool) string {
	switch {
	case covered:
		return "PROJECTION_COVERED"
	case p.simple && !dotted(p.paths):
		return "PROJECTION_SIMPLE"
	}
	return "PROJECTION_DEFAULT"
}

func dotted(paths []string) bool {
	for _, p := range paths {
		if strings.Contains(p, ".") {
			return true
		}
	}
	return false
}

// idHackValue returns the _id value of a filter mongod answers with
// IDHACK: exactly {_id: <scalar or document>}.
func idHackValue(filter bson.Raw) (bson.RawValue, bool) {
	elems, err := filter.Elements()
	if err != nil || len(elems) != 1 || elems[0].Key() != "_id" {
		return bson.RawValue{}, false
	}
	v := elems[0].Value()
	switch v.Type {
	case bson.TypeEmbeddedDocument:
		if isOperatorDoc(v) {
			return bson.RawValue{}, false
		}
	case bson.TypeRegex, bson.TypeArray, bson.TypeNull, bson.TypeUndefined, bson.TypeMinKey, bson.TypeMaxKey:
		return bson.RawValue{}, false
	}
	return v, true
}

// hintIndex returns the index q.HintIndex names, nil when there is no
// hint, or ErrBadHint when it names no visible index.
func (b *builder) hintIndex() (*indexInfo, error) {
	name := b.q.HintIndex
	if name == "" {
		return nil, nil
	}
	for _, ix := range b.ixs {
		if ix.spec.Name == name && !ix.spec.Hidden {
			return ix, nil
		}
	}
	return nil, ErrBadHint
}

// ErrBadHint is mongod's answer to a hint naming no index.
var ErrBadHint = mongoerr.New(mongoerr.BadValue, "error processing query: planner returned error :: caused by :: hint provided does not correspond to an existing index")

func errNoPlans(ns string) error {
	return mongoerr.Newf(mongoerr.NoQueryExecutionPlans, "error processing query: ns=%s planner returned error :: caused by :: No query solutions", ns)
}

// SameKeyPattern reports whether two key patterns name the same fields in
// the same order with the same directions, comparing numbers by value.
func SameKeyPattern(a, b bson.Raw) bool {
	ae, _ := a.Elements()
	be, _ := b.Elements()
	if len(ae) != len(be) {
		return false
	}
	for i := range ae {
		if ae[i].Key() != be[i].Key() {
			return false
		}
		av, bv := ae[i].Value(), be[i].Value()
		af, aok := bsonkit.Float64(av)
		bf, bok := bsonkit.Float64(bv)
		if aok != bok || (aok && af != bf) || (!aok && !av.Equal(bv)) {
			return false
		}
	}
	return true
}

// candidates builds the plans to choose from. A distinct that gets no
// DISTINCT_SCAN plans again without its covering projection, as mongod's
// getExecutorDistinct falls back to a plain find: FETCH or COLLSCAN with
// no PROJECTION stage.
func (b *builder) candidates() ([]*candidate, error) {
	out, err := b.planCandidates()
	if err != nil || b.q.Distinct == "" || !b.proj.present || distinctScanOf(out) != nil {
		return out, err
	}
	b.proj = projInfo{}
	return b.planCandidates()
}

// planCandidates builds the plans to choose from with b's projection.
func (b *builder) planCandidates() ([]*candidate, error) {
	hint, err := b.hintIndex()
	if err != nil {
		return nil, err
	}
	if len(b.q.Min) > 5 || len(b.q.Max) > 5 {
		c, err := b.minMaxPlan(hint)
		if err != nil {
			return nil, err
		}
		return []*candidate{c}, nil
	}
	if b.q.Natural != 0 {
		return []*candidate{b.collScan()}, nil
	}
	if hint == nil {
		if id, ok := idHackValue(b.q.Filter); ok && b.q.Coll != nil && len(b.q.Coll.Indexes) > 0 && b.idCollationMatches() {
			return []*candidate{b.idHack(id)}, nil
		}
	}
	if hint == nil && len(b.conj) == 0 && b.q.Distinct != "" && b.q.Sort == nil {
		if c := b.distinctPlan(); c != nil {
			return []*candidate{c}, nil
		}
	}
	preds := indexablePreds(b.conj)
	if hint != nil {
		if hint.partial != nil && !implies(b.conj, hint.partial) {
			return nil, errNoPlans(b.q.NS)
		}
		if hint.spec.IsWildcard() {
			return b.wildcardHint(hint, preds)
		}
		return []*candidate{b.indexPlan(hint, preds, true)}, nil
	}
	var out []*candidate
	for _, ix := range b.entries(preds) {
		if !b.eligible(ix, b.conj) {
			continue
		}
		a := ix.assign(preds)
		if !ix.serves(a) {
			continue
		}
		out = append(out, b.buildIndex(ix, a, preds))
	}
	if c := distinctScanOf(out); c != nil && b.q.Distinct != "" {
		return []*candidate{c}, nil
	}
	if b.root != nil && b.root.kind == kOr {
		if c := b.orPlan(b.root, nil, true); c != nil {
			out = append(out, c)
		}
	} else if or, outer := containedOr(b.conj); or != nil {
		if c := b.orPlan(or, outer, false); c != nil {
			out = append(out, c)
		}
	}
	if b.q.Sort != nil {
		provided := false
		for _, c := range out {
			if !c.hasSort {
				provided = true
			}
		}
		if !provided {
			for _, ix := range b.ixs {
				if !b.eligible(ix, b.conj) || ix.spec.Sparse {
					continue
				}
				if _, ok := b.sortDir(ix, allBounds(len(ix.paths))); !ok {
					continue
				}
				a := &assignment{bounds: allBounds(len(ix.paths)), assigned: make([][]*expr, len(ix.paths)), tight: map[*expr]tightness{}}
				out = append(out, b.buildIndex(ix, a, preds))
			}
		}
	}
	if len(out) == 0 {
		out = append(out, b.collScan())
	}
	return out, nil
}

// distinctScanOf returns the first DISTINCT_SCAN among a distinct's
// index plans, or nil. mongod's getExecutorDistinct plans with the
// indexes holding the key and runs the first solution it can turn into a
// DISTINCT_SCAN without racing it against the others.
func distinctScanOf(out []*candidate) *candidate {
	for _, c := range out {
		if strings.HasPrefix(c.id, "DISTINCT_SCAN ") {
			return c
		}
	}
	return nil
}

// entries returns the indexes to consider for the predicates preds, each
// wildcard index replaced by its entries for their paths.
func (b *builder) entries(preds []*expr) []*indexInfo {
	var out []*indexInfo
	var paths []string
	for _, ix := range b.ixs {
		if !ix.spec.IsWildcard() {
			out = append(out, ix)
			continue
		}
		if ix.spec.Hidden {
			continue
		}
		if paths == nil {
			paths = wildPaths(preds)
		}
		out = append(out, ix.expandWildcard(paths)...)
	}
	return out
}

// wildcardHint plans a query on the wildcard index it hints: one
// candidate per entry that some predicate bounds. mongod never scans a
// wildcard index whole, so a hint with none fails: BadValue when the
// index holds none of the query's paths, NoQueryExecutionPlans otherwise.
func (b *builder) wildcardHint(ix *indexInfo, preds []*expr) ([]*candidate, error) {
	es := ix.expandWildcard(wildPaths(preds))
	var out []*candidate
	for _, e := range es {
		if a := e.assign(preds); e.serves(a) {
			out = append(out, b.buildIndex(e, a, preds))
		}
	}
	switch {
	case len(out) > 0:
		return out, nil
	case len(es) == 0:
		return nil, ErrBadHint
	case len(es) == 1:
		return nil, mongoerr.Newf(mongoerr.NoQueryExecutionPlans, "error processing query: ns=%s planner returned error :: caused by :: $hint: refusing to build whole-index solution, because it's a wildcard index", b.q.NS)
	}
	return nil, errNoPlans(b.q.NS)
}

func allBounds(n int) []oil {
	out := make([]oil, n)
	for i := range out {
		out[i] = oil{allValues}
	}
	return out
}

// eligible reports whether ix may serve a query with conjuncts conj:
// hidden indexes never, partial indexes only when the query implies
// their filter.
func (b *builder) eligible(ix *indexInfo, conj []*expr) bool {
	if ix.spec.Hidden || !ix.usable() {
		return false
	}
	return ix.partial == nil || implies(conj, ix.partial)
}

// indexPlan builds the plan of a hinted index, with whatever bounds the
// predicates give its leading field (all values otherwise).
func (b *builder) indexPlan(ix *indexInfo, preds []*expr, hinted bool) *candidate {
	a := ix.assign(preds)
	if len(a.assigned[0]) == 0 {
		a = &assignment{bounds: allBounds(len(ix.paths)), assigned: make([][]*expr, len(ix.paths)), tight: map[*expr]tightness{}}
	}
	return b.buildIndex(ix, a, preds)
}

func (b *builder) collScan() *candidate {
	cs := &collScan{env: b.env, reverse: b.q.Natural < 0, filterX: b.root}
	c := &candidate{id: "COLLSCAN", summary: "COLLSCAN", hasFetch: true, hasSort: b.q.Sort != nil}
	c.root = b.finish(c, cs, false)
	return c
}

func (b *builder) idHack(id bson.RawValue) *candidate {
	c := &candidate{id: "IDHACK", summary: "IDHACK", indexes: []string{"_id_"}}
	var root stage = newIDHack(b.env, bsonkit.CollationKeyed(id, b.q.Collation))
	if b.proj.present {
		root = &projStage{env: b.env, child: root, kind: b.proj.stageName(false), spec: b.q.Projection}
	}
	c.root = root
	return c
}

// residual returns the conjuncts that the bounds of a do not answer
// exactly, split into those the index key can check (keyPreds: only for a
// non-multikey index) and those that need the document.
func (b *builder) residual(ix *indexInfo, a *assignment) (fetchPreds, keyPreds []*expr) {
	for _, c := range b.conj {
		t, assigned := a.tight[c]
		if assigned && t == exact && c.group == 0 {
			continue
		}
		if assigned && t == inexactCovered && !ix.multikey && ix.fieldOf(c.path) >= 0 {
			keyPreds = append(keyPreds, c)
			continue
		}
		fetchPreds = append(fetchPreds, c)
	}
	return fetchPreds, keyPreds
}

func andOf(es []*expr) *expr {
	switch len(es) {
	case 0:
		return nil
	case 1:
		return es[0]
	}
	return &expr{kind: kAnd, children: es}
}

// buildIndex turns an assignment into a plan: IXSCAN, FETCH unless
// covered, then sort, skip, projection and limit.
func (b *builder) buildIndex(ix *indexInfo, a *assignment, preds []*expr) *candidate {
	dir, sorted := 1, false
	if b.q.Sort != nil {
		if d, ok := b.sortDir(ix, a.bounds); ok {
			dir, sorted = d, true
		}
	}
	fetchPreds, keyPreds := b.residual(ix, a)
	scan := newIXScan(b.env, ix, a, dir)
	if len(keyPreds) > 0 {
		kx := andOf(keyPreds)
		if f, err := compileExpr(b.q.Match, kx); err == nil {
			if _, ok := nestDoc(ix.paths, make([]bson.RawValue, len(ix.paths))); ok {
				scan.keyFilter, scan.keyFilterX = f, kx
			} else {
				fetchPreds = append(fetchPreds, keyPreds...)
			}
		} else {
			fetchPreds = append(fetchPreds, keyPreds...)
		}
	}
	if c := b.scanOnly(ix, a, scan, fetchPreds); c != nil {
		return c
	}
	covered := len(fetchPreds) == 0 && b.coveredBy(ix, a)
	c := &candidate{
		id:      "IXSCAN " + ix.id() + fmt.Sprint(dir),
		indexes: []string{ix.spec.Name},
		summary: "IXSCAN " + ix.keyPatternString(),
		hasSort: b.q.Sort != nil && !sorted,
		covered: covered,
	}
	var access stage = scan
	if !covered {
		access = &fetch{env: b.env, child: scan, filterX: andOf(fetchPreds)}
		c.hasFetch = true
	}
	c.root = b.finish(c, access, covered)
	return c
}

// coveredBy reports whether a find projection can be answered from ix's
// keys alone, scanned within a's bounds. A wildcard entry covers only
// when it scans one path's own keys.
func (b *builder) coveredBy(ix *indexInfo, a *assignment) bool {
	p := b.proj
	if !p.present || !p.simple || !p.inclusion || ix.multikey || ix.spec.Sparse || ix.coll != nil {
		// A collated index holds sort keys, not the strings.
		return false
	}
	if ix.wild != nil && (ix.wild.prefixOnly || a.dedup) {
		return false
	}
	if !p.idOut && ix.fieldOf("_id") < 0 {
		return false
	}
	for _, path := range p.paths {
		if ix.fieldOf(path) < 0 {
			return false
		}
	}
	if b.q.Sort != nil {
		for _, sp := range b.q.Sort.Paths() {
			if ix.fieldOf(sp) < 0 {
				return false
			}
		}
	}
	if _, ok := nestDoc(ix.paths, make([]bson.RawValue, len(ix.paths))); !ok {
		return false
	}
	return true
}

// sortDir reports whether ix scanned within bounds yields documents in
// the query's sort order, and in which direction (1 or -1): index fields
// with point bounds are constant and skipped, and the sort fields (minus
// those) must be a prefix of the remaining index fields, all in the
// index's direction or all reversed, none multikey (ESR).
func (b *builder) sortDir(ix *indexInfo, bounds []oil) (int, bool) {
	if !collation.Equal(ix.coll, ix.qcoll) {
		// The index orders strings under another collation.
		return 0, false
	}
	sortPaths := b.q.Sort.Paths()
	dirs := sortDirections(b.q.SortSpec)
	isPoint := func(f int) bool { return len(bounds[f]) == 1 && bounds[f][0].isPoint() }
	var rest []int
	for f := range ix.paths {
		if !isPoint(f) {
			rest = append(rest, f)
		}
	}
	k, scan := 0, 0
	for i, sp := range sortPaths {
		if fi := ix.fieldOf(sp); fi >= 0 && isPoint(fi) {
			continue
		}
		if k >= len(rest) || ix.paths[rest[k]] != sp || len(ix.mk[rest[k]]) > 0 {
			return 0, false
		}
		d := dirs[i]
		if ix.desc[rest[k]] {
			d = -d
		}
		if scan == 0 {
			scan = d
		} else if scan != d {
			return 0, false
		}
		k++
	}
	if scan == 0 {
		scan = 1
	}
	return scan, true
}

func containsPath(ps []string, p string) bool {
	for _, x := range ps {
		if x == p {
			return true
		}
	}
	return false
}

func sortDirections(spec bson.Raw) []int {
	var out []int
	bsonkit.ForEach(spec, func(_ string, v bson.RawValue) bool {
		f, _ := bsonkit.Float64(v)
		if f < 0 {
			out = append(out, -1)
		} else {
			out = append(out, 1)
		}
		return true
	})
	return out
}

// finish adds the blocking sort, skip, projection and limit stages above
// an access path, in mongod's order.
func (b *builder) finish(c *candidate, root stage, covered bool) stage {
	q := b.q
	if c.hasSort {
		s := &sortStage{child: root, ord: q.Sort, spec: q.SortSpec, opts: q.SortOptions, simple: !covered}
		if q.Limit > 0 {
			s.limit = q.Limit + q.Skip
		}
		root = s
	}
	if q.Skip > 0 {
		root = &skipStage{child: root, n: q.Skip, left: q.Skip}
	}
	if b.proj.present {
		ps := &projStage{env: b.env, child: root, kind: b.proj.stageName(covered), spec: q.Projection}
		if covered {
			ps.covered = &coverer{}
		}
		root = ps
	}
	if q.Limit > 0 && !c.hasSort {
		root = &limitStage{child: root, n: q.Limit}
	}
	return root
}

// orPlan answers a rooted $or with one index scan per branch (mongod's
// SUBPLAN of an OR), or returns nil when a branch has no usable index.
// containedOr returns the first $or among the top-level conjuncts of a
// filter and the other conjuncts, or nil when there is none.
func containedOr(conj []*expr) (*expr, []*expr) {
	for i, e := range conj {
		if e.kind == kOr {
			outer := append(append([]*expr(nil), conj[:i]...), conj[i+1:]...)
			return e, outer
		}
	}
	return nil, nil
}

// orPlan plans an $or branch by branch as a union of index scans, or
// returns nil when some branch has no usable index. A rooted $or is
// wrapped in SUBPLAN, as mongod plans it; a contained $or distributes the
// other conjuncts (outer) into every branch, so that (X and (A or B)) runs
// as (X and A) or (X and B), each branch fetched and filtered in full.
func (b *builder) orPlan(or *expr, outer []*expr, rooted bool) *candidate {
	var kids []stage
	var names, ids, sums []string
	anyRaw := false
	for _, br := range or.children {
		conj := append(append([]*expr(nil), outer...), br.conjuncts()...)
		preds := indexablePreds(conj)
		var best *indexInfo
		var bestA *assignment
		bestScore := -1
		for _, ix := range b.entries(preds) {
			if !b.eligible(ix, conj) {
				continue
			}
			a := ix.assign(preds)
			if !ix.serves(a) {
				continue
			}
			if s := score(a); s > bestScore {
				best, bestA, bestScore = ix, a, s
			}
		}
		if best == nil {
			return nil
		}
		sub := &builder{q: b.q, env: b.env, root: andOf(conj), conj: conj, ixs: b.ixs}
		fetchPreds, _ := sub.residual(best, bestA)
		var st stage = newIXScan(b.env, best, bestA, 1)
		if len(fetchPreds) > 0 {
			st = &fetch{env: b.env, child: st, filterX: andOf(fetchPreds)}
		} else {
			anyRaw = true
		}
		kids = append(kids, st)
		names = append(names, best.spec.Name)
		ids = append(ids, best.id())
		sums = append(sums, "IXSCAN "+best.keyPatternString())
	}
	var root stage = &orStage{kids: kids, seen: map[int64]struct{}{}}
	if anyRaw {
		root = &fetch{env: b.env, child: root}
	}
	if rooted {
		root = &subplan{child: root}
	}
	c := &candidate{id: "OR " + strings.Join(ids, ","), indexes: uniq(names), summary: strings.Join(uniq(sums), ", "), hasFetch: true, hasSort: b.q.Sort != nil}
	c.root = b.finish(c, root, false)
	return c
}

func uniq(ss []string) []string {
	var out []string
	for _, s := range ss {
		if !containsPath(out, s) {
			out = append(out, s)
		}
	}
	return out
}

// score ranks an index for one $or branch: point-bounded leading fields
// first, then bounded fields, then exactness.
func score(a *assignment) int {
	s := 0
	lead := true
	for _, o := range a.bounds {
		isPt := len(o) > 0 && o[0].isPoint()
		if lead && isPt {
			s += 100
		} else {
			lead = false
		}
		if !(len(o) == 1 && o[0].isAll()) {
			s += 10
		}
	}
	for _, t := range a.tight {
		if t == exact {
			s++
		}
	}
	return s
}

// subplan marks a rooted $or planned branch by branch (SUBPLAN).
type subplan struct {
	counters_ counters
	child     stage
}

func (s *subplan) counters() *counters { return &s.counters_ }
func (s *subplan) children() []stage   { return []stage{s.child} }
func (s *subplan) name() string        { return "SUBPLAN" }
func (s *subplan) close()              { s.child.close() }
func (s *subplan) describe(d bson.D, _ bool) bson.D {
	return d
}

// doWork passes its child's work through.
func (s *subplan) doWork(ctx context.Context) (state, *member, error) { return work(ctx, s.child) }

// compileExpr returns a matcher for a planner expression of the filter
// from, made of the match nodes its predicates came from: nothing is
// compiled again.
func compileExpr(from *match.Filter, e *expr) (*match.Filter, error) {
	if from == nil {
		return nil, errNoSource
	}
	var nodes []*match.Node
	var walk func(e *expr) error
	walk = func(e *expr) error {
		if e.kind == kAnd {
			for _, c := range e.children {
				if err := walk(c); err != nil {
					return err
				}
			}
			return nil
		}
		if e.src == nil {
			return errNoSource
		}
		nodes = append(nodes, e.src)
		return nil
	}
	if err := walk(e); err != nil {
		return nil, err
	}
	return from.And(nodes), nil
}

// errNoSource reports an expression the planner built without a match
// node behind it; its caller falls back to filtering after the fetch.
var errNoSource = errors.New("plan: expression has no match node")

// shapeHash returns mongod-style 8-hex-digit hashes of the query shape.
func shapeHash(parts ...string) string {
	h := fnv.New32a()
	for _, p := range parts {
		h.Write([]byte(p))
		h.Write([]byte{0})
	}
	return fmt.Sprintf("%08X", h.Sum32())
}
