package timeseries

import (
	"context"
	"time"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo/options"
)

// marshal encodes m and checks it (see checkMeasurement).
func (c *Collection[M]) marshal(m M) (bson.Raw, error) {
	doc, err := bson.Marshal(m)
	if err != nil {
		return nil, err
	}
	return doc, c.checkMeasurement(doc)
}

// Insert inserts one measurement. A measurement without its time, with
// the zero time or with an array meta value fails with ErrRestriction
// before the server is asked.
func (c *Collection[M]) Insert(ctx context.Context, m M) error {
	doc, err := c.marshal(m)
	if err != nil {
		return err
	}
	_, err = c.coll.InsertOne(ctx, doc)
	return err
}

// InsertMany inserts measurements in one unordered insertMany (the
// throughput path: the server groups them into buckets). Every
// measurement is checked first; none is written if one fails.
func (c *Collection[M]) InsertMany(ctx context.Context, ms []M) error {
	if len(ms) == 0 {
		return nil
	}
	docs := make([]any, len(ms))
	for i, m := range ms {
		doc, err := c.marshal(m)
		if err != nil {
			return err
		}
		docs[i] = doc
	}
	_, err := c.coll.InsertMany(ctx, docs, options.InsertMany().SetOrdered(false))
	return err
}

// Find returns the measurements filter matches, decoded into M.
func (c *Collection[M]) Find(ctx context.Context, filter bson.D, opts ...options.Lister[options.FindOptions]) ([]M, error) {
	if filter == nil {
		filter = bson.D{}
	}
	cur, err := c.coll.Find(ctx, filter, opts...)
	if err != nil {
		return nil, err
	}
	out := []M{}
	err = cur.All(ctx, &out)
	return out, err
}

// RangeFilter returns {<meta>: meta, <time>: {$gte: from, $lt: to}}; a
// nil meta leaves the meta field out. A document meta value must be
// given with its fields in stored order (objects compare whole).
func (c *Collection[M]) RangeFilter(meta any, from, to time.Time) bson.D {
	f := bson.D{}
	if meta != nil && c.metaField != "" {
		f = append(f, bson.E{Key: c.metaField, Value: meta})
	}
	return append(f, bson.E{Key: c.timeField, Value: bson.D{{Key: "$gte", Value: from}, {Key: "$lt", Value: to}}})
}

// Range returns meta's measurements in [from, to), oldest first.
func (c *Collection[M]) Range(ctx context.Context, meta any, from, to time.Time) ([]M, error) {
	return c.Find(ctx, c.RangeFilter(meta, from, to), options.Find().SetSort(bson.D{{Key: c.timeField, Value: 1}}))
}

// UpdateMeta applies update to the meta field of every measurement
// filter matches (an updateMany: time series updates are never single)
// and returns how many were modified. CheckUpdate's restrictions are
// reported, wrapping ErrRestriction, before the server is asked.
func (c *Collection[M]) UpdateMeta(ctx context.Context, filter, update bson.D) (int64, error) {
	if filter == nil {
		filter = bson.D{}
	}
	if err := c.CheckUpdate(filter, update); err != nil {
		return 0, err
	}
	res, err := c.coll.UpdateMany(ctx, filter, update)
	if err != nil {
		return 0, err
	}
	return res.ModifiedCount, nil
}

// Delete deletes the measurements filter matches (any filter, MongoDB
// 7.0) and returns how many. It is not allowed in a multi-document
// transaction.
func (c *Collection[M]) Delete(ctx context.Context, filter bson.D) (int64, error) {
	if filter == nil {
		filter = bson.D{}
	}
	res, err := c.coll.DeleteMany(ctx, filter)
	if err != nil {
		return 0, err
	}
	return res.DeletedCount, nil
}
