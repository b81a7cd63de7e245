package command

import (
	"context"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/x/bsonx/bsoncore"

	"github.com/formworkdb/formwork/engine/internal/bsonkit"
	"github.com/formworkdb/formwork/engine/internal/index"
	"github.com/formworkdb/formwork/engine/internal/mongoerr"
	"github.com/formworkdb/formwork/engine/internal/storage"
)

// createTimeseriesIndexes runs createIndexes on a time series: each index
// is translated to an index on the buckets (timeseries.BucketIndexKey)
// and built there, with mongod 7.0's refusals: unique, text, sparse
// indexes on measurements, TTL indexes other than on the time field with
// a meta-only partialFilterExpression (InvalidOptions).
// https://www.mongodb.com/docs/v7.0/core/timeseries/timeseries-secondary-index/
func (r *Request) createTimeseriesIndexes(ctx context.Context, ts *tsColl) (bson.D, error) {
	raws, err := createIndexesSpecs(r)
	if err != nil {
		return nil, err
	}
	specs := make([]index.Spec, len(raws))
	for i, raw := range raws {
		if specs[i], err = ts.bucketIndexSpec(raw); err != nil {
			return nil, err
		}
		if specs[i].Name == "" {
			return nil, mongoerr.New(mongoerr.Code(40414), "BSON field 'createIndexes.indexes.name' is missing but a required field")
		}
	}
	var before, after int
	err = r.Env.Store.Write(func(w *storage.Writer) error {
		c := w.Collection(ts.bucketsNS)
		if c == nil {
			return mongoerr.Newf(mongoerr.NamespaceNotFound, "Could not find time-series buckets collection %s", ts.bucketsNS)
		}
		before = len(c.Indexes) - 1
		for _, sp := range specs {
			c = w.Collection(ts.bucketsNS)
			exists, err := indexConflict(c, sp)
			if err != nil {
				return err
			}
			if exists {
				continue
			}
			if len(c.Indexes) >= maxIndexes {
				return mongoerr.Newf(mongoerr.CannotCreateIndex, "add index fails, too many indexes for %s", ts.bucketsNS)
			}
			if _, err := w.CreateIndex(ts.bucketsNS, sp); err != nil {
				return writeErr(err)
			}
		}
		after = len(w.Collection(ts.bucketsNS).Indexes) - 1
		return nil
	})
	if err != nil {
		return nil, err
	}
	reply := bson.D{{Key: "numIndexesBefore", Value: int32(before)}, {Key: "numIndexesAfter", Value: int32(after)}, {Key: "createdCollectionAutomatically", Value: false}}
	if before == after {
		reply = append(reply, bson.E{Key: "note", Value: "all indexes already exist"})
	}
	return reply, nil
}

// bucketIndexSpec translates one index spec of the time series into the
// spec of its index on the buckets.
func (ts *tsColl) bucketIndexSpec(raw bson.Raw) (index.Spec, error) {
	key, ok := raw.Lookup("key").DocumentOK()
	if !ok {
		return index.ParseSpec(raw) // the regular error
	}
	if on, _ := asBool(raw.Lookup("unique")); on {
		return index.Spec{}, mongoerr.New(mongoerr.InvalidOptions, "Unique indexes are not supported on time-series collections")
	}
	measurement := false
	var keyErr error
	bsonkit.ForEach(key, func(k string, v bson.RawValue) bool {
		if s, ok := v.StringValueOK(); ok && s == "text" {
			keyErr = mongoerr.New(mongoerr.InvalidOptions, "Text indexes are not supported on time-series collections")
			return false
		}
		if k != ts.opts.TimeField && !(ts.opts.MetaField != "" && (k == ts.opts.MetaField || len(k) > len(ts.opts.MetaField) && k[:len(ts.opts.MetaField)+1] == ts.opts.MetaField+".")) {
			measurement = true
		}
		return true
	})
	if keyErr != nil {
		return index.Spec{}, keyErr
	}
	if on, _ := asBool(raw.Lookup("sparse")); on && measurement {
		return index.Spec{}, mongoerr.New(mongoerr.InvalidOptions, "Sparse indexes are not supported on time-series measurements")
	}
	_, err := raw.LookupErr("expireAfterSeconds")
	ttl := err == nil
	bkey, err := ts.opts.BucketIndexKey(key)
	if err != nil {
		return index.Spec{}, err
	}
	if ttl {
		if bkey, err = ts.ttlKey(key); err != nil {
			return index.Spec{}, err
		}
	}
	idx, out := bsoncore.AppendDocumentStart(nil)
	var perr error
	original, metaOnly := false, false
	bsonkit.ForEach(raw, func(k string, v bson.RawValue) bool {
		switch k {
		case "key":
			out = bsoncore.AppendDocumentElement(out, k, bkey)
		case "partialFilterExpression":
			d, ok := v.DocumentOK()
			if !ok {
				out = bsoncore.AppendValueElement(out, k, bsoncore.Value{Type: bsoncore.Type(v.Type), Data: v.Value})
				return true
			}
			if _, err := raw.LookupErr("collation"); err == nil {
				perr = mongoerr.New(mongoerr.IndexOptionsConflict, "On a time-series collection, partialFilterExpression and collation arguments are incompatible")
				return false
			}
			t, metric, err := ts.opts.PartialFilter(d)
			if err != nil {
				perr = err
				return false
			}
			metaOnly = !metric
			out = bsoncore.AppendDocumentElement(out, k, t)
			original = true
		default:
			out = bsoncore.AppendValueElement(out, k, bsoncore.Value{Type: bsoncore.Type(v.Type), Data: v.Value})
		}
		return true
	})
	if perr != nil {
		return index.Spec{}, perr
	}
	if ttl {
		if !metaOnly {
			return index.Spec{}, mongoerr.New(mongoerr.InvalidOptions, "TTL indexes on time-series collections require a partialFilterExpression on the metaField")
		}
	}
	if original {
		// mongod keeps the user's definition of an index it cannot map
		// back from the buckets' one, and listIndexes shows it.
		out = bsoncore.AppendDocumentElement(out, "originalSpec", raw)
	}
	out, _ = bsoncore.AppendDocumentEnd(out, idx)
	return index.ParseSpec(out)
}

// indexDocs returns listIndexes' documents for a time series: the
// indexes of its buckets other than _id, with their keys as the user
// wrote them.
func (ts *tsColl) indexDocs(c *storage.Collection) []bson.Raw {
	var docs []bson.Raw
	for _, ix := range c.Indexes {
		if ix.Name == "_id_" {
			continue
		}
		if orig, ok := ix.Spec.Lookup("originalSpec").DocumentOK(); ok {
			docs = append(docs, orig)
			continue
		}
		ukey, ok := ts.opts.UserIndexKey(ix.Key())
		if !ok {
			continue
		}
		idx, out := bsoncore.AppendDocumentStart(nil)
		bsonkit.ForEach(ix.Spec, func(k string, v bson.RawValue) bool {
			if k == "key" {
				out = bsoncore.AppendDocumentElement(out, k, ukey)
			} else {
				out = bsoncore.AppendValueElement(out, k, bsoncore.Value{Type: bsoncore.Type(v.Type), Data: v.Value})
			}
			return true
		})
		out, _ = bsoncore.AppendDocumentEnd(out, idx)
		docs = append(docs, out)
	}
	return docs
}

// listTimeseriesIndexes answers listIndexes on a time series.
func (r *Request) listTimeseriesIndexes(ctx context.Context, ts *tsColl, name string, batchSize int64) (bson.D, error) {
	c := r.Env.Store.Collection(ts.bucketsNS)
	if c == nil {
		return nil, mongoerr.Newf(mongoerr.NamespaceNotFound, "ns does not exist: %s", ts.ns)
	}
	return openCursor(ctx, r, r.DB+".$cmd.listIndexes."+name, &sliceSource{docs: ts.indexDocs(c)}, batchSize, false)
}

// dropTarget translates dropIndexes' index argument for a time
// series: a key pattern becomes the buckets' key pattern (IndexNotFound
// when it cannot be one).
func (ts *tsColl) dropTarget(v bson.RawValue) (bson.RawValue, error) {
	key, ok := v.DocumentOK()
	if !ok {
		return v, nil
	}
	bkey, err := ts.opts.BucketIndexKey(key)
	if err != nil {
		return v, mongoerr.Newf(mongoerr.IndexNotFound, "can't find index with key: %s", formatDoc(key))
	}
	return bson.RawValue{Type: bson.TypeEmbeddedDocument, Value: bkey}, nil
}

// viewHint translates the hint of a read on view v for the query on the
// collection under it: on a time series, bucketHint; on other views the
// hint is passed on.
func (e *Env) viewHint(v *viewDef, hint bson.RawValue) bson.RawValue {
	if ts := e.tsColl(v.ns); ts != nil {
		return ts.bucketHint(hint)
	}
	return hint
}

// bucketHint translates a hint on the time series into one on its
// buckets, as mongod's ResolvedView::asExpandedViewAggregation and its
// time series writes do: a key pattern in measurement terms becomes the
// buckets' key pattern; a pattern that cannot translate, an index name
// and {$natural: …} stay as they are (an unknown one then fails as
// BadValue).
func (ts *tsColl) bucketHint(hint bson.RawValue) bson.RawValue {
	key, ok := hint.DocumentOK()
	if !ok || len(key) <= 5 {
		return hint
	}
	if _, err := key.LookupErr("$natural"); err == nil {
		return hint
	}
	bkey, err := ts.opts.BucketIndexKey(key)
	if err != nil {
		return hint
	}
	return bson.RawValue{Type: bson.TypeEmbeddedDocument, Value: bkey}
}

// ttlKey returns the buckets' key of a TTL index on the time series, as
// mongod's convertToTTLTimeField does: a single field, the timeField,
// indexed as control.max.<time>, so that the TTL monitor removes a bucket
// (matching the meta-only partial filter) once its newest measurement
// expires.
// https://www.mongodb.com/docs/v7.0/core/timeseries/timeseries-automatic-removal/
func (ts *tsColl) ttlKey(key bson.Raw) (bson.Raw, error) {
	elems, _ := key.Elements()
	if len(elems) != 1 {
		return nil, mongoerr.Newf(mongoerr.CannotCreateIndex, "TTL indexes are single-field indexes, compound indexes do not support TTL. Index spec: %s", formatDoc(key))
	}
	if elems[0].Key() != ts.opts.TimeField {
		return nil, mongoerr.New(mongoerr.InvalidOptions, "TTL indexes on non-time fields are not supported on time-series collections")
	}
	return bson.Marshal(bson.D{{Key: "control.max." + ts.opts.TimeField, Value: elems[0].Value()}})
}
