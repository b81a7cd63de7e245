package command

import (
	"context"

	"go.mongodb.org/mongo-driver/v2/bson"

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
	parsed := make([]deleteSpec, len(stmts))
	for i, raw := range stmts {
		if parsed[i], err = parseDeleteStmt(raw); err != nil {
			return nil, err
		}
	}
	ns := r.DB + "." + name
	res := &writeResult{}
	err = r.Env.Store.Write(func(w *storage.Writer) error {
		for i, st := range parsed {
			n, err := deleteStmt(ctx, w, ns, st)
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

// deleteSpec is one entry of a delete command's deletes array.
type deleteSpec struct {
	filter bson.Raw
	limit  int64
	hint   bson.RawValue
}

func parseDeleteStmt(raw bson.Raw) (deleteSpec, error) {
	var (
		st            deleteSpec
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

func deleteStmt(ctx context.Context, w *storage.Writer, ns string, st deleteSpec) (int64, error) {
	filter, limit, hint := st.filter, st.limit, st.hint
	q := &query{coll: w.Collection(ns), limit: limit, hint: hint}
	if err := q.setFilter(filter); err != nil {
		return 0, err
	}
	if err := q.checkHint(); err != nil {
		return 0, err
	}
	if q.coll == nil {
		return 0, nil
	}
	rows, err := q.rows(ctx, w.Reader())
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
