package command

import (
	"sync"
	"time"

	"go.mongodb.org/mongo-driver/v2/bson"

	"github.com/formworkdb/formwork/engine/internal/plan"
	"github.com/formworkdb/formwork/engine/internal/storage"
)

// envExt holds the query-side state of an Env: the planner and its plan
// cache, profiler settings and index usage counters.
type envExt struct {
	planner *plan.Planner

	mu       sync.Mutex
	profile  map[string]profileSettings // per database
	slowMS   int64                      // global, as mongod's --slowms
	rate     float64
	profSize map[string]int64 // system.profile ns → approximate bytes
	ixStats  map[string]map[string]*indexUse
	// collators caches one *collation.Collator per normalised spec
	// (collation.go).
	collators sync.Map
}

// indexUse counts the executed plans that read one index ($indexStats).
type indexUse struct {
	ops   int64
	since time.Time
	id    uint32
}

func newEnvExt() *envExt {
	return &envExt{
		planner:  plan.NewPlanner(),
		profile:  map[string]profileSettings{},
		slowMS:   100,
		rate:     1,
		profSize: map[string]int64{},
		ixStats:  map[string]map[string]*indexUse{},
	}
}

func (e *Env) ext() *envExt { return e.x }

// noteIndexUse counts one executed plan reading each named index of c.
func (x *envExt) noteIndexUse(c *storage.Collection, names []string) {
	if len(names) == 0 {
		return
	}
	x.mu.Lock()
	defer x.mu.Unlock()
	m := x.indexUses(c)
	for _, n := range names {
		if u := m[n]; u != nil {
			u.ops++
		}
	}
}

// indexUses returns c's counters, starting a counter for every index it
// has not seen and dropping those of dropped indexes. x.mu is held.
func (x *envExt) indexUses(c *storage.Collection) map[string]*indexUse {
	m := x.ixStats[c.NS]
	if m == nil {
		m = map[string]*indexUse{}
		x.ixStats[c.NS] = m
	}
	live := map[string]bool{}
	for _, ix := range c.Indexes {
		live[ix.Name] = true
		if u := m[ix.Name]; u == nil || u.id != ix.ID {
			m[ix.Name] = &indexUse{since: time.Now(), id: ix.ID}
		}
	}
	for n := range m {
		if !live[n] {
			delete(m, n)
		}
	}
	return m
}

// opState is the per-command state a query reports to: the examined
// counts and plan facts the profiler writes. A Request holds its
// operation (Request.op); cursors report to the getMore reading them.
type opState struct {
	env      *Env
	profiled bool // the database profiles; queries report as they go

	mu          sync.Mutex
	keys, docs  int64
	planSummary string
	hasSort     bool
	usedDisk    bool
	multi       bool
	queryHash   string
	cacheKey    string
	// origin is a getMore's cursor's originating command, which its
	// profile entry shows as originatingCommand.
	origin bson.Raw
	// stmts are an update or delete command's statements, each profiled
	// as its own entry.
	stmts []stmtProfile
}

func (op *opState) notePlan(x *plan.Executor) {
	st := x.Stats()
	op.mu.Lock()
	op.planSummary = st.PlanSummary
	op.multi = st.FromMultiPlanner
	op.queryHash, op.cacheKey = st.QueryHash, st.PlanCacheKey
	op.mu.Unlock()
}

// summary returns the plan summary the operation has seen so far.
func (op *opState) summary() string {
	if op == nil {
		return ""
	}
	op.mu.Lock()
	defer op.mu.Unlock()
	return op.planSummary
}

// keepSummary gives a getMore the plan summary of its cursor, prev, when
// this batch planned nothing, and returns the summary the cursor keeps.
func (op *opState) keepSummary(prev string) string {
	if op == nil {
		return prev
	}
	op.mu.Lock()
	defer op.mu.Unlock()
	if op.planSummary == "" {
		op.planSummary = prev
	}
	return op.planSummary
}

func (op *opState) addExamined(keys, docs int64, st plan.Stats) {
	op.mu.Lock()
	op.keys += keys
	op.docs += docs
	if op.planSummary == "" {
		op.planSummary = st.PlanSummary
	}
	op.hasSort = op.hasSort || st.HasSortStage
	op.usedDisk = op.usedDisk || st.UsedDisk
	op.mu.Unlock()
}

// Bool returns a boolean server parameter.
func (p *parameters) Bool(name string) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	b, _ := p.values[name].(bool)
	return b
}

// indexStatsDocs returns the $indexStats documents of c, one per index in
// catalog order: {name, key, host, accesses: {ops, since}, spec}.
func (e *Env) indexStatsDocs(c *storage.Collection) []bson.Raw {
	x := e.ext()
	x.mu.Lock()
	m := x.indexUses(c)
	var out []bson.Raw
	for _, ix := range c.Indexes {
		u := m[ix.Name]
		d := bson.D{
			{Key: "name", Value: ix.Name},
			{Key: "key", Value: ix.Key()},
			{Key: "host", Value: e.Config.Host},
			{Key: "accesses", Value: bson.D{{Key: "ops", Value: u.ops}, {Key: "since", Value: bson.NewDateTimeFromTime(u.since)}}},
			{Key: "spec", Value: ix.Spec},
		}
		b, err := bson.Marshal(d)
		if err == nil {
			out = append(out, b)
		}
	}
	x.mu.Unlock()
	return out
}
