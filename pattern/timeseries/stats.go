package timeseries

import (
	"context"
	"reflect"

	"go.mongodb.org/mongo-driver/v2/bson"
)

// typeFor returns M's reflect.Type.
func typeFor[M any]() reflect.Type { return reflect.TypeFor[M]() }

// Stats is what collStats says of a time series collection's buckets.
type Stats struct {
	Measurements    int64   // countDocuments (collStats' count is of buckets)
	Buckets         int64   // timeseries.bucketCount
	PerBucket       float64 // measurements per bucket
	AvgBucketSize   int64   // timeseries.avgBucketSize, bytes
	StorageSize     int64   // storageSize, bytes
	TotalIndexSize  int64   // totalIndexSize, bytes
	ClosedOnCount   int64   // timeseries.numBucketsClosedDueToCount
	ClosedOnSize    int64   // timeseries.numBucketsClosedDueToSize
	ClosedOnTime    int64   // timeseries.numBucketsClosedDueToTimeForward + TimeBackward
	OpenedOnNewMeta int64   // timeseries.numBucketsOpenedDueToMetadata
}

// Stats runs collStats. Buckets closed on time far more often than on
// count say the granularity is too fine for the data's rate (see FitRate).
func (c *Collection[M]) Stats(ctx context.Context) (Stats, error) {
	var r bson.Raw
	if err := c.db.RunCommand(ctx, bson.D{{Key: "collStats", Value: c.coll.Name()}}).Decode(&r); err != nil {
		return Stats{}, err
	}
	i := func(keys ...string) int64 {
		v, _ := r.Lookup(keys...).AsInt64OK()
		return v
	}
	s := Stats{
		Buckets:         i("timeseries", "bucketCount"),
		AvgBucketSize:   i("timeseries", "avgBucketSize"),
		StorageSize:     i("storageSize"),
		TotalIndexSize:  i("totalIndexSize"),
		ClosedOnCount:   i("timeseries", "numBucketsClosedDueToCount"),
		ClosedOnSize:    i("timeseries", "numBucketsClosedDueToSize"),
		ClosedOnTime:    i("timeseries", "numBucketsClosedDueToTimeForward") + i("timeseries", "numBucketsClosedDueToTimeBackward"),
		OpenedOnNewMeta: i("timeseries", "numBucketsOpenedDueToMetadata"),
	}
	n, err := c.coll.CountDocuments(ctx, bson.D{})
	if err != nil {
		return s, err
	}
	s.Measurements = n
	if s.Buckets > 0 {
		s.PerBucket = float64(s.Measurements) / float64(s.Buckets)
	}
	return s, nil
}
