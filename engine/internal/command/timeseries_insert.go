package command

import (
	"bytes"
	"context"
	"sync"

	"go.mongodb.org/mongo-driver/v2/bson"

	"github.com/formworkdb/formwork/engine/internal/bsonkit"
	"github.com/formworkdb/formwork/engine/internal/mongoerr"
	"github.com/formworkdb/formwork/engine/internal/storage"
	"github.com/formworkdb/formwork/engine/internal/timeseries"
)

// maxMeasurementSize is the largest measurement a time series accepts,
// the manual's 4 MB document limit for time series.
const maxMeasurementSize = 4 * 1024 * 1024

// bucketCatalog is the engine's bucket catalog: per buckets collection
// (by collection id, so a dropped and re-created collection starts
// afresh), the open bucket of each meta value, and the counters collStats
// reports. Buckets change only under the store's write lock; mu guards
// the maps for readers (collStats) as well.
type bucketCatalog struct {
	mu    sync.Mutex
	open  map[uint64]map[string]*openBucket
	stats map[uint64]*tsStats
	// reopenable are, per buckets collection and meta value, the
	// uncompressed buckets that are not open: archived (by this process,
	// after a measurement went back in time) or found on disk when the
	// catalog first met the collection. Made on first use.
	reopenable map[uint64]map[string][]*openBucket
}

// openBucket is an open bucket: its record, the document stored there and
// the bucket decoded. The stored document is compared with doc before
// use, so a bucket that a failed write, a delete, an update or the TTL
// monitor changed behind the catalog's back is never appended to.
type openBucket struct {
	rid int64 // 0 until inserted
	doc bson.Raw
	b   *timeseries.Bucket // nil for a reopenable bucket not read yet
	// minTime is the bucket's control.min time; archived reports a
	// bucket this process archived (reopenable by a measurement going
	// forward as well as backward) rather than one found on disk.
	minTime  int64
	archived bool
}

// tsStats are the bucket catalog's counters of one time series, as
// mongod's collStats timeseries section names them.
type tsStats struct {
	bucketInserts, bucketUpdates, openedMeta                     int64
	closedCount, closedSize, closedForward, closedBack, closedSc int64
	closedReopen, archivedBack, reopened                         int64
	commits, measurements                                        int64
}

// buckets returns e's bucket catalog.
func (e *Env) buckets() *bucketCatalog { return e.tsBuckets }

// statsFor returns the counters of buckets collection id (mu held).
func (bc *bucketCatalog) statsFor(id uint64) *tsStats {
	s := bc.stats[id]
	if s == nil {
		s = &tsStats{}
		bc.stats[id] = s
	}
	return s
}

// insertTimeseries inserts docs into the time series ts: each measurement
// joins the open bucket of its meta value when mongod's rules let it, or
// closes that bucket (compressing it) and opens a new one. Every bucket
// touched is written once, at the end of the batch, in the same storage
// batch as the rest, so the command is atomic with respect to readers. An
// ordered insert stops at the first invalid measurement.
// https://www.mongodb.com/docs/v7.0/core/timeseries/timeseries-bucketing/
func (r *Request) insertTimeseries(ctx context.Context, ts *tsColl, docs []bson.Raw, ordered bool) (bson.D, error) {
	res := &writeResult{}
	ms := make([]timeseries.Measurement, 0, len(docs))
	for i, d := range docs {
		m, err := ts.measurement(fillEmptyTimestamps(d, r.Env.clock.now))
		if err != nil {
			res.errs = append(res.errs, mongoerr.WriteError{Index: i, Err: writeErr(err)})
			if ordered {
				break
			}
			continue
		}
		ms = append(ms, m)
	}
	if len(ms) > 0 {
		if err := r.Env.Store.WriteContext(ctx, func(w *storage.Writer) error {
			return r.Env.appendMeasurements(ctx, w, ts, ms)
		}); err != nil {
			return nil, err
		}
		res.n = int64(len(ms))
	}
	return res.reply(r, false), nil
}

// measurement checks one document inserted into ts.
func (ts *tsColl) measurement(d bson.Raw) (timeseries.Measurement, error) {
	if len(d) > maxMeasurementSize {
		return timeseries.Measurement{}, mongoerr.Newf(mongoerr.BSONObjectTooLarge, "Measurement size %d exceeds the %d bytes limit of time series measurements", len(d), maxMeasurementSize)
	}
	doc, err := prepareInsert(d)
	if err != nil {
		return timeseries.Measurement{}, err
	}
	if _, ok := bsonkit.Field(d, "_id"); ok {
		// Keep the field order: measurements unpack as inserted.
		doc = d
	}
	return ts.opts.Prepare(doc)
}

// appendMeasurements buckets ms inside w (the write lock is held).
func (e *Env) appendMeasurements(ctx context.Context, w *storage.Writer, ts *tsColl, ms []timeseries.Measurement) error {
	c := w.Collection(ts.bucketsNS)
	if c == nil {
		return mongoerr.Newf(mongoerr.NamespaceNotFound, "Could not find time-series buckets collection for write: %s", ts.bucketsNS)
	}
	bc := e.buckets()
	bc.mu.Lock()
	defer bc.mu.Unlock()
	open := bc.open[c.ID]
	if open == nil {
		if bc.reopenable == nil {
			bc.reopenable = map[uint64]map[string][]*openBucket{}
		}
		disk, err := reopenableBuckets(w.Reader(), c, ts)
		if err != nil {
			return err
		}
		open = map[string]*openBucket{}
		bc.open[c.ID] = open
		bc.reopenable[c.ID] = disk
	}
	st := bc.statsFor(c.ID)
	rs := &reopenSet{rd: w.Reader(), c: c, ts: ts, byKey: bc.reopenable[c.ID]}
	rd := w.Reader()
	checked := map[*openBucket]bool{}
	var dirty []*openBucket
	isDirty := map[*openBucket]bool{}
	touch := func(ob *openBucket) {
		if !isDirty[ob] {
			isDirty[ob] = true
			dirty = append(dirty, ob)
		}
	}
	for i, m := range ms {
		if i%256 == 0 {
			if err := ctx.Err(); err != nil {
				return ctxErr(err)
			}
		}
		ob := open[m.Key]
		if ob != nil && !checked[ob] && ob.rid != 0 {
			cur, err := rd.Fetch(c, ob.rid)
			if err != nil {
				return err
			}
			if !bytes.Equal(cur, ob.doc) {
				delete(open, m.Key)
				ob = nil
			} else {
				checked[ob] = true
			}
		}
		why := timeseries.FitsBucket
		if ob != nil {
			why = ts.opts.Fits(ob.b, m)
		}
		// Reopening (mongod 6.3+): with no open bucket, or when m falls
		// outside the open one's time range, a bucket whose range holds
		// m is reopened: an archived one, or (no open bucket or time
		// backward) an uncompressed one on disk.
		if ob == nil || why == timeseries.CloseTimeForward || why == timeseries.CloseTimeBackward {
			cand := rs.find(m, ob == nil || why == timeseries.CloseTimeBackward, checked)
			switch {
			case cand != nil:
				if ob != nil {
					st.closedReopen++
					closeBucket(open, m.Key, ob, touch)
				}
				st.reopened++
				ob, open[m.Key] = cand, cand
				why = ts.opts.Fits(ob.b, m)
			case ob == nil:
				st.openedMeta++
			case why == timeseries.CloseTimeBackward:
				st.archivedBack++
				delete(open, m.Key)
				ob.archived, ob.minTime = true, ob.b.MinTime
				rs.add(m.Key, ob)
				ob = nil
			}
		}
		if ob != nil {
			switch why {
			case timeseries.FitsBucket:
			case timeseries.CloseCount:
				st.closedCount++
				ob = closeBucket(open, m.Key, ob, touch)
			case timeseries.CloseSize:
				st.closedSize++
				ob = closeBucket(open, m.Key, ob, touch)
			case timeseries.CloseTimeForward:
				st.closedForward++
				ob = closeBucket(open, m.Key, ob, touch)
			case timeseries.CloseTimeBackward:
				st.closedBack++
				ob = closeBucket(open, m.Key, ob, touch)
			default:
				st.closedSc++
				ob = closeBucket(open, m.Key, ob, touch)
			}
		}
		if ob == nil {
			ob = &openBucket{b: ts.opts.NewBucket(m)}
			open[m.Key] = ob
			checked[ob] = true
		}
		ts.opts.Add(ob.b, m)
		touch(ob)
		if ob.b.Count >= timeseries.MaxCount {
			// A full bucket closes (compressed) now rather than when the
			// next measurement arrives, as mongod closes full buckets at
			// commit.
			st.closedCount++
			closeBucket(open, m.Key, ob, touch)
		}
	}
	for _, ob := range dirty {
		doc, err := ob.b.Doc(ob.b.Compressed)
		if err != nil {
			return err
		}
		if ob.rid == 0 {
			rid, err := w.Insert(c, doc)
			if err != nil {
				return err
			}
			ob.rid = rid
			st.bucketInserts++
		} else {
			if err := w.Update(c, ob.rid, ob.doc, doc); err != nil {
				return err
			}
			st.bucketUpdates++
		}
		ob.doc = doc
	}
	st.commits++
	st.measurements += int64(len(ms))
	return nil
}

// closeBucket marks ob closed (it is written compressed) and removes it
// from the open buckets; it returns nil, the bucket to open instead.
func closeBucket(open map[string]*openBucket, key string, ob *openBucket, touch func(*openBucket)) *openBucket {
	ob.b.Compressed = true
	touch(ob)
	delete(open, key)
	return nil
}
