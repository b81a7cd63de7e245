// Package bucket implements MongoDB's bucket pattern: instead of one
// document per element (one trade, one reading, one log line), an owner's
// elements are grouped into bucket documents of at most Size elements, so a
// page of Size elements is one document read instead of Size.
//
// # When to use
//
// Use it when elements belong to an owner, arrive over time, are read in
// pages newest first, and are rarely changed one by one: a customer's
// trades, a sensor's readings, a user's notifications. For timestamped
// measurements that need no per-element correction, MongoDB's time series
// collections bucket on the server and are usually the better choice.
//
// # The shape
//
// With the default field names (see Config) a bucket of trades is
//
//	{ _id: ObjectId("…"), owner: 123, openedAt: ISODate("2025-05-01T09:30:00Z"),
//	  count: 3, elements: [ {id: "t1", …}, {id: "t2", …}, {id: "t3", …} ] }
//
// count is len(elements), kept in the document because an update filter
// cannot compare an array's length with a number; openedAt orders an
// owner's buckets. With Config.Time (the date field inside each element,
// a tick's "at") a bucket also carries the bounds of its elements' times,
//
//	{ …, openedAt: ISODate("2019-03-01T09:00Z"), minTime: ISODate("2019-03-01T09:00Z"),
//	  maxTime: ISODate("2019-03-01T09:49Z"), count: 50, elements: [ {at: …, px: …}, … ] }
//
// and openedAt is the time of the first element(s) the bucket received,
// taken from the elements, so a history loaded today keeps its own dates;
// without Time, openedAt is the clock's time at the append (Config.Clock).
//
// # Writes
//
// Append is one update with upsert:
//
//	updateOne({owner: 123, count: {$lt: Size}},
//	          {$push: {elements: e}, $inc: {count: 1}, $setOnInsert: {openedAt: now}},
//	          {upsert: true})
//
// It pushes into an open bucket (count < Size) when one exists and
// otherwise inserts a new one, seeded from the filter's equality part
// (owner) with count 1 from $inc and a one-element array from $push. The
// filter's count condition is a range, so it is not copied into the new
// document, and count must not appear in $setOnInsert as well: the same
// path in two operators fails with ConflictingUpdateOperators (40).
// AppendMany pushes k elements with $each under the filter
// {count: {$lte: Size-k}}. With Config.Time the same update also carries
// {$min: {minTime: t}, $max: {maxTime: t}} (t the smallest and largest
// time of the pushed elements), which create the bounds on insert and
// widen them otherwise, and openedAt comes from the elements.
//
// The filter is served by the append index {owner: 1, count: 1}: its
// bounds on count, [MinKey… Size-k], stop below the full buckets, so an
// append examines the owner's open buckets only (usually one, none when
// all are full), whatever the length of the history. On {owner: 1,
// openedAt: -1} alone it would examine every bucket of the owner whenever
// none is open, which every full AppendMany batch is.
//
// Load bulk-loads a history: it inserts the elements as new buckets of
// Size with one insertMany, bounds and openedAt computed, without looking
// for an open bucket.
//
// Remove deletes one element (a refund, an unlike) in one update of the
// bucket holding it: an update pipeline that cuts the first element with
// the id out of the array and sets count to $size of what is left and
// the bounds to $min/$max of the remaining times, from the bucket as it is
// at that moment, so concurrent appends and removes keep count and bounds
// exact. An emptied bucket stays (count 0, no bounds) and takes the next
// appends. Replace with Config.Time uses the same kind of pipeline, so the
// bounds follow the element's new time; Update may not change the time.
//
// # Reads
//
// Page reads an owner's buckets newest first with keyset pagination on
// openedAt: find({owner, openedAt: {$lte: t}, _id: {$nin: seen}})
// .sort({openedAt: -1}).limit(1). The index {owner: 1, openedAt: -1}
// provides both the equality and the order, so explain shows an IXSCAN on
// it and no SORT stage. Two buckets opened in the same millisecond share
// an openedAt; the cursor therefore carries the _ids already read at its
// openedAt instead of using a strict $lt, so no bucket is skipped or read
// twice. The price: _id is not in the index, so the server fetches the
// boundary bucket again to drop it (explain: docsExamined 2, nReturned 1
// for a keyset page; 1 and 1 for the newest page). Find returns one element with a positional projection
// ({"elements.$": 1}); Replace rewrites one element with the positional
// operator ("elements.$") and Update changes fields of one element with a
// filtered positional operator ("elements.$[e]") and arrayFilters.
//
// Range returns an owner's elements with from <= time < to. It reads
// find({owner, maxTime: {$gte: from}, minTime: {$lt: to}}): on the time
// index {owner: 1, maxTime: 1, minTime: 1} both conditions are index
// bounds, so only the buckets overlapping the range are fetched (a
// one-hour range over 2,000 buckets of 50 one-second ticks fetches 72);
// the keys scanned are those of the buckets ending after from.
//
// # Two open buckets
//
// No index can say "at most one open bucket per owner", so two appends
// that find no open bucket at the same moment both insert one: the owner
// then has two open buckets (a transient double). Nothing is lost or
// counted twice: the filter count < Size still caps every bucket, later
// appends go to either open bucket (without the sort option of MongoDB
// 8.0's updateOne the server picks one) until both are full, and only then
// is a new bucket opened. Page merges a run of open buckets at the head of
// the history into one page, so readers see the newest elements together.
// Elements are ordered within a bucket; across two doubles they are
// ordered bucket by bucket, not interleaved by arrival. On the embedded
// engine writes are serialised and doubles do not happen; the tests build
// them directly.
//
// # Indexes
//
// EnsureIndexes creates {owner: 1, openedAt: -1}, which serves the page
// read and the keyset, {owner: 1, count: 1} for the append filter, when
// Config.ElementID is set {owner: 1, "elements.<id>": 1} (multikey) for
// Find, Replace, Update and Remove, and when Config.Time is set
// {owner: 1, maxTime: 1, minTime: 1} for Range.
//
// # Verify and Repair
//
// count copies len(elements) and the bounds copy the elements' times.
// Verify reports buckets whose count differs from the array length (for
// example after a $pull written without $inc: {count: -1}), whose bounds
// are not the smallest and largest element time, whose array exceeds
// Size, or whose shape is broken (with Config.Time: an element without a
// date). Repair recomputes count and bounds with one pipeline update of
// the bucket, from its array at that moment, which loses no concurrent
// write, and splits oversized buckets.
//
// # Atomicity
//
// Every verb (Append, AppendMany, Remove, Replace, Update) writes one
// bucket in one update and is atomic on any deployment. The one write that
// touches several documents is Repair's split of an oversized bucket (the
// excess moves to new buckets). It runs in pattern.Atomic: in a
// transaction where the deployment has them (a replica set), so the new
// buckets and the trimmed original commit together. Without transactions
// (a standalone server, the embedded engine today) the new buckets are
// inserted first and the original is trimmed only if it is still exactly
// as read (otherwise the new buckets are deleted and the next Repair tries
// again); a crash between the two leaves the excess elements in both
// buckets, duplicated but never lost.
//
// # The mistake it guards against
//
// Putting count in $setOnInsert next to $inc (error 40), unbounded arrays
// (one document per owner growing to 16 MiB), paging with skip (each page
// slower than the last; keyset instead), strict $lt keysets that skip
// buckets opened in the same millisecond, reads that assume exactly one
// open bucket, an append filter whose index reaches every bucket of the
// owner, a clock time where the elements' own time is meant, and a $pull
// that does not fix count and bounds in the same update.
//
// Following https://www.mongodb.com/docs/manual/data-modeling/design-patterns/group-data/bucket-pattern/
package bucket
