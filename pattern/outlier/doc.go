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
// Store[P, E] is generic over the user's parent type P (a struct with bson
// tags, or bson.D) and the element type E; Get and GetAll return the
// parent decoded into P. Create inserts a parent with count 0, an empty
// list and hasOverflow false. A parent the application inserted itself
// works too: {count: {$lt: Threshold}} does not match a document without
// the counter, so when both updates below miss and the parent turns out to
// have no counter, Append initialises it with one pipeline update
// conditional on the counter still missing ({count: $size of the list it
// may hold, list: [] if none, hasOverflow: false if none}) and tries
// again. Append runs
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
// return ErrParentNotFound (no such document) or ErrNoCounter (count not
// a number), or to initialise a parent without a counter, instead of
// mistaking any of them for "full". The flag and the
// counter move before the overflow append, so a crash in between leaves a
// counter one too high (Verify reports it, Repair fixes it), never an
// element that reads cannot see. Concurrent Appends to one parent are
// safe: each conditional update is atomic, the embedded array never passes
// Threshold, and overflow appends have the bucket package's guarantees.
//
// Remove takes one element out (a refund, an unlike; Config.ElementID
// names its id). An embedded element goes in one pipeline update of the
// parent that cuts the first element with the id out of the list and
// lowers count by one in the same write. Otherwise the element is removed
// from its overflow bucket (bucket.Store.Remove: one update of that
// bucket, its count and bounds kept) and the parent's count then lowered
// with $inc: -1. Replace rewrites one element in place, in the list with
// the positional operator or in its bucket. A removal frees an embedded
// slot: later appends embed again while count is below Threshold, so the
// list never passes it; emptied overflow buckets stay (and the flag with
// them) and take later overflow.
//
// # Bulk: AppendMany and ApplyMany
//
// AppendMany adds many elements to one parent in a few round trips: it
// reads the counter, then one update conditional on the counter still
// having that value (a compare-and-set, retried a bounded number of times
// under concurrent Appends) pushes with $each the elements that fit under
// Threshold, adds the batch's length to count and, when some do not fit,
// sets hasOverflow; the rest go to overflow, the first len%Size through
// bucket.Store.AppendMany (one upsert into an open bucket with room, or a
// new one) and the others as full buckets through bucket.Store.Load (one
// insertMany). A Feed's ApplyMany (pattern.BatchApplier, used by
// Source.InsertMany) groups each run of consecutive inserts per parent
// into one AppendMany and applies every other change one by one, in
// order: 10,000 purchases of one book cost about seven round trips
// instead of several per purchase.
//
// # Composition: Feed
//
// Store.Feed makes the Store a pattern.Dependent of a source collection
// (purchases → book.buyers): each source document is one element of the
// parent its parent field names, built by a function of the user's.
// pattern.NewSource(purchases, feed) then maintains the buyers with every
// purchase write: an insert appends, a delete removes, an update that
// changes the parent (a move) removes from the old and appends to the new,
// and one that changes only the element replaces it in place. Check (the
// Dependent's) runs Verify or Repair and compares each parent's elements
// with its source documents, appending what is missing, removing what has
// no source or is there twice, replacing what differs, and reports source
// documents whose parent does not exist.
//
// # Atomicity
//
// Append into the list, Remove from the list, Replace and the
// initialisation are single-document updates, atomic anywhere. Append
// into overflow and Remove from overflow write two documents (parent
// counter, overflow bucket). Remove and AppendMany run them in
// pattern.Atomic: in one transaction where the deployment has them.
// Append and, without transactions, Remove and AppendMany order them
// so that a failure leaves at worst a counter too high (by
// one, or by a batch's overflow), which Verify reports and Repair fixes;
// an element is never lost or hidden. A Feed's Apply is one Store write per side; a
// move without transactions may fail between its removal and its append,
// which Check with repair puts right (pattern.Source runs the source
// write and every Apply in one transaction where it can).
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
// Verify (and Check of a Feed) checks every parent: count equals the embedded length plus the
// overflow total, hasOverflow equals the presence of overflow buckets, the
// embedded list holds at most Threshold elements; and it reports overflow
// buckets whose parent is gone and the overflow buckets' own problems.
// Repair fixes counters and flags (adopting parents created without a
// counter), with updates conditional on what it read, and repairs the
// overflow buckets' counts, and moves the excess of a list past Threshold
// to new overflow buckets in pattern.Atomic (with transactions, one
// commit; without, inserted first and the list then trimmed only if
// unchanged, so a crash duplicates and never loses). It is meant for quiet parents: an Append in
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
