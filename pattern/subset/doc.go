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
// Config.Parent names the child field holding the parent's _id
// ("productId"), Config.Time the field that orders children (newest is
// largest), Config.Array the parent's array ("recentReviews") and
// Config.Size the N kept. A copy is the child without Config.Parent, or
// only _id, Time and Config.Fields when Fields is set, in the child's
// field order.
//
// # Trade-off
//
// One read per page view instead of two, paid for with a second write on
// every add, on every edit of an embedded child, and a refill query on
// every delete of one. The two writes are not atomic (there are no
// multi-document transactions); the order of writes keeps the child
// collection, the source of truth, always complete, and Verify/Repair
// (or Refill for one parent) rebuild any embedded copy from it.
//
// # Write paths
//
//	add:    db.reviews.insertOne(r)
//	        db.products.updateOne({_id: p, "recentReviews._id": {$ne: r._id}},
//	          {$push: {recentReviews: {$each: [copy], $sort: {at: -1, _id: -1}, $slice: N}}})
//	edit:   db.reviews.findOneAndUpdate({_id: r}, {$set: s}, {returnDocument: "after"})
//	        db.products.updateOne({_id: p, "recentReviews._id": r}, {$set: {"recentReviews.$.text": …}})
//	delete: db.reviews.findOneAndDelete({_id: r}), then refill:
//	        db.reviews.find({productId: p}).sort({at: -1, _id: -1}).limit(N)
//	        db.products.updateOne({_id: p, recentReviews: <array as read>}, {$set: {recentReviews: top}})
//
// The $push sign rule: $push inserts, then sorts, then slices. With the
// array sorted newest first ($sort {at: -1}) a positive $slice N keeps the
// first N, the newest; a negative $slice -N would keep the N oldest, the
// classic bug. (Sorting ascending pairs with $slice -N.) This package
// sorts descending with _id as tie-breaker and slices +N, so the array
// is in exactly the order of the "show all" pages.
//
// The refill is a compare-and-set on the whole array: if any other write
// changed the array between the read and the $set, the $set matches
// nothing and the refill starts again. An add pushes only when the copy
// is not there yet, so an add that races a refill which already embedded
// its child does not duplicate it. An edit of a child whose add has not
// pushed yet can leave the older copy embedded, and a delete of a child
// whose add has not pushed yet can leave its copy behind; Verify reports
// both and Refill repairs them.
// Editing Config.Time refills instead of editing in place, since the
// child may move in or out of the newest N.
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
//	show all:     db.reviews.find({productId: p}).sort({at: -1, _id: -1}).limit(20)
//	next page:    db.reviews.find({productId: p, at: {$lte: t},
//	                $nor: [{at: t, _id: {$gte: id}}]}).sort({at: -1, _id: -1}).limit(20)
//
// The next page starts strictly after the last (at, _id) seen, so pages
// never repeat or skip a child when several share a time, and the cost of
// page k does not grow with k as skip(k*20) would.
//
// # Mistakes it guards against
//
// The wrong $slice sign; a push without $slice (unbounded growth); a
// delete that only $pulls and so leaves N-1 copies forever; edits that
// update the child and forget the copy; keyset pages on (at) alone, which
// skip children with equal times.
//
// Following https://www.mongodb.com/docs/manual/data-modeling/design-patterns/group-data/subset-pattern/
// and https://www.mongodb.com/docs/manual/reference/operator/update/slice/
package subset
