package command

import (
	"context"
	"os"
	"path/filepath"

	"go.mongodb.org/mongo-driver/v2/bson"

	"github.com/formworkdb/formwork/engine/internal/match"
	"github.com/formworkdb/formwork/engine/internal/mongoerr"
	"github.com/formworkdb/formwork/engine/internal/order"
	"github.com/formworkdb/formwork/engine/internal/plan"
	"github.com/formworkdb/formwork/engine/internal/projection"
	"github.com/formworkdb/formwork/engine/internal/storage"
)

// query is a parsed read: the documents of one collection that match a
// filter, in an order, after skip and up to limit. find, count, distinct,
// update, delete, findAndModify and aggregate select documents through it;
// the plan package chooses how (collection scan, index scans, IDHACK).
type query struct {
	coll      *storage.Collection // nil: the collection does not exist
	filterRaw bson.Raw
	filter    *match.Filter
	sort      *order.Order
	sortSpec  bson.Raw
	natural   int // $natural direction: 0 none, 1 forward, -1 backward
	skip      int64
	limit     int64 // 0: no limit
	hint      bson.RawValue
	// projSpec is find's projection, which lets the planner cover the
	// query from an index; the caller still applies the projection.
	projSpec bson.Raw
	// allowDiskUse is the command's allowDiskUse, nil when not given
	// (allowDiskUseByDefault applies).
	allowDiskUse *bool
}

// row is a document with its record id.
type row struct {
	rid int64
	doc bson.Raw
}

// rowIter yields rows; next returns ok=false at the end.
type rowIter interface {
	next(ctx context.Context) (row, bool, error)
	close()
}

// setFilter compiles filter (nil or empty for all documents).
func (q *query) setFilter(filter bson.Raw) error {
	if filter == nil {
		filter = bson.Raw{5, 0, 0, 0, 0}
	}
	f, err := match.Compile(filter)
	if err != nil {
		return err
	}
	q.filterRaw, q.filter = filter, f
	return nil
}

// setSort compiles a sort specification.
func (q *query) setSort(spec bson.Raw) error {
	if spec == nil {
		return nil
	}
	o, err := order.Compile(spec)
	if err != nil {
		return err
	}
	if dir, ok := o.Natural(); ok {
		q.natural = dir
		return nil
	}
	if o.Len() > 0 {
		q.sort, q.sortSpec = o, spec
	}
	return nil
}

// checkHint validates a hint against the collection's indexes: a name or a
// key pattern of an existing index, or {$natural: ±1}. The planner checks
// hidden and partial indexes when it plans.
func (q *query) checkHint() error {
	h := q.hint
	if h.Type == 0 {
		return nil
	}
	if s, ok := h.StringValueOK(); ok {
		if q.coll != nil && q.coll.IndexByName(s) != nil {
			return nil
		}
		return plan.ErrBadHint
	}
	d, ok := h.DocumentOK()
	if !ok {
		return mongoerr.New(mongoerr.FailedToParse, "hint must be a string or an object")
	}
	if len(d) <= 5 {
		return nil // an empty hint means no hint
	}
	if v, err := d.LookupErr("$natural"); err == nil {
		n, _ := asInt(v)
		if q.natural == 0 && n < 0 {
			q.natural = -1
		}
		return nil
	}
	if q.coll != nil {
		for _, ix := range q.coll.Indexes {
			if plan.SameKeyPattern(ix.Key(), d) {
				return nil
			}
		}
	}
	return plan.ErrBadHint
}

// sameKey reports whether two key patterns name the same fields with the
// same directions, comparing numbers by value.
func sameKey(a, b bson.Raw) bool { return plan.SameKeyPattern(a, b) }

// planQuery returns the planner's description of q.
func (q *query) planQuery(ctx context.Context) *plan.Query {
	ns := ""
	if q.coll != nil {
		ns = q.coll.NS
	}
	pq := &plan.Query{
		NS: ns, Coll: q.coll, Filter: q.filterRaw, Match: q.filter,
		Sort: q.sort, SortSpec: q.sortSpec, Natural: q.natural,
		Projection: q.projSpec, Skip: q.skip, Limit: q.limit, Hint: q.hint,
		SortOptions: plan.SortOptions{MaxMemory: 100 * 1024 * 1024, AllowDiskUse: true},
	}
	if h := q.hint; h.Type == bson.TypeEmbeddedDocument && len(h.Document()) <= 5 {
		pq.Hint = bson.RawValue{}
	}
	if op := opFrom(ctx); op != nil {
		e := op.env
		pq.SortOptions.MaxMemory = e.params.Int("internalQueryMaxBlockingSortMemoryUsageBytes")
		pq.SortOptions.AllowDiskUse = e.params.Bool("allowDiskUseByDefault")
		pq.SortOptions.TempDir = e.tempDir()
		if op.explain != nil {
			pq.NoCache = true
		}
	}
	if q.allowDiskUse != nil {
		pq.SortOptions.AllowDiskUse = *q.allowDiskUse
	}
	return pq
}

// rows returns the selected rows read through rd. The caller closes the
// iterator; rd must outlive it. Under explain (see cmd_explain.go) the
// plan is recorded and, for executionStats, run to the end, and no row is
// returned.
func (q *query) rows(ctx context.Context, rd storage.Reader) (rowIter, error) {
	pq := q.planQuery(ctx)
	op := opFrom(ctx)
	planner := defaultPlanner
	if op != nil {
		planner = op.env.ext().planner
	}
	x, err := planner.Plan(ctx, rd, pq)
	if err != nil {
		return nil, err
	}
	if op != nil && op.explain != nil {
		return op.explain.record(ctx, x)
	}
	if op != nil && q.coll != nil {
		op.env.ext().noteIndexUse(q.coll, x.IndexesUsed())
		op.notePlan(x)
	}
	return &planRows{x: x}, nil
}

// defaultPlanner serves queries run without a command context (tests).
var defaultPlanner = plan.NewPlanner()

// planRows adapts a plan.Executor to rowIter and reports the keys and
// documents it examines to the operation being profiled.
type planRows struct {
	x *plan.Executor
}

func (p *planRows) next(ctx context.Context) (row, bool, error) {
	rid, doc, ok, err := p.x.Next(ctx)
	if !ok || err != nil {
		p.report(ctx)
		return row{}, false, err
	}
	if op := opFrom(ctx); op != nil && op.profiled {
		p.report(ctx)
	}
	return row{rid: rid, doc: doc}, true, nil
}

// report adds the work done since the last report to the current
// operation (find's first batch, then each getMore).
func (p *planRows) report(ctx context.Context) {
	if op := opFrom(ctx); op != nil {
		k, d := p.x.Delta()
		op.addExamined(k, d, p.x.Stats())
	}
}

func (p *planRows) close() { p.x.Close() }

type sliceRows struct {
	rows []row
	i    int
}

func (s *sliceRows) next(context.Context) (row, bool, error) {
	if s.i >= len(s.rows) {
		return row{}, false, nil
	}
	s.i++
	return s.rows[s.i-1], true, nil
}

func (s *sliceRows) close() {}

// docSource turns rows into result documents, applying a projection, and
// releases the snapshot it reads when closed.
type docSource struct {
	rows rowIter
	proj *projection.Projection
	f    *match.Filter
	snap *storage.Snapshot
}

func (d *docSource) Next(ctx context.Context) (bson.Raw, error) {
	r, ok, err := d.rows.next(ctx)
	if err != nil || !ok {
		return nil, err
	}
	if d.proj == nil {
		return r.doc, nil
	}
	return d.proj.Apply(r.doc, d.f)
}

// Close reports the work of the batch just served and releases the rows.
func (d *docSource) Close() {
	d.rows.close()
	if d.snap != nil {
		d.snap.Close()
	}
}

// tempDir is where blocking sorts spill: a directory under the database
// path for an on-disk engine, the system's temporary directory otherwise.
func (e *Env) tempDir() string {
	if e.Config.DBPath == "" {
		return ""
	}
	dir := filepath.Join(e.Config.DBPath, "_tmp")
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return ""
	}
	return dir
}
