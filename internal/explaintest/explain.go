package explaintest

import (
	"context"
	"strings"
	"testing"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo"
)

// Stage is one stage of a winning plan.
type Stage struct {
	// Name is the stage's "stage" field: COLLSCAN, IXSCAN, FETCH, SORT…
	Name string
	// Index is the stage's "indexName", empty for stages that read no
	// index.
	Index string
	// Doc is the stage document as the server sent it, its inputs
	// included. It aliases the reply and is valid as long as it is.
	Doc bson.Raw
}

// String returns the stage's name, followed by its index in parentheses
// when it reads one.
func (s Stage) String() string {
	if s.Index == "" {
		return s.Name
	}
	return s.Name + "(" + s.Index + ")"
}

// Bounds returns the stage's index bounds on field, one interval string a
// bound as explain prints them ("[\"bob\", \"boc\")", "[MinKey, MaxKey]"),
// or nil when the stage has no bounds on field.
func (s Stage) Bounds(field string) []string {
	arr, ok := s.Doc.Lookup("indexBounds", field).ArrayOK()
	if !ok {
		return nil
	}
	vals, err := arr.Values()
	if err != nil {
		return nil
	}
	out := make([]string, 0, len(vals))
	for _, v := range vals {
		str, ok := v.StringValueOK()
		if !ok {
			str = v.String()
		}
		out = append(out, str)
	}
	return out
}

// Result is an explain reply as tests read it. Its methods fail the test
// it was made for when the reply lacks what they read; it is not safe for
// use after that test ends.
type Result struct {
	t      testing.TB
	reply  bson.Raw
	stages []Stage
	stats  bson.Raw
}

// Run explains cmd on db with executionStats verbosity (so explain runs
// the winning plan to the end but writes nothing) and parses the reply.
// It fails t when the command fails or the reply has no winning plan. cmd
// is a command document such as {find: "c", filter: f, sort: s},
// {aggregate: "c", pipeline: p, cursor: {}} or {update: "c", updates: […]}.
func Run(t testing.TB, db *mongo.Database, cmd bson.D) Result {
	t.Helper()
	reply, err := db.RunCommand(context.Background(), bson.D{
		{Key: "explain", Value: cmd},
		{Key: "verbosity", Value: "executionStats"},
	}).Raw()
	if err != nil {
		t.Fatalf("explaintest: explain %v: %v", cmd, err)
	}
	return Parse(t, reply)
}

// Parse reads an explain reply. It fails t when reply has no winning plan.
// The Result aliases reply.
func Parse(t testing.TB, reply bson.Raw) Result {
	t.Helper()
	r := Result{t: t, reply: reply}
	r.walk(reply)
	if len(r.stages) == 0 {
		t.Fatalf("explaintest: no winning plan in %s", reply)
	}
	return r
}

// walk appends the winning-plan stages found under doc, root first, and
// keeps the first executionStats it meets: the reply's own, or for an
// aggregate whose pipeline was not pushed down, its $cursor stage's.
func (r *Result) walk(doc bson.Raw) {
	if s, ok := doc.Lookup("stage").StringValueOK(); ok {
		idx, _ := doc.Lookup("indexName").StringValueOK()
		r.stages = append(r.stages, Stage{Name: s, Index: idx, Doc: doc})
	}
	if r.stats == nil {
		if es, ok := doc.Lookup("executionStats").DocumentOK(); ok {
			r.stats = es
		}
	}
	for _, key := range []string{"queryPlanner", "winningPlan", "queryPlan", "inputStage", "$cursor"} {
		if d, ok := doc.Lookup(key).DocumentOK(); ok {
			r.walk(d)
		}
	}
	for _, key := range []string{"inputStages", "stages", "shards"} {
		arr, ok := doc.Lookup(key).ArrayOK()
		if !ok {
			continue
		}
		vals, _ := arr.Values()
		for _, v := range vals {
			if d, ok := v.DocumentOK(); ok {
				r.walk(d)
			}
		}
	}
}

// Reply returns the explain reply as the server sent it.
func (r Result) Reply() bson.Raw { return r.reply }

// Stages returns the stages of the winning plan, root first, depth first.
// The caller must not modify the slice.
func (r Result) Stages() []Stage { return r.stages }

// String lists the winning plan's stages, root first, for failure
// messages: "FETCH IXSCAN(owner_1_openedAt_-1)".
func (r Result) String() string {
	names := make([]string, len(r.stages))
	for i, s := range r.stages {
		names[i] = s.String()
	}
	return strings.Join(names, " ")
}

// Stage returns the first stage named name, root first.
func (r Result) Stage(name string) (Stage, bool) {
	for _, s := range r.stages {
		if s.Name == name {
			return s, true
		}
	}
	return Stage{}, false
}

// MustStage returns the first stage named name, root first, and fails
// the test when the winning plan has none.
func (r Result) MustStage(name string) Stage {
	r.t.Helper()
	s, ok := r.Stage(name)
	if !ok {
		r.t.Fatalf("explaintest: no %s in plan %v", name, r)
	}
	return s
}

// HasStage reports whether the winning plan has a stage named name.
func (r Result) HasStage(name string) bool {
	_, ok := r.Stage(name)
	return ok
}

// indexScans names the stages that read an index. MongoDB 8.0 answers
// point lookups on _id or a unique index with EXPRESS_IXSCAN.
var indexScans = map[string]bool{
	"IXSCAN": true, "EXPRESS_IXSCAN": true, "COUNT_SCAN": true, "DISTINCT_SCAN": true,
}

// Scan returns the first stage, root first, that scans index.
func (r Result) Scan(index string) (Stage, bool) {
	for _, s := range r.stages {
		if indexScans[s.Name] && s.Index == index {
			return s, true
		}
	}
	return Stage{}, false
}

// Uses reports whether the winning plan scans index (IXSCAN,
// EXPRESS_IXSCAN, COUNT_SCAN or DISTINCT_SCAN).
func (r Result) Uses(index string) bool {
	_, ok := r.Scan(index)
	return ok
}

// Bounds returns the bounds on field of the first scan of index, as
// Stage.Bounds does, or nil when the plan does not scan index.
func (r Result) Bounds(index, field string) []string {
	s, ok := r.Scan(index)
	if !ok {
		return nil
	}
	return s.Bounds(field)
}

// KeysExamined returns executionStats.totalKeysExamined.
func (r Result) KeysExamined() int64 {
	r.t.Helper()
	return r.stat("totalKeysExamined")
}

// DocsExamined returns executionStats.totalDocsExamined.
func (r Result) DocsExamined() int64 {
	r.t.Helper()
	return r.stat("totalDocsExamined")
}

// NReturned returns executionStats.nReturned: for an aggregate whose
// pipeline was not pushed down, the documents its $cursor stage returned.
func (r Result) NReturned() int64 {
	r.t.Helper()
	return r.stat("nReturned")
}

// stat returns the executionStats number named key, failing the test
// when there is none.
func (r Result) stat(key string) int64 {
	r.t.Helper()
	if r.stats == nil {
		r.t.Fatalf("explaintest: no executionStats in %s", r.reply)
	}
	n, ok := r.stats.Lookup(key).AsInt64OK()
	if !ok {
		r.t.Fatalf("explaintest: no executionStats.%s in %s", key, r.stats)
	}
	return n
}
