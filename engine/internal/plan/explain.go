package plan

import (
	"context"
	"time"

	"go.mongodb.org/mongo-driver/v2/bson"
)

// Verbosity is an explain verbosity.
type Verbosity int

// The explain verbosities, in increasing detail.
const (
	QueryPlanner Verbosity = iota
	ExecutionStats
	AllPlansExecution
)

// ParseVerbosity maps explain's verbosity string; ok is false for an
// unknown one.
func ParseVerbosity(s string) (Verbosity, bool) {
	switch s {
	case "queryPlanner":
		return QueryPlanner, true
	case "executionStats":
		return ExecutionStats, true
	case "allPlansExecution":
		return AllPlansExecution, true
	}
	return 0, false
}

// Wrap describes a stage a command puts on top of the plan in explain
// (COUNT, UPDATE, DELETE, ...): its name, its static fields and the
// statistics it reports with executionStats.
type Wrap struct {
	Stage  string
	Fields bson.D
	Stats  bson.D
}

// RunAll runs the executor to the end, discarding rows, for explain's
// executionStats; it returns the number of rows and the time taken.
func (x *Executor) RunAll(ctx context.Context) (int64, time.Duration, error) {
	return x.RunUpTo(ctx, 0)
}

// RunUpTo runs the executor until it has returned max rows (0: to the
// end), discarding them, as a count with a limit stops its plan early.
func (x *Executor) RunUpTo(ctx context.Context, max int64) (int64, time.Duration, error) {
	start := time.Now()
	var n int64
	for max <= 0 || n < max {
		_, _, ok, err := x.Next(ctx)
		if err != nil {
			return n, time.Since(start), err
		}
		if !ok {
			break
		}
		n++
	}
	return n, time.Since(start) + x.elapsed, nil
}

// stageDoc renders a stage tree; stats adds the execution statistics.
func stageDoc(s stage, stats bool) bson.D {
	d := bson.D{{Key: "stage", Value: s.name()}}
	if stats {
		c := s.counters()
		d = append(d,
			bson.E{Key: "nReturned", Value: int32(c.advanced)},
			bson.E{Key: "executionTimeMillisEstimate", Value: int32(0)},
			bson.E{Key: "works", Value: int32(c.works)},
			bson.E{Key: "advanced", Value: int32(c.advanced)},
			bson.E{Key: "needTime", Value: int32(c.needTime)},
			bson.E{Key: "needYield", Value: int32(0)},
			bson.E{Key: "saveState", Value: int32(0)},
			bson.E{Key: "restoreState", Value: int32(0)},
			bson.E{Key: "isEOF", Value: boolInt(c.eof)},
		)
	}
	d = s.describe(d, stats)
	kids := s.children()
	switch {
	case len(kids) == 1:
		d = append(d, bson.E{Key: "inputStage", Value: stageDoc(kids[0], stats)})
	case len(kids) > 1:
		arr := bson.A{}
		for _, k := range kids {
			arr = append(arr, stageDoc(k, stats))
		}
		d = append(d, bson.E{Key: "inputStages", Value: arr})
	}
	return d
}

func boolInt(b bool) int32 {
	if b {
		return 1
	}
	return 0
}

func wrapDoc(w *Wrap, inner bson.D, stats bool, nReturned int64) bson.D {
	if w == nil {
		return inner
	}
	d := bson.D{{Key: "stage", Value: w.Stage}}
	if stats {
		d = append(d,
			bson.E{Key: "nReturned", Value: int32(nReturned)},
			bson.E{Key: "executionTimeMillisEstimate", Value: int32(0)},
			bson.E{Key: "works", Value: int32(1)},
			bson.E{Key: "advanced", Value: int32(nReturned)},
			bson.E{Key: "needTime", Value: int32(0)},
			bson.E{Key: "needYield", Value: int32(0)},
			bson.E{Key: "saveState", Value: int32(0)},
			bson.E{Key: "restoreState", Value: int32(0)},
			bson.E{Key: "isEOF", Value: int32(1)},
		)
	}
	d = append(d, w.Fields...)
	if stats {
		d = append(d, w.Stats...)
	}
	if inner != nil {
		d = append(d, bson.E{Key: "inputStage", Value: inner})
	}
	return d
}

// QueryPlannerDoc returns explain's queryPlanner section. wrap, if not
// nil, is shown above the plan.
func (x *Executor) QueryPlannerDoc(wrap *Wrap) bson.D {
	parsed := bson.D{}
	if x.parsed != nil {
		parsed = x.parsed.serialize("")
	}
	var win bson.D
	if x.win != nil {
		win = stageDoc(x.win.root, false)
	} else {
		win = bson.D{{Key: "stage", Value: "EOF"}}
	}
	rejected := bson.A{}
	for _, c := range x.rejected {
		rejected = append(rejected, wrapDoc(wrap, stageDoc(c.root, false), false, 0))
	}
	d := bson.D{
		{Key: "namespace", Value: x.q.NS},
		{Key: "indexFilterSet", Value: false},
		{Key: "parsedQuery", Value: parsed},
	}
	if x.q.Collation != nil {
		d = append(d, bson.E{Key: "collation", Value: x.q.Collation.Document()})
	}
	return append(d, bson.D{
		{Key: "queryHash", Value: x.queryHash},
		{Key: "planCacheKey", Value: x.cacheKey},
		{Key: "maxIndexedOrSolutionsReached", Value: false},
		{Key: "maxIndexedAndSolutionsReached", Value: false},
		{Key: "maxScansToExplodeReached", Value: false},
		{Key: "winningPlan", Value: wrapDoc(wrap, win, false, 0)},
		{Key: "rejectedPlans", Value: rejected},
	}...)
}

// ExecutionStatsDoc returns explain's executionStats section after the
// plan ran to the end (RunAll). nReturned is what the command returned
// (the wrap's count for COUNT/UPDATE/DELETE), verbosity AllPlansExecution
// adds the trial statistics of every candidate.
func (x *Executor) ExecutionStatsDoc(wrap *Wrap, nReturned int64, took time.Duration, v Verbosity) bson.D {
	st := x.Stats()
	var stages bson.D
	if x.win != nil {
		stages = stageDoc(x.win.root, true)
	} else {
		stages = bson.D{{Key: "stage", Value: "EOF"}, {Key: "nReturned", Value: int32(0)}, {Key: "executionTimeMillisEstimate", Value: int32(0)},
			{Key: "works", Value: int32(1)}, {Key: "advanced", Value: int32(0)}, {Key: "needTime", Value: int32(0)}, {Key: "needYield", Value: int32(0)},
			{Key: "saveState", Value: int32(0)}, {Key: "restoreState", Value: int32(0)}, {Key: "isEOF", Value: int32(1)}}
	}
	d := bson.D{
		{Key: "executionSuccess", Value: true},
		{Key: "nReturned", Value: int32(nReturned)},
		{Key: "executionTimeMillis", Value: int32(took.Milliseconds())},
		{Key: "totalKeysExamined", Value: int32(st.KeysExamined)},
		{Key: "totalDocsExamined", Value: int32(st.DocsExamined)},
		{Key: "executionStages", Value: wrapDoc(wrap, stages, true, nReturned)},
	}
	if v == AllPlansExecution {
		arr := bson.A{}
		if x.multi {
			for _, c := range x.cands {
				arr = append(arr, bson.D{
					{Key: "nReturned", Value: int32(c.trialN)},
					{Key: "executionTimeMillisEstimate", Value: int32(0)},
					{Key: "totalKeysExamined", Value: int32(c.trialKeys)},
					{Key: "totalDocsExamined", Value: int32(c.trialDocs)},
					{Key: "executionStages", Value: wrapDoc(wrap, c.trialDoc, true, c.trialN)},
				})
			}
		}
		d = append(d, bson.E{Key: "allPlansExecution", Value: arr})
	}
	return d
}
