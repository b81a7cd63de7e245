package command

import (
	"context"

	"go.mongodb.org/mongo-driver/v2/bson"

	"github.com/formworkdb/formwork/engine/internal/match"
	"github.com/formworkdb/formwork/engine/internal/mongoerr"
	"github.com/formworkdb/formwork/engine/internal/storage"
)

func init() {
	register("delete", &spec{run: runDelete, write: true, apiV1: true, help: "delete documents"})
}

// runDelete removes documents matching each statement's filter.
// https://www.mongodb.com/docs/manual/reference/command/delete/
func runDelete(ctx context.Context, r *Request) (bson.D, error) {
	b, err := parseWriteBatch(r, "deletes")
	if err != nil {
		return nil, err
	}
	stmts, ordered, name := b.items, b.ordered, b.coll
	parsed := make([]deleteStmt, len(stmts))
	for i, raw := range stmts {
		if parsed[i], err = parseDeleteStmt(raw); err != nil {
			return nil, err
		}
	}
	ns := r.DB + "." + name
	res := &writeResult{}
	err = r.write(ctx, func(w *storage.Writer) error {
		*res = writeResult{} // an attempt that waited runs again
		r.op.restartStmts()
		ts := r.Env.tsColl(ns)
		for i, st := range parsed {
			var (
				n   int64
				err error
			)
			mark := r.op.beginStmt()
			if ts != nil {
				n, err = r.deleteTimeseries(ctx, w, ts, st, b.let)
			} else {
				n, err = r.deleteOne(ctx, w, ns, st, b.let)
			}
			r.op.endStmt(mark, deleteStmtCommand(st), bson.D{{Key: "ndeleted", Value: n}}, err)
			res.n += n
			if err != nil {
				res.errs = append(res.errs, mongoerr.WriteError{Index: i, Err: writeErr(err)})
				if ordered {
					return nil
				}
			}
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	return res.reply(r, false), nil
}

// deleteStmt is one entry of a delete command's deletes array.
type deleteStmt struct {
	filter    bson.Raw
	limit     int64
	hint      bson.RawValue
	collation bson.RawValue
}

// parseDeleteStmt parses one entry of a delete command's deletes array.
func parseDeleteStmt(raw bson.Raw) (deleteStmt, error) {
	var (
		st            deleteStmt
		haveQ, haveLm bool
	)
	elems, err := raw.Elements()
	if err != nil {
		return st, mongoerr.Newf(mongoerr.InvalidBSON, "%v", err)
	}
	for _, e := range elems {
		v := e.Value()
		switch k := e.Key(); k {
		case "q":
			if st.filter, err = wantDoc("delete.deletes", k, v); err != nil {
				return st, err
			}
			haveQ = true
		case "limit":
			n, ok := asInt(v)
			if !ok || (n != 0 && n != 1) {
				f, _ := asFloat(v)
				return st, mongoerr.Newf(mongoerr.FailedToParse, "The limit field in delete objects must be 0 or 1. Got %v", f)
			}
			st.limit, haveLm = n, true
		case "hint":
			st.hint = v
		case "collation":
			st.collation = v
			if err := checkCollation(v); err != nil {
				return st, err
			}
		default:
			return st, mongoerr.UnknownField("delete.deletes", k)
		}
	}
	if !haveQ {
		return st, mongoerr.New(mongoerr.Code(40414), "BSON field 'delete.deletes.q' is missing but a required field")
	}
	if !haveLm {
		return st, mongoerr.New(mongoerr.Code(40414), "BSON field 'delete.deletes.limit' is missing but a required field")
	}
	return st, nil
}

// query compiles st's filter and hint against coll (nil: the collection
// does not exist); the filter's $expr reads env.
func (st deleteStmt) query(r *Request, coll *storage.Collection, env match.Env) (*query, error) {
	if err := r.stmtCollation(coll, st.collation, &env); err != nil {
		return nil, err
	}
	q := &query{coll: coll, limit: st.limit, hint: st.hint}
	if err := q.setFilter(st.filter, env); err != nil {
		return nil, err
	}
	return q, q.resolveHint()
}

// deleteOne runs one delete statement inside w and returns how many
// documents it deleted.
func (r *Request) deleteOne(ctx context.Context, w *storage.Writer, ns string, st deleteStmt, let bson.Raw) (int64, error) {
	var ce match.Env
	if err := r.stmtCollation(w.Collection(ns), st.collation, &ce); err != nil {
		return 0, err
	}
	let, err := r.letWithCollation(let, ce.Collation)
	if err != nil {
		return 0, err
	}
	q, err := st.query(r, w.Collection(ns), r.matchEnv(let))
	if err != nil {
		return 0, err
	}
	if q.coll == nil {
		return 0, nil
	}
	rows, err := q.rows(ctx, w.Reader(), r.queryEnv())
	if err != nil {
		return 0, err
	}
	defer rows.close()
	var n int64
	for {
		row, ok, err := rows.next(ctx)
		if err != nil {
			return n, err
		}
		if !ok {
			return n, nil
		}
		if err := w.Delete(q.coll, row.rid, row.doc); err != nil {
			return n, err
		}
		n++
	}
}
