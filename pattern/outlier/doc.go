// Package outlier implements MongoDB's outlier pattern: a parent document
// embeds its list (a book's buyers, a post's likes) up to a threshold, and
// the rare parent whose list grows past it — the outlier — sends the rest
// to an overflow collection and says so with a flag. Typical parents stay
// one-document reads; outliers cost a second query, paid by them alone.
//
// # When to use
//
// Use it when most lists are short and a few are huge, and reads of the
// parent usually need the list or its first part: bestseller books among
// ordinary ones, celebrity accounts among ordinary users. When every list
// is long, reference the elements (or bucket them, package bucket) for all
// parents instead; when none is, plain embedding is enough.
//
// # The shape
//
// With the default names (see Config), a parent and an overflow bucket:
//
//	{ _id: 7, title: "Invisible Cities", count: 812, hasOverflow: true,
//	  items: [ "user1", …, "user50" ] }                   // at most Threshold
//	{ _id: ObjectId("…"), parentId: 7, openedAt: ISODate("…"), count: 762,
//	  items: [ "user51", … ] }                            // overflow, bucketed
//
// count is the authoritative total, embedded and overflow together, and
// hasOverflow says whether overflow buckets exist. The overflow collection
// is itself bucketed with package bucket (owner field parentId, buckets of
// Config.Overflow.Size), so even an outlier reads its overflow in a few
// documents.
//
// # Writes
//
// Create inserts a parent with count 0, an empty list and hasOverflow
// false. The counter must exist: {count: {$lt: Threshold}} does not match
// a document without it, and such a parent would send every element to
// overflow. Append runs
//
//	updateOne({_id: p, count: {$lt: Threshold}}, {$push: {items: e}, $inc: {count: 1}})
//
// and, when that matches nothing, the parent is full or missing, or its
// counter is. It then runs
//
//	updateOne({_id: p, count: {$gte: Threshold}}, {$set: {hasOverflow: true}, $inc: {count: 1}})
//
// and appends e to the parent's overflow buckets. Only when this second
// conditional update matches nothing either does it read the parent, to
// return ErrNoParent (no such document) or ErrNoCounter (count missing or
// not a number) instead of mistaking either for "full". The flag and the
// counter move before the overflow append, so a crash in between leaves a
// counter one too high (Verify reports it, Repair fixes it), never an
// element that reads cannot see. Concurrent Appends to one parent are
// safe: each conditional update is atomic, the embedded array never passes
// Threshold, and overflow appends have the bucket package's guarantees.
//
// # Reads
//
// Get reads the parent alone (one document, the typical case's whole
// read); GetAll adds the overflow, and queries the overflow collection only
// when hasOverflow is true: find({parentId: p}).sort({openedAt: 1}) on the
// index {parentId: 1, openedAt: -1}.
//
// # Indexes
//
// EnsureIndexes creates the overflow index {parentId: 1, openedAt: -1}.
// Parents are read by _id.
//
// # Verify and Repair
//
// Verify checks every parent: count equals the embedded length plus the
// overflow total, hasOverflow equals the presence of overflow buckets, the
// embedded list holds at most Threshold elements; and it reports overflow
// buckets whose parent is gone and the overflow buckets' own problems.
// Repair fixes counters and flags (adopting parents created without a
// counter), with updates conditional on what it read, and repairs the
// overflow buckets' counts. It is meant for quiet parents: an Append in
// flight between its two writes can make Repair miscount that parent by
// one, which the next Verify shows and the next Repair fixes.
//
// # The mistakes it guards against
//
// Parents without a counter (every element silently diverted), treating
// "no such parent" as "full", reading the overflow for every parent, and
// $addToSet on the embedded list as a dedupe: it cannot see the overflow,
// so this package appends and leaves uniqueness to the caller.
//
// Following https://www.mongodb.com/docs/manual/data-modeling/design-patterns/group-data/outlier-pattern/
package outlier
