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
)

func init() {
	register("explain", &spec{run: runExplain, apiV1: true, help: "describe how a command would run"})
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
	var sections bson.D
	switch name {
	case "find", "count", "distinct":
		var (
			vp     *aggregateParams
			isView bool
		)
		if vp, isView, err = explainOnView(sub); err == nil && isView {
			// mongod explains a read of a view as the aggregate it runs.
			sections, err = aggregateSections(ctx, sub, vp, verb)
			break
		}
		if err != nil {
			break
		}
		var qp, es bson.D
		qp, es, err = explainRead(ctx, sub, verb)
		sections = querySections(qp, es, verb)
	case "aggregate":
		var p *aggregateParams
		if p, err = parseAggregate(sub); err == nil {
			sections, err = aggregateSections(ctx, sub, p, verb)
		}
	case "update", "delete", "findAndModify":
		var qp, es bson.D
		qp, es, err = explainWrite(ctx, sub, verb)
		sections = querySections(qp, es, verb)
	default:
		if _, known := table[name]; known {
			return nil, mongoerr.Newf(mongoerr.IllegalOperation, "Explain failed due to unknown command: %s", name)
		}
		return nil, mongoerr.Newf(mongoerr.CommandNotFound, "Explain failed due to unknown command: %s", name)
	}
	if err != nil {
		return nil, err
	}
	return explainReply(r, sections, body), nil
}

// querySections returns the explain sections of a query: queryPlanner and,
// from executionStats verbosity on, executionStats.
func querySections(qp, es bson.D, verb plan.Verbosity) bson.D {
	out := bson.D{{Key: "explainVersion", Value: "1"}, {Key: "queryPlanner", Value: qp}}
	if verb >= plan.ExecutionStats {
		out = append(out, bson.E{Key: "executionStats", Value: es})
	}
	return out
}

// explainReply completes explain's sections with the explained command,
// serverInfo and serverParameters, as mongod 7.0 replies.
func explainReply(r *Request, sections bson.D, body bson.Raw) bson.D {
	host, port := r.Env.Config.Host, 27017
	if i := strings.LastIndexByte(host, ':'); i > 0 {
		if p, err := strconv.Atoi(host[i+1:]); err == nil {
			port = p
		}
		host = host[:i]
	}
	out := sections
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
			{Key: "internalDocumentSourceGroupMaxMemoryBytes", Value: int32(r.Env.params.Int("internalDocumentSourceGroupMaxMemoryBytes"))},
			{Key: "internalQueryMaxBlockingSortMemoryUsageBytes", Value: int32(sortMem)},
			{Key: "internalQueryProhibitBlockingMergeOnMongoS", Value: int32(0)},
			{Key: "internalQueryMaxAddToSetBytes", Value: int32(104857600)},
			{Key: "internalDocumentSourceSetWindowFieldsMaxMemoryBytes", Value: int32(r.Env.params.Int("internalDocumentSourceSetWindowFieldsMaxMemoryBytes"))},
		}},
	)
	return out
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

// explainRead parses and plans a find, count or distinct, runs the plan
// to the end for executionStats and allPlansExecution, and renders the
// sections. Nothing is returned to the client but the explain.
func explainRead(ctx context.Context, r *Request, verb plan.Verbosity) (qp, es bson.D, err error) {
	q, err := readQuery(r)
	if err != nil {
		return nil, nil, err
	}
	qp, es, err = explainQuery(ctx, r, q, verb)
	if r.Name == "find" {
		err = executorError("find command", err)
	}
	return qp, es, err
}

// readQuery parses an explained read command and returns the query it
// runs.
func readQuery(r *Request) (*query, error) {
	switch r.Name {
	case "find":
		p, err := parseFind(r)
		if err != nil {
			return nil, err
		}
		q, _, err := p.query(r)
		return q, err
	case "count":
		p, err := parseCount(r)
		if err != nil {
			return nil, err
		}
		return p.query(r)
	case "distinct":
		p, err := parseDistinct(r)
		if err != nil {
			return nil, err
		}
		return p.query(r)
	}
	return nil, mongoerr.Newf(mongoerr.InternalError, "explain: %s is not a query", r.Name)
}

// explainQuery plans q afresh on a snapshot and renders the sections.
func explainQuery(ctx context.Context, r *Request, q *query, verb plan.Verbosity) (qp, es bson.D, err error) {
	snap := r.snapshot(q)
	defer snap.Close()
	x, err := q.plan(ctx, snap, r.Env.explainEnv())
	if err != nil {
		return nil, nil, err
	}
	defer x.Close()
	var (
		n    int64
		took time.Duration
	)
	if verb >= plan.ExecutionStats {
		var upTo int64
		if r.Name == "count" && q.limit > 0 {
			// mongod's COUNT stage stops once it has counted limit.
			upTo = q.skip + q.limit
		}
		if n, took, err = x.RunUpTo(ctx, upTo); err != nil {
			return nil, nil, err
		}
	}
	var wrap *plan.Wrap
	if r.Name == "count" {
		counted, skipped := countWindow(n, q.skip, q.limit)
		wrap = &plan.Wrap{Stage: "COUNT", Stats: bson.D{{Key: "nCounted", Value: int32(counted)}, {Key: "nSkipped", Value: int32(skipped)}}}
	}
	qp = x.QueryPlannerDoc(wrap)
	if verb >= plan.ExecutionStats {
		if wrap != nil {
			n = 0
		}
		es = x.ExecutionStatsDoc(wrap, n, took, verb)
	}
	return qp, es, nil
}

// writeExplain is the first statement of an explained write, planned.
type writeExplain struct {
	q           *query
	u           updater // nil for a delete
	upsert, del bool
}

// explainWrite plans the first statement of an update, delete or
// findAndModify on a snapshot, counts what it would match and modify, and
// renders the plan under an UPDATE or DELETE stage.
func explainWrite(ctx context.Context, r *Request, verb plan.Verbosity) (qp, es bson.D, err error) {
	we, err := parseWriteExplain(r)
	if err != nil {
		return nil, nil, err
	}
	q, upd := we.q, we.u
	snap := r.snapshot(q)
	defer snap.Close()
	x, err := q.plan(ctx, snap, r.Env.explainEnv())
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
			if _, changed, err := upd.apply(ctx, doc, pos, now); err != nil {
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

// parseWriteExplain parses an explained update, delete or findAndModify
// with the commands' own parsers and returns its first statement, its
// query compiled against the collection as it is now.
func parseWriteExplain(r *Request) (*writeExplain, error) {
	switch r.Name {
	case "update", "delete":
		key := "updates"
		if r.Name == "delete" {
			key = "deletes"
		}
		b, err := parseWriteBatch(r, key)
		if err != nil {
			return nil, err
		}
		coll := r.Env.Store.Collection(r.DB + "." + b.coll)
		if r.Name == "delete" {
			st, err := parseDeleteStmt(b.items[0])
			if err != nil {
				return nil, err
			}
			q, err := st.query(r, coll, r.matchEnv(b.let))
			return &writeExplain{q: q, del: true}, err
		}
		st, err := parseUpdateStmt(b.items[0])
		if err != nil {
			return nil, err
		}
		q, err := st.query(r, coll, r.matchEnv(b.let))
		if err != nil {
			return nil, err
		}
		u, err := compileUpdate(st.u, st.arrayFilters, b.let, r.start, r.Env.clock.current())
		return &writeExplain{q: q, u: u, upsert: st.upsert}, err
	}
	p, err := parseFindAndModify(r)
	if err != nil {
		return nil, err
	}
	q, err := p.query(r, r.Env.Store.Collection(p.ns), r.matchEnv(p.let))
	return &writeExplain{q: q, u: p.u, upsert: p.upsert, del: p.remove}, err
}
