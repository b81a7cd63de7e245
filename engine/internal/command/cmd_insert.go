package command

import (
	"context"

	"go.mongodb.org/mongo-driver/v2/bson"

	"github.com/formworkdb/formwork/engine/internal/mongoerr"
	"github.com/formworkdb/formwork/engine/internal/storage"
)

func init() {
	register("insert", &spec{run: runInsert, write: true, apiV1: true, help: "insert documents"})
}

// maxWriteBatch is the most operations one write command may carry.
const maxWriteBatch = 100_000

// runInsert inserts documents; an ordered insert stops at the first error.
// https://www.mongodb.com/docs/manual/reference/command/insert/
func runInsert(ctx context.Context, r *Request) (bson.D, error) {
	b, err := parseWriteBatch(r, "documents")
	if err != nil {
		return nil, err
	}
	docs, ordered, ns := b.items, b.ordered, r.DB+"."+b.coll
	if ts := r.Env.tsColl(ns); ts != nil {
		return r.insertTimeseries(ctx, ts, docs, ordered)
	}
	if err := checkDBCase(r.Env.Store, r.DB); err != nil {
		return nil, err
	}
	// Validate and complete every document before taking the write lock:
	// only the index keys and the batch are built under it.
	prepared := make([]bson.Raw, len(docs))
	prepErrs := make([]error, len(docs))
	for i, d := range docs {
		prepared[i], prepErrs[i] = prepareInsert(fillEmptyTimestamps(d, r.Env.clock.now))
		if prepErrs[i] != nil && ordered {
			break
		}
	}
	res := &writeResult{}
	err = r.write(ctx, func(w *storage.Writer) error {
		*res = writeResult{} // an attempt that waited runs again
		c, err := w.EnsureCollection(ns)
		if err != nil {
			return err
		}
		for i, doc := range prepared {
			if err := ctx.Err(); err != nil && ordered {
				res.errs = append(res.errs, mongoerr.WriteError{Index: i, Err: mongoerr.As(ctxErr(err))})
				return nil
			}
			err := prepErrs[i]
			if err == nil {
				err = r.validateWrite(c, nil, doc)
			}
			if err == nil {
				_, err = w.Insert(c, doc)
			}
			if err != nil {
				res.errs = append(res.errs, mongoerr.WriteError{Index: i, Err: writeErr(err)})
				if ordered {
					return nil
				}
				continue
			}
			res.n++
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	return res.reply(r, false), nil
}

// checkWritable rejects writes to namespaces mongod reserves.
func checkWritable(db, coll string) error {
	if len(coll) >= 7 && coll[:7] == "system." && coll != "system.js" {
		return mongoerr.Newf(mongoerr.InvalidNamespace, "cannot write to '%s.%s'", db, coll)
	}
	return nil
}

func ctxErr(err error) error {
	if err == context.DeadlineExceeded {
		return mongoerr.New(mongoerr.MaxTimeMSExpired, "operation exceeded time limit")
	}
	return mongoerr.New(mongoerr.Interrupted, "operation was interrupted")
}
