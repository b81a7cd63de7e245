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
// cannot compare an array's length with a number; openedAt is the time the
// bucket was opened (Config.Clock) and orders an owner's buckets.
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
// {count: {$lte: Size-k}}.
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
// read, the keyset and the prefix of the append filter, and, when
// Config.ElementID is set, {owner: 1, "elements.<id>": 1} (multikey) for
// Find, Replace and Update.
//
// # Verify and Repair
//
// count copies len(elements). Verify reports buckets whose count differs
// from the array length (for example after a $pull written without
// $inc: {count: -1}), whose array exceeds Size, or whose shape is broken;
// Repair sets count to the array length with a conditional update that
// loses no concurrent append. Oversized buckets are reported, not split.
//
// # The mistake it guards against
//
// Putting count in $setOnInsert next to $inc (error 40), unbounded arrays
// (one document per owner growing to 16 MiB), paging with skip (each page
// slower than the last; keyset instead), strict $lt keysets that skip
// buckets opened in the same millisecond, and reads that assume exactly
// one open bucket.
//
// Following https://www.mongodb.com/docs/manual/data-modeling/design-patterns/group-data/bucket-pattern/
package bucket
