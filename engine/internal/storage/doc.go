// Package storage keeps the catalog, the documents and their index entries
// in Pebble.
//
// Key layout (all integers big-endian so that byte order is numeric order):
//
//	'c' ns                          catalog entry of collection ns (BSON)
//	'm' name                        store metadata (next collection id)
//	'r' collID(8) recordID(8)       one document
//	'i' collID(8) indexID(4) key    unique index entry, value recordID(8)
//	'i' collID(8) indexID(4) key rid  non-unique index entry, empty value
//	'S' sessionID                   a session's newest retryable write or
//	                                transaction and its outcome (BSON)
//	'p' ts(8) index(4) kind(1)       change stream pre-/post-image (BSON)
//
// Invariants:
//
//	I1. A document and all of its index entries change in one Pebble batch;
//	    a reader never sees a document without its entries or the reverse.
//	I2. Writes are serialised by Store's write lock, so a Writer sees every
//	    committed write and its own pending ones (an indexed batch).
//	I3. A committed batch is synced to the WAL before Write returns when the
//	    store is on disk, so an acknowledged write survives a crash. The
//	    batch is applied, and so visible, before that sync: readers and the
//	    next writer may see a write that is not yet durable (as MongoDB's
//	    "local" read concern sees writes not yet journaled). Nothing is
//	    lost by it: the WAL is one ordered log, so the sync that
//	    acknowledges a later write also covers every write it read.
//	I4. Record ids grow monotonically within a collection and are never
//	    reused while the process runs; their order is $natural order.
//	I5. Readers work on a Snapshot: a fixed point in time that later writes
//	    do not change, which is what cursors need across getMore.
//	I6. A new multikey path is published in the catalog before the batch
//	    that needs it commits, and readers take their snapshot before they
//	    read the catalog, so a plan never treats an index as non-multikey
//	    for data that is multikey. (Other catalog changes publish after
//	    the commit: a new index is never visible before its entries.)
//	I7. The catalog is an immutable map behind an atomic pointer: readers
//	    load it without a lock, writers (under the write lock) publish a
//	    changed copy. Catalog reads never wait for commits.
//	I8. Group commit: Write applies its batch under the write lock and
//	    waits for the WAL sync after releasing it, so writers that commit
//	    while a sync is in progress share the next one. Snapshots take no
//	    lock that writers hold.
//	I9. A Writer's unique-key probe is exact without Batch.Get: an entry
//	    is owned by what the batch staged for that key (set or deleted,
//	    tracked per key) or else by the committed data, read through one
//	    iterator per index that stays valid because I2 keeps committed
//	    data fixed while the Writer runs. Collections whose entries the
//	    batch range-deleted or bulk-built fall back to Batch.Get.
//	I10. An index build (IndexBuild, indexbuild.go) reads a snapshot
//	    without wmu and writes its entries under an index id the catalog
//	    reserves but does not list, so no reader sees them; writes made
//	    meanwhile are recorded (the side table) and re-indexed before the
//	    index is published under wmu. Open removes entries of index ids
//	    no catalog entry lists (a build a crash interrupted).
//	I11. On disk, a write is refused with OutOfDiskSpace before it reaches
//	    Pebble while the free space is under the reserve or a background
//	    write met ENOSPC (diskfull.go): a WAL write that fails leaves
//	    Pebble unusable, so it must never be attempted on a full disk.
//	I12. Every logged write (all but the local database) adds its
//	    local.oplog.rs entry to the batch that makes the write: the flush
//	    runs under the write lock after fn succeeds, so entries commit
//	    with their writes, their ts (record id = PackTS(ts)) grow in
//	    commit order, and no entry becomes visible before an earlier
//	    one. Truncation removes only the oldest entries and publishes its
//	    truncation point before it removes them.
//
// Multi-document transactions (Txn, see txn.go for T1–T5) read a
// snapshot plus their own writes, stage each statement through an
// ordinary Writer into a private batch under the write lock, and commit
// by replaying what they wrote through Store.Write in one batch.
//
// Storage returns Go errors and *mongoerr.Error values for conditions a
// client must see (DuplicateKey, NamespaceExists, NamespaceNotFound). It
// does not import the query or command packages.
package storage
