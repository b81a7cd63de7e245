package command

import (
	"context"
	"os"
	"path/filepath"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/x/bsonx/bsoncore"

	"github.com/formworkdb/formwork/engine/internal/collation"
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
	// hint is the hint as sent; resolveHint turns it into hintIndex or
	// natural and clears it.
	hint      bson.RawValue
	hintIndex string
	// projSpec is find's projection, which lets the planner cover the
	// query from an index; the caller still applies the projection.
	projSpec bson.Raw
	// allowDiskUse is the command's allowDiskUse, nil when not given
	// (allowDiskUseByDefault applies).
	allowDiskUse *bool
	// showRecordId and returnKey are find's options of those names, min
	// and max its index key bounds.
	showRecordId, returnKey bool
	min, max                bson.Raw
	// distinct is a distinct command's key and count marks a count
	// command: the planner may then scan the index alone
	// (DISTINCT_SCAN, COUNT_SCAN).
	distinct string
	count    bool
	// collation is the collation the filter was compiled with; the sort
	// and the planner use it too (nil: simple).
	collation *collation.Collator
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

// setFilter compiles filter (nil or empty for all documents); its $expr
// reads env's let variables, $$NOW and $$CLUSTER_TIME.
func (q *query) setFilter(filter bson.Raw, env match.Env) error {
	if filter == nil {
		filter = bson.Raw{5, 0, 0, 0, 0}
	}
	f, err := match.CompileEnv(filter, env)
	if err != nil {
		return err
	}
	q.filterRaw, q.filter, q.collation = filter, f, env.Collation
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
		q.sort, q.sortSpec = o.WithCollation(q.collation), spec
	}
	return nil
}

// resolveHint validates q.hint against the collection's indexes and
// normalises it, once: a name or a key pattern of an existing index
// becomes hintIndex, {$natural: ±1} becomes a natural scan direction, and
// an empty document means no hint. The planner checks hidden and partial
// indexes when it plans.
func (q *query) resolveHint() error {
	h := q.hint
	q.hint = bson.RawValue{}
	if h.Type == 0 {
		return nil
	}
	if s, ok := h.StringValueOK(); ok {
		if q.coll != nil && q.coll.IndexByName(s) != nil {
			q.hintIndex = s
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
		if q.natural == 0 {
			q.natural = 1
			if f, ok := asFloat(v); ok && f < 0 {
				q.natural = -1
			}
		}
		return nil
	}
	if q.coll != nil {
		for _, ix := range q.coll.Indexes {
			if plan.SameKeyPattern(ix.Key(), d) {
				q.hintIndex = ix.Name
				return nil
			}
		}
	}
	return plan.ErrBadHint
}

// sameKey reports whether two key patterns name the same fields with the
// same directions, comparing numbers by value.
func sameKey(a, b bson.Raw) bool { return plan.SameKeyPattern(a, b) }

// queryEnv is what planning and running a query need besides the query:
// the planner with its plan cache, the server parameters, and the
// operation the work is reported to. It is passed explicitly.
type queryEnv struct {
	planner *plan.Planner
	params  *parameters
	tempDir string
	// op receives the examined counts and plan facts; nil under explain.
	op *opState
	// explain plans afresh, without the plan cache, and counts no index
	// use.
	explain bool
}

// queryEnv returns the environment of r's queries.
func (r *Request) queryEnv() *queryEnv {
	return &queryEnv{planner: r.Env.ext().planner, params: r.Env.params, tempDir: r.Env.tempDir(), op: r.op}
}

// explainEnv returns the environment of an explained query.
func (e *Env) explainEnv() *queryEnv {
	return &queryEnv{planner: e.ext().planner, params: e.params, tempDir: e.tempDir(), explain: true}
}

// planQuery returns the planner's description of q.
func (q *query) planQuery(qe *queryEnv) *plan.Query {
	ns := ""
	if q.coll != nil {
		ns = q.coll.NS
	}
	pq := &plan.Query{
		NS: ns, Coll: q.coll, Filter: q.filterRaw, Match: q.filter,
		Sort: q.sort, SortSpec: q.sortSpec, Natural: q.natural,
		Projection: q.projSpec, Skip: q.skip, Limit: q.limit, HintIndex: q.hintIndex,
		SortOptions: plan.SortOptions{
			MaxMemory:    qe.params.Int("internalQueryMaxBlockingSortMemoryUsageBytes"),
			AllowDiskUse: qe.params.Bool("allowDiskUseByDefault"),
			TempDir:      qe.tempDir,
		},
		NoCache:  qe.explain,
		Distinct: q.distinct, Count: q.count, Min: q.min, Max: q.max,
		Collation: q.collation,
	}
	if q.count {
		// The COUNT stage above the plan skips and limits (countWindow),
		// as mongod's CountStage does: the plan itself has neither.
		pq.Skip, pq.Limit = 0, 0
	}
	if q.allowDiskUse != nil {
		pq.SortOptions.AllowDiskUse = *q.allowDiskUse
	}
	return pq
}

// plan chooses how to run q over rd and returns the executor, which the
// caller closes; rd must outlive it.
func (q *query) plan(ctx context.Context, rd storage.Reader, qe *queryEnv) (*plan.Executor, error) {
	return qe.planner.Plan(ctx, rd, q.planQuery(qe))
}

// rows plans q and returns its rows read through rd, counting the index
// use and reporting the work to qe's operation. The caller closes the
// iterator; rd must outlive it.
func (q *query) rows(ctx context.Context, rd storage.Reader, qe *queryEnv) (rowIter, error) {
	x, err := q.plan(ctx, rd, qe)
	if err != nil {
		return nil, err
	}
	if qe.op != nil && q.coll != nil {
		qe.op.env.ext().noteIndexUse(q.coll, x.IndexesUsed())
		qe.op.notePlan(x)
	}
	return &planRows{x: x, op: qe.op}, nil
}

// reporter is a source whose work is reported to the operation reading
// it: a getMore attaches itself before reading the next batch.
type reporter interface {
	attach(op *opState)
}

// planRows adapts a plan.Executor to rowIter and reports the keys and
// documents it examines to the operation reading it.
type planRows struct {
	x  *plan.Executor
	op *opState // nil: nothing reports
}

func (p *planRows) next(ctx context.Context) (row, bool, error) {
	rid, doc, ok, err := p.x.Next(ctx)
	if !ok || err != nil {
		p.report()
		return row{}, false, err
	}
	if p.op != nil && p.op.profiled {
		p.report()
	}
	return row{rid: rid, doc: doc}, true, nil
}

// report adds the work done since the last report to the current
// operation (find's first batch, then each getMore).
func (p *planRows) report() {
	if p.op != nil {
		k, d := p.x.Delta()
		p.op.addExamined(k, d, p.x.Stats())
	}
}

func (p *planRows) attach(op *opState) { p.op = op }

func (p *planRows) close() { p.x.Close() }

// docSource turns rows into result documents, applying a projection, and
// releases the snapshot it reads when closed.
type docSource struct {
	rows rowIter
	proj *projection.Projection
	f    *match.Filter
	snap *storage.Snapshot
	// closed makes Close idempotent and Next after Close the end.
	closed bool
	// recordID appends each row's record id as $recordId (find's
	// showRecordId); returnKey replaces each document by the index key
	// it was read from.
	recordID, returnKey bool
}

func (d *docSource) Next(ctx context.Context) (bson.Raw, error) {
	if d.closed {
		return nil, nil
	}
	r, ok, err := d.rows.next(ctx)
	if err != nil || !ok {
		return nil, err
	}
	doc := r.doc
	if pr, ok := d.rows.(*planRows); ok && d.returnKey {
		// mongod ignores the projection under returnKey.
		doc = pr.x.ReturnKey()
	} else if d.proj != nil {
		if doc, err = d.proj.Apply(r.doc, d.f); err != nil {
			return nil, err
		}
	}
	if d.recordID {
		doc = appendRecordID(doc, r.rid)
	}
	return doc, nil
}

// appendRecordID returns doc with {$recordId: NumberLong(rid)} appended,
// as mongod's showRecordId adds it after the other fields.
func appendRecordID(doc bson.Raw, rid int64) bson.Raw {
	out := make([]byte, 0, len(doc)+20)
	out = append(out, doc[:len(doc)-1]...)
	out = bsoncore.AppendInt64Element(out, "$recordId", rid)
	out = append(out, 0)
	putLen(out)
	return out
}

// Close reports the work of the batch just served and releases the rows.
// attach reports the rows' work to op (see reporter).
func (d *docSource) attach(op *opState) {
	if rp, ok := d.rows.(reporter); ok {
		rp.attach(op)
	}
}

func (d *docSource) Close() {
	if d.closed {
		return
	}
	d.closed = true
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
