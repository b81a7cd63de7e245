package command

import (
	"context"
	"time"

	"go.mongodb.org/mongo-driver/v2/bson"

	"github.com/formworkdb/formwork/engine/internal/bsonkit"
	"github.com/formworkdb/formwork/engine/internal/mongoerr"
	"github.com/formworkdb/formwork/engine/internal/storage"
	"github.com/formworkdb/formwork/engine/internal/timeseries"
)

// collModTimeseries runs collMod on a time series: timeseries.granularity
// (only to a coarser one), timeseries.bucketMaxSpanSeconds with
// bucketRoundingSeconds (only wider, both equal), and expireAfterSeconds
// (seconds or "off"). Validators and the other collection options are
// refused with InvalidOptions, as mongod 7.0 does.
// https://www.mongodb.com/docs/v7.0/core/timeseries/timeseries-granularity/
func (r *Request) collModTimeseries(ctx context.Context, ts *tsColl) (bson.D, error) {
	o := *ts.opts
	expire := ts.expire
	changed := false
	var ixSpec bson.Raw
	err := fields("collMod", r.Body, func(k string, v bson.RawValue) error {
		switch k {
		case "timeseries":
			d, err := wantDoc("collMod", k, v)
			if err != nil {
				return err
			}
			return collModBucketing(&o, d)
		case "expireAfterSeconds":
			changed = true
			if s, ok := v.StringValueOK(); ok {
				if s != "off" {
					return mongoerr.Newf(mongoerr.InvalidOptions, "Invalid string value for the 'clusteredIndex::expireAfterSeconds' option. Got: '%s'. Accepted value is 'off'", s)
				}
				expire = nil
				return nil
			}
			n, err := parseTSExpire("collMod", v)
			if err != nil {
				return err
			}
			expire = &n
			return nil
		case "index":
			var err error
			ixSpec, err = wantDoc("collMod", k, v)
			return err
		case "validator", "validationLevel", "validationAction", "changeStreamPreAndPostImages", "viewOn", "pipeline", "cappedSize", "cappedMax":
			return mongoerr.Newf(mongoerr.InvalidOptions, "option not supported on a time-series collection: %s", k)
		case "dryRun", "recordIdsReplicated":
			return mongoerr.Newf(mongoerr.NotImplemented, "collMod option '%s' is not supported yet", k)
		}
		return errUnknown
	})
	if err != nil {
		return nil, err
	}
	var reply bson.D
	if ixSpec != nil {
		if ixSpec, err = ts.collModIndexSpec(r.Body, ixSpec); err != nil {
			return nil, err
		}
		if reply, err = r.collModIndexOn(ctx, ts.bucketsNS, ixSpec); err != nil {
			return nil, err
		}
	}
	if !changed && o == *ts.opts {
		return reply, nil
	}
	err = r.Env.Store.Write(func(w *storage.Writer) error {
		for _, ns := range []string{ts.ns, ts.bucketsNS} {
			c := w.Collection(ns)
			if c == nil {
				return mongoerr.Newf(mongoerr.NamespaceNotFound, "ns does not exist: %s", ns)
			}
			if err := w.SetOptions(ns, withTSOptions(c.Options, &o, expire)); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	return reply, nil
}

// collModIndexSpec translates collMod's index document for the buckets
// of ts, as mongod's makeTimeseriesBucketsCollModCommand does: a
// keyPattern in measurement terms becomes the buckets' key pattern
// (IndexNotFound when it cannot be one); a name is kept.
func (ts *tsColl) collModIndexSpec(body, ixSpec bson.Raw) (bson.Raw, error) {
	v, err := ixSpec.LookupErr("keyPattern")
	if err != nil {
		return ixSpec, nil
	}
	key, ok := v.DocumentOK()
	if !ok {
		return nil, mongoerr.FieldType("collMod", "index.keyPattern", typeName(v.Type), "object")
	}
	bkey, err := ts.opts.BucketIndexKey(key)
	if err != nil {
		msg := err.Error()
		if me, ok := err.(*mongoerr.Error); ok {
			msg = me.Msg
		}
		return nil, mongoerr.Newf(mongoerr.IndexNotFound, "%s Command request: %s", msg, formatDoc(body))
	}
	var out bson.D
	bsonkit.ForEach(ixSpec, func(k string, v bson.RawValue) bool {
		if k == "keyPattern" {
			out = append(out, bson.E{Key: k, Value: bkey})
		} else {
			out = append(out, bson.E{Key: k, Value: v})
		}
		return true
	})
	return bson.Marshal(out)
}

// collModBucketing applies collMod's timeseries document to o.
func collModBucketing(o *timeseries.Options, d bson.Raw) error {
	var span, round int64
	var err error
	bsonkit.ForEach(d, func(k string, v bson.RawValue) bool {
		switch k {
		case "granularity":
			s, ok := v.StringValueOK()
			if !ok {
				err = mongoerr.FieldType("collMod.timeseries", k, typeName(v.Type), "string")
				return false
			}
			err = o.SetGranularity(s)
		case "bucketMaxSpanSeconds", "bucketRoundingSeconds":
			n, ok := asInt(v)
			if !ok || n < 1 {
				err = mongoerr.Newf(mongoerr.Code(51024), "BSON field '%s' value must be >= 1", k)
				return false
			}
			if k == "bucketMaxSpanSeconds" {
				span = n
			} else {
				round = n
			}
		default:
			err = mongoerr.Newf(mongoerr.UnknownBSONField, "BSON field 'collMod.timeseries.%s' is an unknown field.", k)
		}
		return err == nil
	})
	if err != nil || (span == 0 && round == 0) {
		return err
	}
	if span != round {
		return mongoerr.New(mongoerr.InvalidOptions, "Timeseries 'bucketRoundingSeconds' needs to be equal to 'bucketMaxSpanSeconds'")
	}
	if span < o.MaxSpan {
		return mongoerr.New(mongoerr.InvalidOptions, "Invalid transition for timeseries.bucketMaxSpanSeconds and bucketRoundingSeconds. Can only increase the values")
	}
	o.Granularity, o.MaxSpan, o.Rounding = "", span, round
	return nil
}

// withTSOptions returns stored options with timeseries replaced by o and
// expireAfterSeconds set to expire (removed when nil), other options kept
// in place.
func withTSOptions(old bson.Raw, o *timeseries.Options, expire *int64) bson.Raw {
	var out bson.D
	bsonkit.ForEach(old, func(k string, v bson.RawValue) bool {
		switch k {
		case "expireAfterSeconds":
		case "timeseries":
			if expire != nil {
				out = append(out, bson.E{Key: "expireAfterSeconds", Value: *expire})
			}
			out = append(out, bson.E{Key: "timeseries", Value: o.Doc()})
		default:
			out = append(out, bson.E{Key: k, Value: v})
		}
		return true
	})
	b, _ := bson.Marshal(out)
	return b
}

// timeseriesStats is collStats of a time series: the storage figures of
// its buckets under the time series' name, with mongod's timeseries
// section (bucket counts, the bucket catalog's counters).
func (e *Env) timeseriesStats(ts *tsColl, scale int64) (bson.D, error) {
	c := e.Store.Collection(ts.bucketsNS)
	if c == nil {
		return nil, mongoerr.Newf(mongoerr.NamespaceNotFound, "Collection [%s] not found.", ts.ns)
	}
	st, err := e.storageStats(c, scale)
	if err != nil {
		return nil, err
	}
	snap := e.Store.Snapshot()
	defer snap.Close()
	recs, err := snap.Scan(c, false)
	if err != nil {
		return nil, err
	}
	var count, compressed, size int64
	for recs.Next() {
		d, err := recs.Doc()
		if err != nil {
			recs.Close()
			return nil, err
		}
		count++
		size += int64(len(d))
		if v, ok := bsonkit.LookupDoc(d, []string{"control", "version"}); ok {
			if n, _ := bsonkit.TruncInt64(v); n == 2 {
				compressed++
			}
		}
	}
	recs.Close()
	bc := e.buckets()
	bc.mu.Lock()
	s := *bc.statsFor(c.ID)
	bc.mu.Unlock()
	avg, perCommit := int64(0), int64(0)
	if count > 0 {
		avg = size / count
	}
	if s.commits > 0 {
		perCommit = s.measurements / s.commits
	}
	sec := bson.D{
		{Key: "bucketsNs", Value: ts.bucketsNS},
		{Key: "bucketCount", Value: count},
		{Key: "avgBucketSize", Value: avg},
		{Key: "numBucketInserts", Value: s.bucketInserts},
		{Key: "numBucketUpdates", Value: s.bucketUpdates},
		{Key: "numBucketsOpenedDueToMetadata", Value: s.openedMeta},
		{Key: "numBucketsClosedDueToCount", Value: s.closedCount},
		{Key: "numBucketsClosedDueToSize", Value: s.closedSize},
		{Key: "numBucketsClosedDueToTimeForward", Value: s.closedForward},
		{Key: "numBucketsClosedDueToTimeBackward", Value: s.closedBack},
		{Key: "numBucketsClosedDueToMemoryThreshold", Value: int64(0)},
		{Key: "numBucketsClosedDueToReopening", Value: s.closedReopen},
		{Key: "numBucketsArchivedDueToMemoryThreshold", Value: int64(0)},
		{Key: "numBucketsArchivedDueToTimeBackward", Value: s.archivedBack},
		{Key: "numBucketsReopened", Value: s.reopened},
		{Key: "numBucketsClosedDueToSchemaChange", Value: s.closedSc},
		{Key: "numCommits", Value: s.commits},
		{Key: "numWaits", Value: int64(0)},
		{Key: "numMeasurementsCommitted", Value: s.measurements},
		{Key: "avgNumMeasurementsPerCommit", Value: perCommit},
		{Key: "numCompressedBuckets", Value: compressed},
		{Key: "numUncompressedBuckets", Value: count - compressed},
	}
	out := bson.D{{Key: "ns", Value: ts.ns}}
	for _, f := range st[1:] {
		out = append(out, f)
		if f.Key == "size" {
			out = append(out, bson.E{Key: "timeseries", Value: sec})
		}
	}
	return out, nil
}

// expireTimeseries is the TTL monitor's pass over time series with
// expireAfterSeconds: a bucket is deleted, whole, once its newest
// measurement (control.max of the time field) is older than now minus
// expireAfterSeconds. It returns the buckets deleted.
// https://www.mongodb.com/docs/v7.0/core/timeseries/timeseries-automatic-removal/
func (e *Env) expireTimeseries(ctx context.Context, now time.Time) (int64, error) {
	var total int64
	for _, c := range e.Store.Collections("") {
		ts := tsOf(c)
		if ts == nil || ts.expire == nil {
			continue
		}
		cutoff := now.Add(-time.Duration(*ts.expire) * time.Second).UnixMilli()
		path := []string{"control", "max", ts.opts.TimeField}
		err := e.Store.Write(func(w *storage.Writer) error {
			bc := w.Collection(ts.bucketsNS)
			if bc == nil {
				return nil
			}
			rd := w.Reader()
			recs, err := rd.Scan(bc, false)
			if err != nil {
				return err
			}
			type victim struct {
				rid int64
				doc bson.Raw
			}
			var vs []victim
			for recs.Next() {
				d, err := recs.Doc()
				if err != nil {
					recs.Close()
					return err
				}
				if v, ok := bsonkit.LookupDoc(d, path); ok && v.Type == bson.TypeDateTime && v.DateTime() < cutoff {
					vs = append(vs, victim{recs.RecordID(), d})
				}
			}
			recs.Close()
			for _, v := range vs {
				if err := ctx.Err(); err != nil {
					return err
				}
				if err := w.Delete(bc, v.rid, v.doc); err != nil {
					return err
				}
				total++
			}
			return nil
		})
		if err != nil {
			return total, err
		}
	}
	return total, nil
}
