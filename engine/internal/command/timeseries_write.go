package command

import (
	"context"
	"time"

	"go.mongodb.org/mongo-driver/v2/bson"

	"github.com/formworkdb/formwork/engine/internal/match"
	"github.com/formworkdb/formwork/engine/internal/mongoerr"
	"github.com/formworkdb/formwork/engine/internal/storage"
)

// updateTimeseries runs one update statement on a time series as mongod
// 7.0 does: multi only, no upsert, a filter and an update on the
// metaField only (InvalidOptions otherwise), applied to the buckets'
// meta. n and nModified count measurements.
// https://www.mongodb.com/docs/v7.0/core/timeseries/timeseries-limitations/#updates
func (r *Request) updateTimeseries(ctx context.Context, w *storage.Writer, ts *tsColl, st updateStmt, let bson.Raw, res *writeResult) error {
	if !ts.opts.HasMeta() {
		return mongoerr.New(mongoerr.InvalidOptions, "Cannot perform an update on a time-series collection that does not have a metaField")
	}
	if !st.multi {
		return mongoerr.New(mongoerr.InvalidOptions, "Cannot perform a non-multi update on a time-series collection")
	}
	if st.upsert {
		return mongoerr.New(mongoerr.InvalidOptions, "Cannot perform an upsert on a time-series collection")
	}
	q, err := ts.opts.TranslateQuery(st.q)
	if err != nil {
		return err
	}
	u, err := ts.opts.TranslateUpdate(st.u)
	if err != nil {
		return err
	}
	bst := st
	bst.q, bst.u, bst.hint = q, bson.RawValue{Type: bson.TypeEmbeddedDocument, Value: u}, ts.bucketHint(st.hint)
	up, err := compileUpdate(bst.u, bst.arrayFilters, let, r.start, r.Env.clock.current())
	if err != nil {
		return err
	}
	bq, err := bst.query(r, w.Collection(ts.bucketsNS), r.matchEnv(let))
	if err != nil || bq.coll == nil {
		return err
	}
	rows, err := bq.rows(ctx, w.Reader(), r.queryEnv())
	if err != nil {
		return err
	}
	defer rows.close()
	now := time.Now()
	for {
		row, ok, err := rows.next(ctx)
		if err != nil {
			return err
		}
		if !ok {
			return nil
		}
		b, err := ts.opts.Decode(row.doc)
		if err != nil {
			return err
		}
		_, changed, err := r.updateRow(ctx, w, bq, up, row, now)
		if err != nil {
			return err
		}
		res.n += int64(b.Count)
		if changed {
			res.nModified += int64(b.Count)
		}
	}
}

// deleteTimeseries runs one delete statement on a time series with any
// filter (MongoDB 7.0): the buckets that may hold matches are selected
// by the filter's bucket-level form, each is unpacked, and the matching
// measurements (the first one for limit 1) are removed, the bucket
// deleted when none remains and rewritten otherwise.
// https://www.mongodb.com/docs/v7.0/core/timeseries/timeseries-limitations/#deletes
func (r *Request) deleteTimeseries(ctx context.Context, w *storage.Writer, ts *tsColl, st deleteStmt, let bson.Raw) (int64, error) {
	f, err := match.CompileEnv(orEmpty(st.filter), r.matchEnv(let))
	if err != nil {
		return 0, err
	}
	bst := deleteStmt{filter: ts.opts.BucketFilter(orEmpty(st.filter)), hint: ts.bucketHint(st.hint)}
	bq, err := bst.query(r, w.Collection(ts.bucketsNS), r.matchEnv(nil))
	if err != nil || bq.coll == nil {
		return 0, err
	}
	rows, err := bq.rows(ctx, w.Reader(), r.queryEnv())
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
		b, err := ts.opts.Decode(row.doc)
		if err != nil {
			return n, err
		}
		var keep []bson.Raw
		removed := 0
		for _, m := range ts.opts.Measurements(b) {
			if (st.limit == 0 || n+int64(removed) < st.limit) && f.Match(m) {
				removed++
				continue
			}
			keep = append(keep, m)
		}
		if removed == 0 {
			continue
		}
		n += int64(removed)
		if len(keep) == 0 {
			if err := w.Delete(bq.coll, row.rid, row.doc); err != nil {
				return n, err
			}
		} else {
			nb := ts.opts.Rebuild(b, keep)
			doc, err := nb.Doc(nb.Compressed)
			if err != nil {
				return n, err
			}
			if err := w.Update(bq.coll, row.rid, row.doc, doc); err != nil {
				return n, err
			}
		}
		if st.limit > 0 && n >= st.limit {
			return n, nil
		}
	}
}
