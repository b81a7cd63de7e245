// Package subset implements the subset pattern: a parent document (a
// product) embeds a bounded copy of its newest N children (reviews),
// while the child collection keeps all of them. The hot page reads one
// document; "show all" pages through the child collection.
//
// # When to use
//
// Use it when a parent has an unbounded number of children, the page
// that shows the parent shows only the few newest, and the full list is
// read rarely. Embedding all children instead grows the parent toward the
// 16 MiB limit and makes every read carry cold data; referencing only
// costs a second query (and a sort) on every page view.
//
// # Shape
//
//	products (hot): newest N copies, newest first
//	{ _id: "p1", name: "Super Widget",
//	  recentReviews: [ { _id: "r9", at: ISODate("2019-02-18"), stars: 5, text: "…" }, … ] }
//	reviews (cold, complete)
//	{ _id: "r9", productId: "p1", at: ISODate("2019-02-18"), stars: 5, text: "…" }
//
// Window[P, C] is generic over the user's parent and child types (bson
// tags respected; bson.D works too): Parent reads a P with its window
// decoded, Recent the window alone as []C, Page whole children as C.
// Config.Parent names the child field holding the parent's _id
// ("productId"), Config.Time the field that orders children (newest is
// largest), Config.Array the parent's array ("recentReviews") and
// Config.Size the N kept. A copy is the child without Config.Parent, or
// only _id, Time and Config.Fields when Fields is set, in the child's
// field order.
//
// # The time rule
//
// Every child's Time holds a value of Config.TimeType: a BSON date unless
// set otherwise (a string, timestamp, ObjectID or number; the four
// numeric types count as one, as MongoDB compares them by value).
// MongoDB sorts values of different types by type first, so a child with
// a string date among dates would sort below them all and never enter
// the window, with the index, the window and a naive check all agreeing.
// Add, AddMany, Edit, Move and Apply refuse such a child with ErrTimeType
// (Add and AddMany before writing, Edit and Move by undoing the edit);
// windows and pages are built only from children that keep the rule
// ({<Time>: {$gte: <least value of the type>}}, an index range), and
// Verify reports any child that breaks it.
//
// # Trade-off
//
// One read per page view instead of two, paid for with a second write on
// every add, on every edit of an embedded child, and a refill query on
// every delete of one. The child collection is the source of truth: it is
// always written first, and Check/Repair (or Refill for one parent)
// rebuild any window from it.
//
// # Write paths
//
//	add:      db.reviews.insertOne(r)
//	          db.products.updateOne({_id: p, "recentReviews._id": {$nin: [r._id]}},
//	            {$push: {recentReviews: {$each: [copy], $sort: {at: -1, _id: -1}, $slice: N}}})
//	add many: db.reviews.insertMany(rs), then per parent p, one
//	          db.products.updateOne({_id: p, "recentReviews._id": {$nin: ids}},
//	            {$push: {recentReviews: {$each: copies, $sort: {at: -1, _id: -1}, $slice: N}}})
//	edit:     db.reviews.findOneAndUpdate({_id: r, $expr: {$eq: ["$$ROOT", before]}}, u, {returnDocument: "after"})
//	          db.products.updateOne({_id: p, recentReviews: copyBefore}, {$set: {"recentReviews.$": copyAfter}})
//	          (a new time refills; a new parent is a move)
//	move:     the edit of the parent field, then the add's $push into the new
//	          parent's window and a refill of the old one's
//	delete:   db.reviews.findOneAndDelete({_id: r}), then refill:
//	          db.reviews.find({productId: p, at: {$gte: <min date>}}).sort({at: -1, _id: -1}).limit(N)
//	          db.products.updateOne({_id: p, recentReviews: <array as read>}, {$set: {recentReviews: top}})
//	delete parent (Config.OnParentDelete):
//	          Refuse:  countDocuments({productId: p}, {limit: 1}) == 0, then deleteOne({_id: p})
//	          Cascade: deleteOne({_id: p}), then deleteMany({productId: p})
//	          Detach:  deleteOne({_id: p}); the reviews stay
//
// The $push sign rule: $push inserts, then sorts, then slices. With the
// array sorted newest first ($sort {at: -1}) a positive $slice N keeps the
// first N, the newest; a negative $slice -N would keep the N oldest, the
// classic bug. (Sorting ascending pairs with $slice -N.) This package
// sorts descending with _id as tie-breaker and slices +N, so the array
// is in exactly the order of the "show all" pages.
//
// # Concurrency
//
// Every window write is one single-document update; those that depend on
// a read compare and set:
//
//   - The refill is a compare-and-set on the whole array, read before the
//     children: if any other write changed the array between the read
//     and the $set, the $set matches nothing and the refill starts again.
//   - An add pushes only copies not there yet ($nin), so an add racing a
//     refill that already embedded its child, or a replayed Apply,
//     embeds nothing twice.
//   - An edit reads the child and updates it only while unchanged, so it
//     knows its exact before and after images; the copy is replaced only
//     where the window holds the before image, and otherwise (concurrent
//     edits of one child applied out of order) the window is refilled
//     from the child as it now is.
//   - After its $push an add (or move) reads the child again: an edit or
//     delete that landed between the child's write and the push found no
//     copy to change, so when the child is gone or its copy changed, the
//     window is refilled. (Not inside a transaction, where that gap does
//     not exist, and not for AddMany's batches: a bulk load that races
//     edits of the children it is loading relies on Check/Repair.)
//   - A refill that wrote reads the children it embedded once more, and
//     refills again when one changed or went away meanwhile: an edit of
//     a child outside the window writes no window, so the refill's
//     compare-and-set alone cannot see it.
//   - With transactions, a refill and an edit of a child outside the
//     window still write different documents, and snapshot isolation
//     lets both commit (write skew). So once Edit, Move or Delete has
//     committed, it settles (Window.Settle, a pattern.Settler): it reads
//     the window again outside the transaction and refills it when it
//     holds a stale copy. A Source settles its writes the same way;
//     Source.Applied called inside the caller's own transaction leaves
//     that to the caller, through Source.Settled after the commit.
//   - An Add racing a DeleteParent finds no parent for its push and takes
//     its child back (ErrParentNotFound), so no child outlives its parent
//     under Refuse or Cascade.
//
// # Composition
//
// Window implements pattern.Dependent (and pattern.BatchApplier): a
// pattern.Source on the child collection maintains the window together
// with other copies derived from the same children (a running rating),
// one call per logical write:
//
//	reviews := pattern.NewSource[Review](db.Collection("reviews"), window, rating)
//	reviews.Insert(ctx, r)                                      // add
//	reviews.InsertMany(ctx, rs)                                 // bulk load (ApplyMany)
//	reviews.Update(ctx, id, bson.M{"$set": bson.M{"stars": 4}}) // edit
//	reviews.Update(ctx, id, bson.M{"$set": bson.M{"productId": q}}) // move
//	reviews.Delete(ctx, id)                                     // delete
//
// Source.Applied hands over a write the application made itself. A
// Source insert naming a parent that does not exist fails with
// ErrParentNotFound after the child is written: inside a transaction
// nothing stays; without one the child stays and Check reports it
// (KindOrphan), where the window's own Add takes it back. The
// window's own verbs write the child and the window only; use the Source
// when other copies depend on the children.
//
// # Atomicity
//
// With multi-document transactions (a replica set), Add, AddMany, Edit,
// Move, Delete and DeleteParent each run in one transaction
// (pattern.Atomic): the child and the window(s), a delete and its refill,
// a parent and its cascade, commit together. Without them (a standalone
// server, the embedded engine today) each write is atomic on its own
// document and the steps run in the order above, the child collection
// first: a failure between them leaves a window behind (Check reports
// KindWindow; Repair refills it) or, for a cascade cut short, children of
// a deleted parent (KindOrphan; Repair deletes them under Cascade). A
// refused Edit or Move is undone by a compare-and-set back to the child
// as it was; a refused Add or AddMany writes nothing.
//
// # Indexes
//
// EnsureIndexes creates {<Parent>: 1, <Time>: -1, _id: -1} on the child
// collection: the refill's top-N query and the keyset pages read it in
// order, with no blocking sort, and stop after N (or a page) entries.
//
// # Queries
//
//	product page: db.products.findOne({_id: p})
//	show all:     db.reviews.find({productId: p, at: {$gte: <min date>}}).sort({at: -1, _id: -1}).limit(20)
//	next page:    db.reviews.find({productId: p, at: {$gte: <min date>, $lte: t},
//	                $nor: [{at: t, _id: {$gte: id}}]}).sort({at: -1, _id: -1}).limit(20)
//
// The next page starts strictly after the last (at, _id) seen, so pages
// never repeat or skip a child when several share a time, and the cost of
// page k does not grow with k as skip(k*20) would. Cursor's
// MarshalText and UnmarshalText carry the position in a "next" link.
//
// # Check
//
// Check (Verify, and with repair Repair) reports three kinds of problem:
// KindWindow, a window that is not exactly the copies of its parent's
// newest N children in order (refilled by Repair); KindOrphan, children
// whose parent does not exist (not a problem under Detach; deleted by
// Repair under Cascade; left and reported under Refuse); KindTimeType,
// children breaking the time rule (reported only). Backfill builds every
// window, for children loaded behind the window's back.
//
// # Mistakes it guards against
//
// The wrong $slice sign; a push without $slice (unbounded growth); a
// delete that only $pulls and so leaves N-1 copies forever; edits that
// update the child and forget the copy (or edit one copy and forget
// another derived copy: use a pattern.Source); a time of another BSON
// type that silently never shows; keyset pages on (at) alone, which skip
// children with equal times; deleting a parent and leaving its children
// behind unnoticed.
//
// Following https://www.mongodb.com/docs/manual/data-modeling/design-patterns/group-data/subset-pattern/
// and https://www.mongodb.com/docs/manual/reference/operator/update/slice/
package subset
