// Package timeseries declares MongoDB time series collections from a Go
// measurement type: the server stores one document per measurement as
// compressed buckets of one series each. It checks, before the server
// does, the operations such a collection refuses, and explains which
// bucketing suits the data's rate.
//
// # When to use
//
// Use it for measurements keyed by time and written once: sensor
// readings, prices, metrics. Queries are by series (the meta value) and
// time range. Hand-roll buckets (pattern/bucket) instead when the grouping
// is not by time, when elements need their own updates or uniqueness, or
// when the bucket document itself is read (a page of comments).
//
// # Shape
//
//	type Reading struct {
//		TS     time.Time `bson:"ts" timeseries:"time"`
//		Sensor Sensor    `bson:"meta" timeseries:"meta"`
//		Temp   float64   `bson:"temp"`
//	}
//	readings, err := timeseries.New[Reading](db, "readings", timeseries.Config{Granularity: timeseries.Minutes})
//
// The tags name the timeField (a time.Time or bson.DateTime) and the
// optional metaField (any type but an array; not _id). Create sends
// createCollection with timeseries {timeField, metaField, granularity} or
// the custom bucketMaxSpanSeconds = bucketRoundingSeconds (MongoDB 6.3+),
// and expireAfterSeconds from Config.ExpireAfter; an existing time series
// collection with the same fields is kept, anything else of that name
// fails with ErrExists (no collection converts to or from time series, and
// the time and meta fields are fixed).
//
// # Bucketing and the fit check
//
// The server puts measurements of one meta value into a bucket whose
// start is rounded down to the rounding and which spans at most the
// span; it closes at 1000 measurements or 125 KiB. Granularity seconds
// spans 1 hour (rounded to a minute), minutes 1 day (to the hour), hours
// 30 days (to the day). FitRate (a declared interval and size) and
// FitSample (a sample of measurements) and FitCollection (the newest
// measurements of an existing collection) compute, for each option, how many
// measurements a bucket of one series holds, explain it line by line, and
// recommend the finest granularity whose buckets fill, or a custom span
// when none does. A granularity too fine for the rate makes many small
// buckets (Stats shows them closed on time rather than count); one too
// coarse widens each bucket's time range, so a range query unpacks more.
//
// # Write paths
//
// Insert and InsertMany (unordered: the server groups measurements into
// buckets) check each measurement first: a missing or zero time, or an
// array meta value, fails with ErrRestriction instead of the server's
// error halfway through a batch. UpdateMeta is the only update: an
// updateMany whose filter and operators name only the meta field
// (CheckUpdate); measurement fields cannot be updated, an update cannot
// be single or an upsert, a collection without a metaField cannot be
// updated. Delete takes any filter (MongoDB 7.0). Time series
// collections take no writes inside multi-document transactions, no
// validator, no $merge into them, no change streams.
//
// # Indexes
//
// EnsureIndexes creates {<meta>: 1, <time>: 1} (MongoDB 6.3+ also
// creates it for a new collection with a metaField) and Config.Indexes
// after CheckIndex: no unique indexes (code 72; a duplicate measurement,
// or _id, is accepted, so deduplicate before inserting), no text
// indexes, sparse and 2d only on the meta field, TTL indexes only with a
// partialFilterExpression on the meta field (use Config.ExpireAfter,
// which drops whole buckets once their newest measurement has expired).
// Secondary and partial indexes on measurement fields are allowed.
//
// # Queries
//
// Range(meta, from, to) is find({<meta>: meta, <time>: {$gte: from,
// $lt: to}}).sort({<time>: 1}): explain shows an IXSCAN of {meta, time}
// on the buckets and only the series' overlapping buckets fetched and
// unpacked. A document meta value matches whole, fields in stored order;
// filter on "meta.sensorId" to match a part.
//
// # Mistakes
//
//   - Relying on a unique index or on _id to drop duplicate
//     measurements: neither exists on a time series collection.
//   - Updating a measurement: only the meta field can change; delete and
//     reinsert instead.
//   - A granularity finer than the data's rate: buckets of a handful of
//     measurements, no compression gain (see FitRate).
//   - A metaField that varies per measurement (a reading's value): every
//     measurement opens its own bucket.
//   - Expecting a TTL to delete each measurement on time: whole buckets
//     expire when their newest measurement does.
//
// https://www.mongodb.com/docs/manual/core/timeseries-collections/
package timeseries
