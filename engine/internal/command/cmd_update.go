package command

import (
	"context"
	"time"

	"go.mongodb.org/mongo-driver/v2/bson"

	"github.com/formworkdb/formwork/engine/internal/match"
	"github.com/formworkdb/formwork/engine/internal/mongoerr"
	"github.com/formworkdb/formwork/engine/internal/storage"
	"github.com/formworkdb/formwork/engine/internal/wire"
)

func init() {
	register("update", &spec{run: runUpdate, write: true, apiV1: true, help: "update documents"})
}

// updateStmt is one entry of an update command's updates array.
type updateStmt struct {
	q            bson.Raw
	u            bson.RawValue
	upsert       bool
	multi        bool
	arrayFilters []bson.Raw
	hint         bson.RawValue
	c            bson.Raw // constants of a pipeline update, read as $$name
	collation    bson.RawValue
}

// parseUpdateStmt parses one entry of an update command's updates array.
func parseUpdateStmt(d bson.Raw) (updateStmt, error) {
	var s updateStmt
	haveQ, haveU := false, false
	elems, err := d.Elements()
	if err != nil {
		return s, mongoerr.Newf(mongoerr.InvalidBSON, "%v", err)
	}
	for _, e := range elems {
		v := e.Value()
		var err error
		switch k := e.Key(); k {
		case "q":
			s.q, err = wantDoc("update.updates", k, v)
			haveQ = true
		case "u":
			if v.Type != bson.TypeEmbeddedDocument && v.Type != bson.TypeArray {
				return s, mongoerr.New(mongoerr.FailedToParse, "Update argument must be either an object or an array")
			}
			s.u, haveU = v, true
		case "upsert":
			s.upsert, err = wantBool("update.updates", k, v)
		case "multi":
			s.multi, err = wantBool("update.updates", k, v)
		case "arrayFilters":
			s.arrayFilters, err = docArray("update.updates", k, v)
		case "hint":
			s.hint = v
		case "collation":
			s.collation = v
			err = checkCollation(v)
		case "c":
			s.c, err = wantDoc("update.updates", k, v)
		case "upsertSupplied":
		default:
			return s, mongoerr.UnknownField("update.updates", k)
		}
		if err != nil {
			return s, err
		}
	}
	if !haveQ {
		return s, mongoerr.New(mongoerr.Code(40414), "BSON field 'update.updates.q' is missing but a required field")
	}
	if !haveU {
		return s, mongoerr.New(mongoerr.Code(40414), "BSON field 'update.updates.u' is missing but a required field")
	}
	return s, nil
}

// query compiles st's filter and hint against coll (nil: the collection
// does not exist); a single update selects at most one document. The
// filter's $expr reads env.
func (st updateStmt) query(r *Request, coll *storage.Collection, env match.Env) (*query, error) {
	if err := r.stmtCollation(coll, st.collation, &env); err != nil {
		return nil, err
	}
	q := &query{coll: coll, hint: st.hint}
	if !st.multi {
		q.limit = 1
	}
	if err := q.setFilter(st.q, env); err != nil {
		return nil, err
	}
	return q, q.resolveHint()
}

// runUpdate applies update statements.
// https://www.mongodb.com/docs/manual/reference/command/update/
func runUpdate(ctx context.Context, r *Request) (bson.D, error) {
	b, err := parseWriteBatch(r, "updates")
	if err != nil {
		return nil, err
	}
	stmts, ordered, name := b.items, b.ordered, b.coll
	// mongod parses every statement before running any: a malformed one
	// fails the whole command.
	parsed := make([]updateStmt, len(stmts))
	for i, raw := range stmts {
		if parsed[i], err = parseUpdateStmt(raw); err != nil {
			return nil, err
		}
	}
	ns := r.DB + "." + name
	// An upserting statement may create the database: mongod creates the
	// collection before running it, so a case clash fails that statement.
	var caseErr error
	for _, st := range parsed {
		if st.upsert {
			caseErr = checkDBCase(r.Env.Store, r.DB)
			break
		}
	}
	res := &writeResult{}
	err = r.write(ctx, func(w *storage.Writer) error {
		*res = writeResult{} // an attempt that waited runs again
		r.op.restartStmts()
		for i, st := range parsed {
			if cerr := ctx.Err(); cerr != nil {
				// maxTimeMS or a client gone: the remaining statements
				// do not run, ordered or not.
				res.errs = append(res.errs, mongoerr.WriteError{Index: i, Err: mongoerr.As(ctxErr(cerr))})
				return nil
			}
			err := caseErr
			mark, n0, m0, u0 := r.op.beginStmt(), res.n, res.nModified, len(res.upserted)
			if ts := r.Env.tsColl(ns); ts != nil {
				err = r.updateTimeseries(ctx, w, ts, st, b.let, res)
			} else if !st.upsert || caseErr == nil {
				err = r.updateOne(ctx, w, ns, i, st, b.let, res)
			}
			counts := bson.D{{Key: "nMatched", Value: res.n - n0 - int64(len(res.upserted)-u0)}, {Key: "nModified", Value: res.nModified - m0}}
			if len(res.upserted) > u0 {
				counts = append(counts, bson.E{Key: "nUpserted", Value: int64(len(res.upserted) - u0)})
			}
			r.op.endStmt(mark, updateStmtCommand(st), counts, err)
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
	return res.reply(r, true), nil
}

// updateOne runs statement i, adding its counts to res.
func (r *Request) updateOne(ctx context.Context, w *storage.Writer, ns string, i int, st updateStmt, let bson.Raw, res *writeResult) error {
	now := time.Now()
	var ce match.Env
	if err := r.stmtCollation(w.Collection(ns), st.collation, &ce); err != nil {
		return err
	}
	let, err := r.letWithCollation(let, ce.Collation)
	if err != nil {
		return err
	}
	if st.c != nil {
		if st.u.Type != bson.TypeArray {
			return mongoerr.New(mongoerr.Code(51198), "Constant values may only be specified for pipeline updates")
		}
		let = mergeLet(let, st.c)
	}
	u, err := compileUpdate(st.u, st.arrayFilters, let, r.start, r.Env.clock.current())
	if err != nil {
		return err
	}
	if st.multi && u.isReplacement() {
		return mongoerr.New(mongoerr.FailedToParse, "multi update is not supported for replacement-style update")
	}
	q, err := st.query(r, w.Collection(ns), r.matchEnv(let))
	if err != nil {
		return err
	}
	u = updaterWithCollation(u, q.collation)
	if q.coll != nil {
		rows, err := q.rows(ctx, w.Reader(), r.queryEnv())
		if err != nil {
			return err
		}
		defer rows.close()
		matched := false
		for {
			row, ok, err := rows.next(ctx)
			if err != nil {
				return err
			}
			if !ok {
				break
			}
			matched = true
			if cerr := ctx.Err(); cerr != nil {
				return ctxErr(cerr)
			}
			_, changed, err := r.updateRow(ctx, w, q, u, row, now)
			if err != nil {
				return err
			}
			res.n++
			if changed {
				res.nModified++
			}
		}
		if matched {
			return nil
		}
	}
	if !st.upsert {
		return nil
	}
	doc, err := r.insertUpsert(ctx, w, ns, u, st.q, now)
	if err != nil {
		return err
	}
	res.n++
	res.upserted = append(res.upserted, bson.D{{Key: "index", Value: int32(i)}, {Key: "_id", Value: doc.Lookup("_id")}})
	return nil
}

// updateRow applies u to one row and stages the new document unless
// the update left it unchanged (a no-op is not written). It returns the
// document after the update.
func (r *Request) updateRow(ctx context.Context, w *storage.Writer, q *query, u updater, row row, now time.Time) (bson.Raw, bool, error) {
	_, pos := q.filter.MatchPos(row.doc)
	out, changed, err := u.apply(ctx, row.doc, pos, now)
	if err != nil || !changed {
		return out, false, err
	}
	if len(out) > wire.MaxDocumentSize {
		return nil, false, mongoerr.Newf(mongoerr.BSONObjectTooLarge, "Resulting document after update is larger than %d", wire.MaxDocumentSize)
	}
	if err := r.validateWrite(q.coll, row.doc, out); err != nil {
		return nil, false, err
	}
	if u.isReplacement() {
		w.LogReplacement()
	}
	return out, true, w.Update(q.coll, row.rid, row.doc, out)
}

// insertUpsert builds the document an upsert inserts when nothing matched
// filter, and stages it, creating the collection if needed.
func (r *Request) insertUpsert(ctx context.Context, w *storage.Writer, ns string, u updater, filter bson.Raw, now time.Time) (bson.Raw, error) {
	doc, err := u.upsert(ctx, filter, now)
	if err != nil {
		return nil, err
	}
	if doc, err = prepareInsert(doc); err != nil {
		return nil, err
	}
	c, err := w.EnsureCollection(ns)
	if err != nil {
		return nil, err
	}
	if err := r.validateWrite(c, nil, doc); err != nil {
		return nil, err
	}
	_, err = w.Insert(c, doc)
	return doc, err
}
