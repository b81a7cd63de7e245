package command

import (
	"context"
	"strconv"
	"strings"
	"time"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/x/bsonx/bsoncore"

	"github.com/formworkdb/formwork/engine/internal/mongoerr"
	"github.com/formworkdb/formwork/engine/internal/plan"
	"github.com/formworkdb/formwork/engine/internal/update"
)

func init() {
	register("explain", &spec{run: runExplain, help: "describe how a command would run"})
}

// explainCapture records the plan of the query an explained command runs.
type explainCapture struct {
	verbosity plan.Verbosity
	x         *plan.Executor
	n         int64
	took      time.Duration
}

// record keeps the first plan the command builds and, for executionStats
// and allPlansExecution, runs it to the end. The command sees no rows.
func (c *explainCapture) record(ctx context.Context, x *plan.Executor) (rowIter, error) {
	if c.x != nil {
		x.Close()
		return &sliceRows{}, nil
	}
	c.x = x
	if c.verbosity >= plan.ExecutionStats {
		n, took, err := x.RunAll(ctx)
		if err != nil {
			return nil, err
		}
		c.n, c.took = n, took
	}
	return &sliceRows{}, nil
}

// runExplain explains find, count, distinct, aggregate (pipelines whose
// leading $match/$sort/$skip/$limit the query runs), update, delete and
// findAndModify in MongoDB 7.0's classic-engine shape. Nothing is
// written: update and delete report what they would match and modify.
// https://www.mongodb.com/docs/manual/reference/command/explain/
func runExplain(ctx context.Context, r *Request) (bson.D, error) {
	inner, ok := r.Body.Index(0).Value().DocumentOK()
	if !ok {
		return nil, mongoerr.New(mongoerr.Code(40414), "BSON field 'explain.explain' is missing but a required field")
	}
	verb := plan.AllPlansExecution
	err := fields("explain", r.Body, func(k string, v bson.RawValue) error {
		switch k {
		case "verbosity":
			s, ok := v.StringValueOK()
			if !ok {
				return mongoerr.FieldType("explain", k, typeName(v.Type), "string")
			}
			vb, ok := plan.ParseVerbosity(s)
			if !ok {
				return mongoerr.Newf(mongoerr.BadValue, "Enumeration value '%s' for field 'explain.verbosity' is not a valid value.", s)
			}
			verb = vb
			return nil
		}
		return errUnknown
	})
	if err != nil {
		return nil, err
	}
	first, err := inner.IndexErr(0)
	if err != nil {
		return nil, mongoerr.New(mongoerr.FailedToParse, "Explain failed due to unknown command: ")
	}
	name := first.Key()
	if a, ok := aliases[name]; ok {
		name = a
	}
	body := withDB(inner, r.DB)
	sub := &Request{Env: r.Env, Conn: r.Conn, DB: r.DB, Name: name, Body: body, Generic: r.Generic}
	var (
		qp, es bson.D
	)
	switch name {
	case "find", "count", "distinct", "aggregate":
		qp, es, err = explainRead(ctx, sub, verb)
	case "update", "delete", "findAndModify":
		qp, es, err = explainWrite(ctx, sub, verb)
	default:
		if _, known := table[name]; known {
			return nil, mongoerr.Newf(mongoerr.IllegalOperation, "Explain failed due to unknown command: %s", name)
		}
		return nil, mongoerr.Newf(mongoerr.CommandNotFound, "Explain failed due to unknown command: %s", name)
	}
	if err != nil {
		return nil, err
	}
	host, port := r.Env.Config.Host, 27017
	if i := strings.LastIndexByte(host, ':'); i > 0 {
		if p, err := strconv.Atoi(host[i+1:]); err == nil {
			port = p
		}
		host = host[:i]
	}
	out := bson.D{{Key: "explainVersion", Value: "1"}, {Key: "queryPlanner", Value: qp}}
	if verb >= plan.ExecutionStats {
		out = append(out, bson.E{Key: "executionStats", Value: es})
	}
	sortMem := r.Env.params.Int("internalQueryMaxBlockingSortMemoryUsageBytes")
	out = append(out,
		bson.E{Key: "command", Value: body},
		bson.E{Key: "serverInfo", Value: bson.D{
			{Key: "host", Value: host}, {Key: "port", Value: int32(port)},
			{Key: "version", Value: Version}, {Key: "gitVersion", Value: "formwork"},
		}},
		bson.E{Key: "serverParameters", Value: bson.D{
			{Key: "internalQueryFacetBufferSizeBytes", Value: int32(104857600)},
			{Key: "internalQueryFacetMaxOutputDocSizeBytes", Value: int32(104857600)},
			{Key: "internalLookupStageIntermediateDocumentMaxSizeBytes", Value: int32(104857600)},
			{Key: "internalDocumentSourceGroupMaxMemoryBytes", Value: int32(104857600)},
			{Key: "internalQueryMaxBlockingSortMemoryUsageBytes", Value: int32(sortMem)},
			{Key: "internalQueryProhibitBlockingMergeOnMongoS", Value: int32(0)},
			{Key: "internalQueryMaxAddToSetBytes", Value: int32(104857600)},
			{Key: "internalDocumentSourceSetWindowFieldsMaxMemoryBytes", Value: int32(104857600)},
		}},
	)
	return out, nil
}

// withDB returns the explained command with $db, as explain's "command"
// field shows it.
func withDB(inner bson.Raw, db string) bson.Raw {
	if _, err := inner.LookupErr("$db"); err == nil {
		return inner
	}
	idx, d := bsoncore.AppendDocumentStart(nil)
	elems, _ := inner.Elements()
	for _, e := range elems {
		d = append(d, e...)
	}
	d = bsoncore.AppendStringElement(d, "$db", db)
	d, _ = bsoncore.AppendDocumentEnd(d, idx)
	return d
}

// explainRead runs a read command's handler with explain capturing its
// query, and renders the sections.
func explainRead(ctx context.Context, r *Request, verb plan.Verbosity) (qp, es bson.D, err error) {
	capture := &explainCapture{verbosity: verb}
	op := &opState{env: r.Env, explain: capture}
	ctx = withOp(ctx, op)
	reply, err := table[r.Name].run(ctx, r)
	if err != nil {
		return nil, nil, err
	}
	if c, ok := findCursor(reply); ok {
		r.Env.Cursors.remove(c)
	}
	x := capture.x
	if x == nil {
		return nil, nil, mongoerr.New(mongoerr.InternalError, "explain: the command planned no query")
	}
	defer x.Close()
	var wrap *plan.Wrap
	if r.Name == "count" {
		wrap = &plan.Wrap{Stage: "COUNT", Stats: bson.D{{Key: "nCounted", Value: int32(capture.n)}, {Key: "nSkipped", Value: int32(0)}}}
	}
	qp = x.QueryPlannerDoc(wrap)
	if verb >= plan.ExecutionStats {
		n := capture.n
		if wrap != nil {
			n = 0
		}
		es = x.ExecutionStatsDoc(wrap, n, capture.took, verb)
	}
	return qp, es, nil
}

func findCursor(reply bson.D) (int64, bool) {
	for _, f := range reply {
		if f.Key != "cursor" {
			continue
		}
		if c, ok := f.Value.(bson.D); ok {
			for _, cf := range c {
				if cf.Key == "id" {
					id, ok := cf.Value.(int64)
					return id, ok && id != 0
				}
			}
		}
	}
	return 0, false
}

// writeExplain is the first statement of an explained write.
type writeExplain struct {
	coll               string
	q, sort            bson.Raw
	u                  bson.RawValue
	arrayFilters       []bson.Raw
	multi, upsert, del bool
	hint               bson.RawValue
}

// explainWrite plans the first statement of an update, delete or
// findAndModify on a snapshot, counts what it would match and modify, and
// renders the plan under an UPDATE or DELETE stage.
func explainWrite(ctx context.Context, r *Request, verb plan.Verbosity) (qp, es bson.D, err error) {
	we, err := parseWriteExplain(r)
	if err != nil {
		return nil, nil, err
	}
	ns := r.DB + "." + we.coll
	q := &query{coll: r.Env.Store.Collection(ns), hint: we.hint}
	if err := q.setFilter(we.q); err != nil {
		return nil, nil, err
	}
	if err := q.setSort(we.sort); err != nil {
		return nil, nil, err
	}
	if err := q.checkHint(); err != nil {
		return nil, nil, err
	}
	if !we.multi {
		q.limit = 1
	}
	var upd *update.Update
	if !we.del {
		if upd, err = update.Compile(we.u, we.arrayFilters); err != nil {
			return nil, nil, err
		}
	}
	op := &opState{env: r.Env, explain: &explainCapture{}}
	snap := r.snapshot(q)
	defer snap.Close()
	pq := q.planQuery(withOp(ctx, op))
	x, err := r.Env.ext().planner.Plan(ctx, snap, pq)
	if err != nil {
		return nil, nil, err
	}
	defer x.Close()
	wrap := &plan.Wrap{Stage: "UPDATE"}
	if we.del {
		wrap.Stage = "DELETE"
	}
	qp = x.QueryPlannerDoc(wrap)
	if verb < plan.ExecutionStats {
		return qp, nil, nil
	}
	start := time.Now()
	var matched, modified int64
	now := time.Now()
	for {
		_, doc, ok, err := x.Next(ctx)
		if err != nil {
			return nil, nil, err
		}
		if !ok {
			break
		}
		matched++
		if upd != nil {
			_, pos := q.filter.MatchPos(doc)
			if _, changed, err := upd.Apply(doc, pos, now); err != nil {
				return nil, nil, err
			} else if changed {
				modified++
			}
		}
	}
	if we.del {
		wrap.Stats = bson.D{{Key: "nWouldDelete", Value: int32(matched)}}
	} else {
		upsert := int32(0)
		if matched == 0 && we.upsert {
			upsert = 1
		}
		wrap.Stats = bson.D{{Key: "nMatched", Value: int32(matched)}, {Key: "nWouldModify", Value: int32(modified)}, {Key: "nWouldUpsert", Value: upsert}}
	}
	es = x.ExecutionStatsDoc(wrap, 0, time.Since(start), verb)
	return qp, es, nil
}

func parseWriteExplain(r *Request) (*writeExplain, error) {
	name, err := collectionName(r)
	if err != nil {
		return nil, err
	}
	we := &writeExplain{coll: name}
	stmt := func(d bson.Raw, del bool) error {
		we.del = del
		elems, err := d.Elements()
		if err != nil {
			return mongoerr.Newf(mongoerr.InvalidBSON, "invalid statement: %v", err)
		}
		for _, e := range elems {
			k, v := e.Key(), e.Value()
			var err error
			switch k {
			case "q":
				we.q, err = wantDoc(r.Name, k, v)
			case "u":
				we.u = v
			case "multi":
				we.multi, err = wantBool(r.Name, k, v)
			case "upsert":
				we.upsert, err = wantBool(r.Name, k, v)
			case "limit":
				n, _ := asInt(v)
				we.multi = n == 0
			case "hint":
				we.hint = v
			case "arrayFilters":
				we.arrayFilters, err = docArray(r.Name, k, v)
			}
			if err != nil {
				return err
			}
		}
		return nil
	}
	switch r.Name {
	case "update", "delete":
		key := "updates"
		if r.Name == "delete" {
			key = "deletes"
		}
		v, err := r.Body.LookupErr(key)
		if err != nil {
			return nil, mongoerr.Newf(mongoerr.Code(40414), "BSON field '%s.%s' is missing but a required field", r.Name, key)
		}
		stmts, err := docArray(r.Name, key, v)
		if err != nil {
			return nil, err
		}
		if len(stmts) == 0 {
			return nil, mongoerr.New(mongoerr.InvalidLength, "Write batch sizes must be between 1 and 100000. Got 0 operations.")
		}
		if err := stmt(stmts[0], r.Name == "delete"); err != nil {
			return nil, err
		}
	case "findAndModify":
		remove := false
		if v, err := r.Body.LookupErr("remove"); err == nil {
			remove, _ = asBool(v)
		}
		we.del = remove
		for _, k := range []string{"query", "update", "sort", "upsert", "hint", "arrayFilters"} {
			v, err := r.Body.LookupErr(k)
			if err != nil {
				continue
			}
			switch k {
			case "query":
				we.q, _ = v.DocumentOK()
			case "update":
				we.u = v
			case "sort":
				we.sort, _ = v.DocumentOK()
			case "upsert":
				we.upsert, _ = asBool(v)
			case "hint":
				we.hint = v
			case "arrayFilters":
				if arr, err := docArray(r.Name, k, v); err == nil {
					we.arrayFilters = arr
				}
			}
		}
	}
	return we, nil
}
