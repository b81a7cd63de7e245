package command

import (
	"context"
	"errors"

	"go.mongodb.org/mongo-driver/v2/bson"

	"github.com/formworkdb/formwork/engine/internal/mongoerr"
	"github.com/formworkdb/formwork/engine/internal/projection"
	"github.com/formworkdb/formwork/engine/internal/storage"
)

func init() {
	register("find", &spec{run: runFind, apiV1: true, help: "query for documents"})
}

// defaultBatchSize is the size of a first batch when the client names none.
const defaultBatchSize = 101

// findParams are the fields of a find command.
type findParams struct {
	ns                         string
	filter, sortSpec, projSpec bson.Raw
	skip, limit                int64
	batchSize                  int64
	singleBatch                bool
	hint                       bson.RawValue
	allowDiskUse               *bool
	let                        bson.Raw // evaluated
	showRecordId, returnKey    bool
	min, max                   bson.Raw
	collation                  collationArg
}

// parseFind parses a find command's fields.
func parseFind(r *Request) (*findParams, error) {
	name, err := collectionName(r)
	if err != nil {
		return nil, err
	}
	p := &findParams{ns: r.DB + "." + name, batchSize: defaultBatchSize}
	err = fields("find", r.Body, func(k string, v bson.RawValue) error {
		var err error
		switch k {
		case "filter":
			p.filter, err = wantDoc("find", k, v)
		case "sort":
			p.sortSpec, err = wantDoc("find", k, v)
		case "projection":
			p.projSpec, err = wantDoc("find", k, v)
		case "skip":
			p.skip, err = wantNonNegative("find", k, v)
		case "limit":
			// Legacy negative limits ("limit and single batch") are
			// rejected by the find command like any negative value.
			p.limit, err = wantNonNegative("find", k, v)
		case "batchSize":
			p.batchSize, err = wantNonNegative("find", k, v)
		case "singleBatch":
			p.singleBatch, err = wantBool("find", k, v)
		case "hint":
			p.hint = v
		case "collation":
			p.collation, err = r.parseCollationArg(v)
		case "allowDiskUse":
			var b bool
			b, err = wantBool("find", k, v)
			p.allowDiskUse = &b
		case "noCursorTimeout", "allowPartialResults":
			// Idle cursors still expire; one node has no partial results.
			_, err = wantBool("find", k, v)
		case "maxScan", "snapshot":
			return mongoerr.UnknownField("find", k)
		case "let":
			p.let, err = r.parseLet("find", v)
		case "showRecordId":
			p.showRecordId, err = wantBool("find", k, v)
		case "returnKey":
			p.returnKey, err = wantBool("find", k, v)
		case "min":
			p.min, err = wantDoc("find", k, v)
		case "max":
			p.max, err = wantDoc("find", k, v)
		case "tailable", "awaitData", "oplogReplay":
			if b, ok := asBool(v); ok && !b {
				return nil // explicitly off
			}
			return mongoerr.Newf(mongoerr.NotImplemented, "find option '%s' is not supported yet", k)
		case "readOnce", "term", "$_requestResumeToken", "$_resumeAfter":
			return nil
		default:
			return errUnknown
		}
		return err
	})
	if err != nil {
		return nil, err
	}
	if p.let, err = r.letWithCollation(p.let, r.collationFor(r.Env.Store.Collection(p.ns), p.collation)); err != nil {
		return nil, err
	}
	return p, nil
}

// query compiles p's filter, sort, hint and projection against the
// collection as it is now.
func (p *findParams) query(r *Request) (*query, *projection.Projection, error) {
	q := &query{coll: r.collection(p.ns), skip: p.skip, limit: p.limit, hint: p.hint, allowDiskUse: p.allowDiskUse, showRecordId: p.showRecordId, returnKey: p.returnKey, min: p.min, max: p.max}
	env := r.matchEnv(p.let)
	env.Collation = r.collationFor(q.coll, p.collation)
	if err := q.setFilter(p.filter, env); err != nil {
		return nil, nil, err
	}
	if err := q.setSort(p.sortSpec); err != nil {
		return nil, nil, err
	}
	if err := q.resolveHint(); err != nil {
		return nil, nil, err
	}
	var proj *projection.Projection
	if len(p.projSpec) > 5 {
		q.projSpec = p.projSpec
		var err error
		if proj, err = projection.CompileEnv(p.projSpec, env); err != nil {
			return nil, nil, err
		}
		if err := proj.Validate(q.filter); err != nil {
			return nil, nil, err
		}
	}
	return q, proj, nil
}

// runFind executes find: parse, plan, then run the first batch.
// https://www.mongodb.com/docs/manual/reference/command/find/
func runFind(ctx context.Context, r *Request) (bson.D, error) {
	p, err := parseFind(r)
	if err != nil {
		return nil, err
	}
	if r.Env.view(p.ns) != nil {
		return r.findOnView(ctx, p)
	}
	q, proj, err := p.query(r)
	if err != nil {
		return nil, err
	}
	batchSize := p.batchSize
	if batchSize == 0 {
		// A zero batch opens the cursor without reading anything.
		reply, err := r.openLazy(ctx, p.ns, q, proj)
		return reply, executorError("find command", err)
	}
	if q.limit > 0 && (batchSize > q.limit) {
		batchSize = q.limit
	}
	src, err := r.findSource(ctx, q, proj)
	if err != nil {
		return nil, executorError("find command", err)
	}
	reply, err := openCursor(ctx, r, p.ns, src, batchSize, p.singleBatch)
	return reply, executorError("find command", err)
}

// executorError prefixes an error raised while running a query (not while
// parsing it) the way mongod does: "Executor error during <op> :: caused
// by :: <message>". Timeouts are mapped to MaxTimeMSExpired first.
func executorError(op string, err error) error {
	if err == nil {
		return nil
	}
	if errors.Is(err, context.DeadlineExceeded) {
		err = mongoerr.New(mongoerr.MaxTimeMSExpired, "operation exceeded time limit")
	}
	me := mongoerr.As(err)
	c := *me
	c.Msg = "Executor error during " + op + " :: caused by :: " + me.Msg
	return &c
}

func (r *Request) findSource(ctx context.Context, q *query, proj *projection.Projection) (source, error) {
	snap := r.snapshot(q)
	rows, err := q.rows(ctx, snap, r.queryEnv())
	if err != nil {
		snap.Close()
		return nil, err
	}
	return &docSource{rows: rows, proj: proj, f: q.filter, snap: snap, recordID: q.showRecordId, returnKey: q.returnKey}, nil
}

func (r *Request) openLazy(ctx context.Context, ns string, q *query, proj *projection.Projection) (bson.D, error) {
	src, err := r.findSource(ctx, q, proj)
	if err != nil {
		return nil, err
	}
	c := r.Env.Cursors.add(ns, r.Generic.LSID, src, nil)
	bindReadSet(r.Env.Store, c, ns, src)
	c.origin = r.Body
	c.planSummary = r.op.summary()
	return cursorReply(c.ID, ns, "firstBatch", nil), nil
}

// snapshot takes a storage snapshot and then refreshes q's collection
// definition from the catalog, in that order (storage I6), so that the
// planner sees every multikey path of the data it reads.
func (r *Request) snapshot(q *query) *storage.Snapshot {
	snap := r.storeSnapshot()
	if q.coll != nil {
		if c := r.collection(q.coll.NS); c != nil && c.ID == q.coll.ID {
			q.coll = c
		}
	}
	return snap
}
