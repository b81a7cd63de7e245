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

// runFind executes find.
// https://www.mongodb.com/docs/manual/reference/command/find/
func runFind(ctx context.Context, r *Request) (bson.D, error) {
	name, err := collectionName(r)
	if err != nil {
		return nil, err
	}
	ns := r.DB + "." + name
	q := &query{coll: r.Env.Store.Collection(ns)}
	var (
		filter, sortSpec, projSpec bson.Raw
		batchSize                  int64 = defaultBatchSize
		singleBatch                bool
	)
	err = fields("find", r.Body, func(k string, v bson.RawValue) error {
		var err error
		switch k {
		case "filter":
			filter, err = wantDoc("find", k, v)
		case "sort":
			sortSpec, err = wantDoc("find", k, v)
		case "projection":
			projSpec, err = wantDoc("find", k, v)
		case "skip":
			q.skip, err = wantNonNegative("find", k, v)
		case "limit":
			// Legacy negative limits ("limit and single batch") are
			// rejected by the find command like any negative value.
			q.limit, err = wantNonNegative("find", k, v)
		case "batchSize":
			batchSize, err = wantNonNegative("find", k, v)
		case "singleBatch":
			singleBatch, err = wantBool("find", k, v)
		case "hint":
			q.hint = v
		case "collation":
			err = checkCollation(v)
		case "allowDiskUse":
			var b bool
			b, err = wantBool("find", k, v)
			q.allowDiskUse = &b
		case "noCursorTimeout", "allowPartialResults":
			// Idle cursors still expire; one node has no partial results.
			_, err = wantBool("find", k, v)
		case "maxScan", "snapshot":
			return mongoerr.UnknownField("find", k)
		case "let", "max", "min", "returnKey", "showRecordId", "tailable", "awaitData", "oplogReplay":
			if b, ok := asBool(v); ok && !b && k != "let" && k != "max" && k != "min" {
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
	if err := q.setFilter(filter); err != nil {
		return nil, err
	}
	if err := q.setSort(sortSpec); err != nil {
		return nil, err
	}
	if err := q.checkHint(); err != nil {
		return nil, err
	}
	var proj *projection.Projection
	if projSpec != nil && len(projSpec) > 5 {
		q.projSpec = projSpec
		if proj, err = projection.Compile(projSpec); err != nil {
			return nil, err
		}
		if err := proj.Validate(q.filter); err != nil {
			return nil, err
		}
	}
	if batchSize == 0 {
		// A zero batch opens the cursor without reading anything.
		reply, err := r.openLazy(ctx, ns, q, proj)
		return reply, executorError("find command", err)
	}
	if q.limit > 0 && (batchSize > q.limit) {
		batchSize = q.limit
	}
	src, err := r.findSource(ctx, q, proj)
	if err != nil {
		return nil, executorError("find command", err)
	}
	reply, err := openCursor(ctx, r, ns, src, batchSize, singleBatch)
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
	rows, err := q.rows(ctx, snap)
	if err != nil {
		snap.Close()
		return nil, err
	}
	return &docSource{rows: rows, proj: proj, f: q.filter, snap: snap}, nil
}

func (r *Request) openLazy(ctx context.Context, ns string, q *query, proj *projection.Projection) (bson.D, error) {
	src, err := r.findSource(ctx, q, proj)
	if err != nil {
		return nil, err
	}
	c := r.Env.Cursors.add(ns, r.Generic.LSID, src, nil)
	return cursorReply(c.ID, ns, "firstBatch", nil), nil
}

// snapshot takes a storage snapshot and then refreshes q's collection
// definition from the catalog, in that order (storage I6), so that the
// planner sees every multikey path of the data it reads.
func (r *Request) snapshot(q *query) *storage.Snapshot {
	snap := r.Env.Store.Snapshot()
	if q.coll != nil {
		if c := r.Env.Store.Collection(q.coll.NS); c != nil && c.ID == q.coll.ID {
			q.coll = c
		}
	}
	return snap
}
