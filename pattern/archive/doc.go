// Package archive implements the archive pattern: documents past an age
// move from the live collection to an archive collection (in the same or
// another database), so the working set stays small while old data stays
// queryable, and, optionally, on to files in object storage.
//
// # When to use
//
// Use it when most reads touch recent documents and old ones are read
// rarely but must not be lost: orders after a few years, closed tickets,
// finished jobs. A TTL index deletes old documents but keeps nothing; an
// archive keeps them, self-contained, in a collection with its own
// indexes, or as compressed files when they need not stay queryable (the
// cheapest tier).
//
// # Shape
//
//	shop.orders (live)              { _id: 42, customerId: "c1", createdAt: ISODate("2024-03-01"), total: 90 }
//	archive.orders (archive)        { _id: 42, customerId: "c1", createdAt: ISODate("2024-03-01"), total: 90,
//	                                  customer: { _id: "c1", name: "Ada" } }        // Config.Embed resolved
//	shop.formwork_jobs (progress)   { _id: "archive shop.orders", state: "running", cutoff: ISODate("2024-06-01"),
//	                                  next: ISODate("2024-03-04"), slices: 12, copied: 5400, deleted: 5400, … }
//	object storage (Export)         archive/orders/2024/03/part-0.bson.zst, part-1…, manifest.json
//
// Archiver[T] is generic over the user's document type (bson tags
// respected; bson.D works): Get reads a T from the live collection or
// the archive, Archived reads archived Ts by date. Config.Field is the
// date that ages documents; a document whose Field is missing or not a
// BSON date is never archived (the range filter matches dates only).
//
// # Write paths
//
// Run computes the cutoff once (Now - Age, in milliseconds) and records
// it before moving anything. Then, slice by slice, oldest first (each
// slice starts at the oldest remaining document, truncated to a multiple
// of Config.Slice, and ends Slice later or at the cutoff):
//
//	slice:  f = {createdAt: {$gte: s, $lt: min(s+Slice, cutoff)}} (+ Config.Filter)
//	copy:   db.orders.aggregate([{$match: f}, {$lookup …}, {$set …},        // Embed, if any
//	          {$merge: {into: {db: "archive", coll: "orders"}, on: "_id",
//	                    whenMatched: "replace" | "keepExisting", whenNotMatched: "insert"}}])
//	delete: db.orders.deleteMany(f)                                         // the same f, the same cutoff
//	        (ProvenDelete: the slice's _ids read back from the archive, 1000 per deleteMany)
//	record: db.formwork_jobs.updateOne({_id}, {$inc: {slices: 1, copied: n, deleted: d}, $set: {next: end}})
//
// and finally sets the record's state to "done".
//
// # Kill at any point
//
// Nothing is lost or duplicated wherever a run stops (tests kill runs
// between copy and delete and at random instants, rerun, and check that
// live and archive partition the original documents exactly):
//
//   - the cutoff of a stopped run is read back from the record, never
//     recomputed, so the rerun cannot delete documents it did not copy
//     because the clock moved;
//   - a copy is idempotent: $merge on _id replaces (or keeps) a document
//     already archived, never adds a second one;
//   - a delete only follows its slice's copy, with the same filter;
//   - the rerun starts from the oldest document still live, so a slice
//     deleted but not recorded is simply not found again.
//
// No step needs a transaction. Two hazards remain, both documented
// choices: a document written into a slice's range between its copy and
// its delete (a backdated write) is deleted uncopied unless ProvenDelete
// is set; a document edited between copy and delete is archived as it
// was copied (keep slices short; with Replace, a rerun after a kill
// copies the current version).
//
// KeepExisting copies with an upsert of {$setOnInsert: doc}, as MongoDB
// does, so the archived copy's fields after _id come out in name order;
// Replace keeps the document byte for byte.
//
// # Export and restore
//
// Export writes one calendar month of the archive to a Store (DirStore
// for a directory; an S3 or GCS bucket fits the two-method interface) as
// <db>/<coll>/<yyyy>/<mm>/part-N.bson.zst (concatenated BSON, zstd) and
// then manifest.json with each part's document count, sizes and SHA-256.
// Restore checks every part against the manifest (ErrCorrupt) and writes
// its documents with replace-or-insert on _id, so it can be run twice.
//
// # Indexes
//
// EnsureIndexes creates {<Field>: 1} on the live collection (the oldest
// search is one indexed findOne, the copy's $match and the delete are
// index range scans over the slice only: explain shows IXSCAN with the
// slice's [from, to) bounds) and on the archive (Archived, Export and
// ProvenDelete).
//
// # Queries
//
//	recent:   db.orders.find({customerId: "c1"})                    // live only: the small working set
//	history:  db.getSiblingDB("archive").orders.find({createdAt: {$gte: …, $lt: …}})
//	one:      Get(id): live first, then the archive
//	progress: db.formwork_jobs.findOne({_id: "archive shop.orders"})
//
// # Check
//
// Check(repair=false) counts the live documents older than the last
// run's cutoff (a run stopped midway, or a backdated write since) and
// how many of them are already archived; Check(repair=true) resumes the
// stopped run, or runs again with the recorded cutoff. Plan is the dry
// run: the cutoff and per-slice counts a Run would use, nothing written.
//
// # Trade-off
//
// A run costs a few commands per slice (findOne, count, aggregate with
// $merge, delete, record update) instead of streaming every document
// through the client: on the embedded engine (bench_test.go) 10,000
// orders in 30-day slices take 499 round trips and bring 198 small
// documents (slice starts and progress records) to the client, where a naive read-insert-delete script takes 13
// round trips but ships all 10,000 documents out and back, and is
// about 2x faster on the embedded engine, whose $merge writes one
// document at a time; the naive script loses documents when it is
// killed or reruns with a new cutoff.
//
// # Mistakes it guards against
//
// Recomputing the cutoff between copy and delete (documents deleted
// unarchived); a rerun that duplicates (insert instead of $merge on
// _id); one giant copy and one giant delete (slices bound each step);
// archived documents that point at customers who no longer exist (Embed
// resolves references into the copy); an archive job nobody can tell has
// finished (the progress record); export files without a manifest or
// checksums; a TTL index standing in for an archive.
//
// Following https://www.mongodb.com/docs/manual/data-modeling/design-patterns/archive/
// and https://www.mongodb.com/docs/manual/reference/operator/aggregation/merge/
package archive
