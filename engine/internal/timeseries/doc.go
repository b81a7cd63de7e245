// Package timeseries holds what MongoDB's time series collections are made
// of, apart from the catalog and the commands: the collection options and
// their validation, the bucket documents measurements are stored in (their
// closing rules and their compressed columns), the unpacking of a bucket
// back into measurements, and the translation of measurement-level
// predicates and index keys into bucket-level ones.
//
// It imports only the BSON helpers (bsonkit, mongoerr); agg unpacks
// buckets with it and command routes writes through it. It must not import
// storage, plan, agg or command.
//
// Invariants:
//
//	I1. A bucket holds measurements of one meta value whose times lie in
//	    [control.min.<time>, control.min.<time> + bucketMaxSpanSeconds),
//	    control.min.<time> rounded down to bucketRoundingSeconds; at most
//	    MaxCount measurements and about MaxSize bytes of them.
//	I2. control.min and control.max bound every measurement's field (by
//	    BSON order) and a field holds values of one canonical type within
//	    a bucket (a new type closes the bucket), so bucket-level predicates
//	    on control.min/max never exclude a bucket holding a match.
//	I3. Unpack(Build(ms)) returns ms in insertion order, field for field,
//	    whether the bucket is open (version 1) or compressed (version 2).
//
// https://www.mongodb.com/docs/v7.0/core/timeseries-collections/
package timeseries
