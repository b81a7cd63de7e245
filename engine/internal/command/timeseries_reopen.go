package command

import (
	"bytes"

	"go.mongodb.org/mongo-driver/v2/bson"

	"github.com/formworkdb/formwork/engine/internal/bsonkit"
	"github.com/formworkdb/formwork/engine/internal/storage"
	"github.com/formworkdb/formwork/engine/internal/timeseries"
)

// Bucket reopening follows mongod 7.0's bucket catalog: a measurement that
// goes back in time before the open bucket of its meta value archives that
// bucket (it stays uncompressed) and joins the bucket whose time range
// holds it, archived or found on disk uncompressed, not closed and not
// full; a measurement past the open bucket's range may reopen an archived
// bucket only. A reopened bucket takes the place of the open one, which
// closes (compressed). Buckets closed for their count, size or a schema
// change are compressed and never reopened.
// https://www.mongodb.com/docs/v7.0/core/timeseries/timeseries-bucketing/
//
// Divergence: mongod finds buckets on disk with a query on the buckets
// collection; the engine reads the uncompressed buckets once, when the
// catalog first meets the collection, and afterwards knows the ones it
// archives. A bucket left uncompressed by other means (a bucket-level
// write that made the catalog forget it) is not reopened. Tested by
// TestTimeseriesReopensOlderBucketAfterRestart and
// testdata/timeseries/reopen.txt.

// reopenSet is the reopenable buckets of one time series during an
// insert (the store's write lock and the catalog's mutex are held).
type reopenSet struct {
	rd    storage.Reader
	c     *storage.Collection
	ts    *tsColl
	byKey map[string][]*openBucket
}

// add records ob as reopenable under its meta key.
func (rs *reopenSet) add(key string, ob *openBucket) {
	rs.byKey[key] = append(rs.byKey[key], ob)
}

// find returns the reopenable bucket of m's meta value whose time range
// holds m (the latest-starting one), removed from the set, or nil. With
// query false only archived buckets qualify. A candidate whose stored
// document changed, is gone, or is no longer reopenable is dropped.
func (rs *reopenSet) find(m timeseries.Measurement, query bool, checked map[*openBucket]bool) *openBucket {
	list := rs.byKey[m.Key]
	span := rs.ts.opts.MaxSpan * 1000
	for {
		best := -1
		for i, ob := range list {
			if (!query && !ob.archived) || m.Time < ob.minTime || m.Time >= ob.minTime+span {
				continue
			}
			if best < 0 || ob.minTime > list[best].minTime {
				best = i
			}
		}
		if best < 0 {
			rs.byKey[m.Key] = list
			return nil
		}
		ob := list[best]
		list = append(list[:best:best], list[best+1:]...)
		if rs.load(ob, m.Key) {
			rs.byKey[m.Key] = list
			checked[ob] = true
			return ob
		}
	}
}

// load makes sure ob still is what the catalog recorded under meta key
// key, reading and decoding it when it has not been yet; false when it
// can no longer be reopened.
func (rs *reopenSet) load(ob *openBucket, key string) bool {
	if ob.rid == 0 {
		return ob.b != nil // archived before its first write: in this batch
	}
	cur, err := rs.rd.Fetch(rs.c, ob.rid)
	if err != nil || cur == nil {
		return false // gone (or unreadable): a new bucket opens instead
	}
	if ob.b != nil {
		return bytes.Equal(cur, ob.doc)
	}
	cur = bson.Raw(append([]byte(nil), cur...))
	b, ok := reopenableBucket(rs.ts, cur)
	if !ok || b.MinTime != ob.minTime || metaKey(b) != key {
		return false
	}
	ob.doc, ob.b = cur, b
	return true
}

// reopenableBucket decodes d when it is a bucket that may be reopened:
// uncompressed (version 1), not marked closed, not full.
func reopenableBucket(ts *tsColl, d bson.Raw) (*timeseries.Bucket, bool) {
	if v, ok := bsonkit.LookupDoc(d, []string{"control", "version"}); !ok || v.Type != bson.TypeInt32 || v.Int32() != 1 {
		return nil, false
	}
	if v, ok := bsonkit.LookupDoc(d, []string{"control", "closed"}); ok && v.Type == bson.TypeBoolean && v.Boolean() {
		return nil, false
	}
	b, err := ts.opts.Decode(d)
	if err != nil || b.Count >= timeseries.MaxCount || b.Compressed {
		return nil, false
	}
	return b, true
}

// metaKey is the bucketing key of a bucket's meta value, as
// timeseries.Measurement.Key of its measurements.
func metaKey(b *timeseries.Bucket) string {
	if b.Meta.Type == 0 {
		return ""
	}
	return string([]byte{byte(b.Meta.Type)}) + string(b.Meta.Value)
}

// reopenableBuckets reads, when the catalog first meets a time series (as
// after a restart), the buckets that may be reopened, by meta key. Only
// their record and minimum time are kept; load reads them when needed.
func reopenableBuckets(rd storage.Reader, c *storage.Collection, ts *tsColl) (map[string][]*openBucket, error) {
	out := map[string][]*openBucket{}
	recs, err := rd.Scan(c, false)
	if err != nil {
		return nil, err
	}
	defer recs.Close()
	for recs.Next() {
		d, err := recs.Doc()
		if err != nil {
			return nil, err
		}
		b, ok := reopenableBucket(ts, d)
		if !ok {
			continue
		}
		k := metaKey(b)
		out[k] = append(out[k], &openBucket{rid: recs.RecordID(), minTime: b.MinTime})
	}
	return out, recs.Err()
}
