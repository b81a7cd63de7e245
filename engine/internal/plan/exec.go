package plan

import (
	"context"
	"sort"
	"strings"
	"sync"
	"time"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/x/bsonx/bsoncore"

	"github.com/formworkdb/formwork/engine/internal/collation"
	"github.com/formworkdb/formwork/engine/internal/keystring"
	"github.com/formworkdb/formwork/engine/internal/match"
	"github.com/formworkdb/formwork/engine/internal/order"
	"github.com/formworkdb/formwork/engine/internal/storage"
)

// Query describes one read of a collection. The planner does not modify
// it; its raw documents must stay valid while the Executor runs.
type Query struct {
	NS   string
	Coll *storage.Collection // nil: the collection does not exist
	// Filter is the filter as sent (an empty document for none); Match is
	// its compiled form, from which the planner derives index bounds
	// (match's View). Filter is read only for IDHACK, which like mongod's
	// isSimpleIdQuery looks at the filter document as written.
	Filter bson.Raw
	Match  *match.Filter
	// Sort and SortSpec describe a sort (nil: none); Natural is the
	// direction of a {$natural: ±1} sort or hint, which forces a
	// collection scan, or 0.
	Sort     *order.Order
	SortSpec bson.Raw
	Natural  int
	// Projection is a find projection spec, nil for none; the caller
	// applies it to the rows, the planner only uses it to cover the query.
	Projection bson.Raw
	Skip       int64
	Limit      int64 // 0: no limit
	// HintIndex names the hinted index ("" for none); the caller has
	// resolved a key-pattern hint to its index's name.
	HintIndex string
	// SortOptions bound a blocking sort.
	SortOptions SortOptions
	// NoCache plans afresh without reading or writing the plan cache
	// (explain does so).
	NoCache bool
	// Distinct is the key of a distinct command ("" otherwise), which
	// lets the planner answer with a DISTINCT_SCAN; Projection is then
	// {_id: 0, <key>: 1}, as mongod plans it.
	Distinct string
	// Min and Max are find's min and max (nil or empty for none): index
	// key bounds of the hinted index.
	Min, Max bson.Raw
	// Count marks a count command, which may run as a COUNT_SCAN that
	// returns rows without documents.
	Count bool
	// Collation is the query's collation (nil: simple). Match and Sort
	// were compiled with it; an index serves string predicates and the
	// sort only when its collation is the same (collation.go).
	Collation *collation.Collator
}

// trial limits of the multi-planner (mongod's
// internalQueryPlanEvaluationWorks and internalQueryPlanEvaluationMaxResults).
const (
	trialWorks   = 10000
	trialResults = 101
)

// Planner plans queries and caches the winning plan of each query shape
// per collection. It is safe for concurrent use.
type Planner struct {
	mu    sync.Mutex
	cache map[string]*collCache
}

type collCache struct {
	coll    *storage.Collection
	entries map[string]cacheEntry // by query shape
}

// cacheEntry is a shape's cached choice: the winning candidate and the
// works it needed in its trial, which bound how long the cached plan may
// run before it is judged stale (see replanRatio).
type cacheEntry struct {
	id    string
	works int64
}

// replanRatio is mongod's internalQueryCacheEvictionRatio: a cached plan
// that needs more than this many times its trial works to produce a trial's
// worth of results is evicted and the query is planned afresh.
const replanRatio = 10

// NewPlanner returns a planner with an empty plan cache.
func NewPlanner() *Planner { return &Planner{cache: map[string]*collCache{}} }

// ClearCache drops the cached plans of ns (planCacheClear).
func (p *Planner) ClearCache(ns string) {
	p.mu.Lock()
	delete(p.cache, ns)
	p.mu.Unlock()
}

// ClearShape drops the cached plans of ns for one query shape: the
// compiled filter (nil for none), sort and projection (nil for none),
// whatever the skip and limit (planCacheClear with a query). The
// arguments are not retained.
func (p *Planner) ClearShape(ns string, filter *match.Filter, sort, projection bson.Raw) {
	base := shapeString(parsedFilter(filter), sort, projection)
	p.mu.Lock()
	defer p.mu.Unlock()
	cc := p.cache[ns]
	if cc == nil {
		return
	}
	for _, suffix := range []string{"", "s", "l", "sl"} {
		delete(cc.entries, base+suffix)
	}
}

// CacheSize returns how many shapes of ns have a cached plan.
func (p *Planner) CacheSize(ns string, c *storage.Collection) int {
	p.mu.Lock()
	defer p.mu.Unlock()
	cc := p.cache[ns]
	if cc == nil || cc.coll != c {
		return 0
	}
	return len(cc.entries)
}

// lookup returns the cached candidate id of a shape. A catalog change
// (index created or dropped, a new multikey path) publishes a new
// *storage.Collection, which evicts the collection's entries.
func (p *Planner) lookup(ns string, c *storage.Collection, shape string) (cacheEntry, bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	cc := p.cache[ns]
	if cc == nil || cc.coll != c {
		delete(p.cache, ns)
		return cacheEntry{}, false
	}
	e, ok := cc.entries[shape]
	return e, ok
}

func (p *Planner) store(ns string, c *storage.Collection, shape string, e cacheEntry) {
	p.mu.Lock()
	defer p.mu.Unlock()
	cc := p.cache[ns]
	if cc == nil || cc.coll != c {
		cc = &collCache{coll: c, entries: map[string]cacheEntry{}}
		p.cache[ns] = cc
	}
	cc.entries[shape] = e
}

// evict drops one shape's cached choice.
func (p *Planner) evict(ns, shape string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if cc := p.cache[ns]; cc != nil {
		delete(cc.entries, shape)
	}
}

// Executor runs a chosen plan. It is used by one goroutine and must be
// closed.
type Executor struct {
	q          *Query
	parsed     *expr
	root       stage
	win        *candidate
	cands      []*candidate
	rejected   []*candidate
	buf        []*member
	multi      bool
	fromCache  bool
	replanned  bool // a cached plan was evicted and the query replanned
	queryHash  string
	cacheKey   string
	elapsed    time.Duration
	returned   int64
	empty      bool
	reportKeys int64
	reportDocs int64
	last       *member // the row Next returned last
}

// Plan builds the candidate plans of q over rd, runs the multi-planner
// trial when there is more than one (or reuses the shape's cached
// choice), and returns the executor of the winner. Errors: BadValue for a
// hint naming no index, NoQueryExecutionPlans for a hinted partial index
// the query cannot use, and errors of the trial run (a sort over its
// memory limit).
func (p *Planner) Plan(ctx context.Context, rd storage.Reader, q *Query) (*Executor, error) {
	start := time.Now()
	x := &Executor{q: q}
	x.parsed = parsedFilter(q.Match)
	shape := x.shape()
	x.queryHash = shapeHash(shape)
	x.cacheKey = shapeHash(q.NS, shape)
	if q.Coll == nil {
		x.empty = true
		return x, nil
	}
	e := &env{rd: rd, coll: q.Coll, filter: q.Match}
	b := &builder{q: q, env: e, root: x.parsed, conj: x.parsed.conjuncts(), proj: parseProjection(q.Projection)}
	for _, ix := range q.Coll.Indexes {
		if ix.Def != nil {
			info := newIndexInfo(ix)
			info.qcoll = q.Collation
			b.ixs = append(b.ixs, info)
		}
	}
	cands, err := b.candidates()
	if err != nil {
		return nil, err
	}
	x.cands = cands
	if len(cands) == 1 {
		x.win = cands[0]
	} else {
		if !q.NoCache {
			if entry, ok := p.lookup(q.NS, q.Coll, shape); ok {
				for _, c := range cands {
					if c.id == entry.id {
						x.win, x.fromCache = c, true
					}
				}
				if x.win != nil {
					fresh, err := x.checkCached(ctx, entry.works)
					if err != nil {
						return nil, err
					}
					if !fresh {
						// Replan: the cached plan ran past its budget, so
						// its state is spent; build the candidates anew.
						p.evict(q.NS, shape)
						for _, c := range cands {
							c.root.close()
						}
						if cands, err = b.candidates(); err != nil {
							return nil, err
						}
						x.cands, x.win, x.fromCache, x.replanned = cands, nil, false, true
					}
				}
			}
		}
		if x.win == nil {
			if err := x.trial(ctx, cands); err != nil {
				return nil, err
			}
			if !q.NoCache {
				p.store(q.NS, q.Coll, shape, cacheEntry{id: x.win.id, works: x.win.root.counters().works})
			}
		}
		for _, c := range cands {
			if c != x.win {
				x.rejected = append(x.rejected, c)
				if !x.multi {
					continue
				}
				c.root.close()
			}
		}
	}
	x.root = x.win.root
	x.buf = x.win.buf
	x.elapsed = time.Since(start)
	return x, nil
}

// parsedFilter returns the planner's tree of a compiled filter; nil
// stands for an empty one.
func parsedFilter(f *match.Filter) *expr {
	if f == nil {
		return nil
	}
	e := fromMatch(f)
	if len(e.conjuncts()) == 0 && e.kind == kAnd {
		return nil
	}
	return e
}

// shape returns the plan cache key of the executor's query within its
// collection.
func (x *Executor) shape() string {
	s := shapeString(x.parsed, x.q.SortSpec, x.q.Projection)
	if x.q.Skip > 0 {
		s += "s"
	}
	if x.q.Limit > 0 {
		s += "l"
	}
	if x.q.Collation != nil {
		s += "c" + string(x.q.Collation.Document())
	}
	return s
}

// shapeString renders a query shape without its skip and limit marks.
func shapeString(parsed *expr, sort, projection bson.Raw) string {
	var b strings.Builder
	if parsed != nil {
		parsed.shape(&b)
	}
	b.WriteString("|")
	b.Write(sort)
	b.WriteString("|")
	b.Write(projection)
	b.WriteString("|")
	return b.String()
}

// trial runs the candidates round-robin until one reaches EOF or returns
// enough results, or all have done the maximum works, and picks the most
// productive (mongod's MultiPlanStage and plan_ranker).
// checkCached runs the cached winner alone, as mongod's CachedPlanStage
// does, buffering its results: it reports fresh when the plan produces a
// trial's worth of results (or finishes) within replanRatio times the
// works it needed when it was cached, and stale otherwise.
func (x *Executor) checkCached(ctx context.Context, cachedWorks int64) (fresh bool, err error) {
	want := int64(trialResults)
	if x.q.Limit > 0 && x.q.Limit < want {
		want = x.q.Limit
	}
	budget := replanRatio * max(cachedWorks, 1)
	c := x.win
	for i := int64(0); i < budget; i++ {
		st, m, err := work(ctx, c.root)
		if err != nil {
			return false, err
		}
		switch st {
		case advanced:
			c.buf = append(c.buf, m)
			if int64(len(c.buf)) >= want {
				return true, nil
			}
		case isEOF:
			return true, nil
		}
	}
	return false, nil
}

func (x *Executor) trial(ctx context.Context, cands []*candidate) error {
	x.multi = true
	want := int64(trialResults)
	if x.q.Limit > 0 && x.q.Limit < want {
		want = x.q.Limit
	}
	alive := len(cands)
	var lastErr error
	done := false
	for round := 0; !done && round < trialWorks && alive > 0; round++ {
		for _, c := range cands {
			if c.failed != nil || c.root.counters().eof {
				continue
			}
			st, m, err := work(ctx, c.root)
			if err != nil {
				if ctx.Err() != nil {
					return err
				}
				c.failed, lastErr = err, err
				alive--
				continue
			}
			if st == advanced {
				c.buf = append(c.buf, m)
				if int64(len(c.buf)) >= want {
					done = true
				}
			}
			if st == isEOF {
				done = true
			}
		}
	}
	for _, c := range cands {
		c.trialN = int64(len(c.buf))
		c.trialDoc = stageDoc(c.root, true)
		walk(c.root, func(s stage) {
			k, d := examined(s)
			c.trialKeys += k
			c.trialDocs += d
		})
	}
	var best *candidate
	bestScore := -1.0
	for _, c := range cands {
		if c.failed != nil {
			continue
		}
		if s := c.score(); s > bestScore {
			best, bestScore = c, s
		}
	}
	if best == nil {
		return lastErr
	}
	x.win = best
	return nil
}

// score is mongod's plan score: 1 + productivity (results per work) +
// 1 when the plan reached EOF + small bonuses for needing no fetch, no
// blocking sort and no index intersection.
func (c *candidate) score() float64 {
	cnt := c.root.counters()
	works := float64(cnt.works)
	if works == 0 {
		works = 1
	}
	s := 1 + float64(cnt.advanced)/works
	if cnt.eof {
		s++
	}
	eps := 1 / (10 * works)
	if eps > 1e-4 {
		eps = 1e-4
	}
	if !c.hasFetch {
		s += eps
	}
	if !c.hasSort {
		s += eps
	}
	s += eps // no index intersection: the planner builds none
	return s
}

// Next returns the next row: its record id and document. ok is false at
// the end.
func (x *Executor) Next(ctx context.Context) (rid int64, doc bson.Raw, ok bool, err error) {
	if x.empty || x.root == nil {
		return 0, nil, false, nil
	}
	if len(x.buf) > 0 {
		m := x.buf[0]
		x.buf = x.buf[1:]
		x.returned++
		x.last = m
		return m.rid, m.doc, true, nil
	}
	for {
		st, m, err := work(ctx, x.root)
		if err != nil {
			return 0, nil, false, err
		}
		switch st {
		case advanced:
			x.returned++
			x.last = m
			return m.rid, m.doc, true, nil
		case isEOF:
			return 0, nil, false, nil
		}
	}
}

// Close releases the plans' iterators and spill files.
func (x *Executor) Close() {
	for _, c := range x.cands {
		c.root.close()
	}
}

// DistinctScan reports whether the winning plan is a DISTINCT_SCAN, whose
// rows come one per distinct index key of the distinct field.
func (x *Executor) DistinctScan() bool {
	found := false
	if x.win != nil {
		walk(x.win.root, func(s stage) {
			if _, ok := s.(*distinctScan); ok {
				found = true
			}
		})
	}
	return found
}

// ReturnKey returns the index key of the row Next returned last as find's
// returnKey shows it: {<key pattern field>: value, ...}, flat, or an empty
// document when the row came from no index scan.
//
// Divergence: the keystring encoding holds values, not types (keystring
// I8), so a key value prints as its decoded form (a number in the type
// the decoder picks) where mongod keeps the type the document had.
func (x *Executor) ReturnKey() bson.Raw {
	empty := bson.Raw{5, 0, 0, 0, 0}
	if x.last == nil || x.last.fromIx == nil {
		return empty
	}
	ix := x.last.fromIx
	vals, _, err := keystring.Decode(x.last.from, ix.desc)
	if err != nil || len(vals) != len(ix.paths) {
		return empty
	}
	idx, d := bsoncore.AppendDocumentStart(nil)
	for i, v := range vals {
		d = bsoncore.AppendValueElement(d, ix.paths[i], bsoncore.Value{Type: bsoncore.Type(v.Type), Data: v.Value})
	}
	d, _ = bsoncore.AppendDocumentEnd(d, idx)
	return d
}

// DistinctKey returns the value of path in the index key of the row Next
// returned last, when that row came from an index without a collation
// (whose keys hold the values themselves, not collation keys). A
// DISTINCT_SCAN returns one row per key, standing for every document
// that shares it, so distinct must answer the key's value, not whatever
// else the row's document holds at path.
func (x *Executor) DistinctKey(path string) (bson.RawValue, bool) {
	if x.last == nil || x.last.fromIx == nil || x.last.fromIx.coll != nil {
		return bson.RawValue{}, false
	}
	ix := x.last.fromIx
	vals, _, err := keystring.Decode(x.last.from, ix.desc)
	if err != nil || len(vals) != len(ix.paths) {
		return bson.RawValue{}, false
	}
	for i, p := range ix.paths {
		if p == path {
			return vals[i], true
		}
	}
	return bson.RawValue{}, false
}

// Stats are an executor's totals so far.
type Stats struct {
	KeysExamined, DocsExamined int64
	HasSortStage, UsedDisk     bool
	FromMultiPlanner           bool
	PlanSummary                string
	QueryHash, PlanCacheKey    string
}

// Stats returns the totals of the winning plan so far (trial included).
func (x *Executor) Stats() Stats {
	st := Stats{FromMultiPlanner: x.multi, QueryHash: x.queryHash, PlanCacheKey: x.cacheKey, PlanSummary: "EOF"}
	if x.win == nil {
		return st
	}
	st.PlanSummary = x.win.summary
	walk(x.win.root, func(s stage) {
		k, d := examined(s)
		st.KeysExamined += k
		st.DocsExamined += d
		if ss, ok := s.(*sortStage); ok {
			st.HasSortStage = true
			st.UsedDisk = st.UsedDisk || ss.usedDisk
		}
	})
	return st
}

// Delta returns the keys and documents examined since the previous call,
// for per-operation accounting across getMore.
func (x *Executor) Delta() (keys, docs int64) {
	st := x.Stats()
	keys, docs = st.KeysExamined-x.reportKeys, st.DocsExamined-x.reportDocs
	x.reportKeys, x.reportDocs = st.KeysExamined, st.DocsExamined
	return keys, docs
}

// IndexesUsed returns the names of the indexes the winning plan reads;
// $indexStats counts one access for each per executed plan.
func (x *Executor) IndexesUsed() []string {
	if x.win == nil {
		return nil
	}
	return x.win.indexes
}

func walk(s stage, fn func(stage)) {
	fn(s)
	for _, c := range s.children() {
		walk(c, fn)
	}
}

func examined(s stage) (keys, docs int64) {
	switch t := s.(type) {
	case *ixScan:
		return t.keys, 0
	case *distinctScan:
		return t.keys, 0
	case *countScan:
		return t.keys, 0
	case *collScan:
		return 0, t.docs
	case *fetch:
		return 0, t.docs
	case *idHack:
		return t.keys, t.docs
	}
	return 0, 0
}

// CacheEntry describes one cached plan choice ($planCacheStats).
type CacheEntry struct {
	QueryHash, PlanCacheKey string
	// Plan is the cached winner's identity (its stages and indexes).
	Plan  string
	Works int64
}

// CacheEntries returns the cached plans of ns for the collection
// definition c, ordered by query hash. It is safe for concurrent use.
func (p *Planner) CacheEntries(ns string, c *storage.Collection) []CacheEntry {
	p.mu.Lock()
	defer p.mu.Unlock()
	cc := p.cache[ns]
	if cc == nil || cc.coll != c {
		return nil
	}
	out := make([]CacheEntry, 0, len(cc.entries))
	for shape, e := range cc.entries {
		out = append(out, CacheEntry{QueryHash: shapeHash(shape), PlanCacheKey: shapeHash(ns, shape), Plan: e.id, Works: e.works})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].PlanCacheKey < out[j].PlanCacheKey })
	return out
}
