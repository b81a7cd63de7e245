// Package computed implements the computed pattern for an average: the
// parent document (a product) stores the running sum and count of a value
// of its source documents (the stars of its ratings), maintained with $inc
// on every source write, so reading the average reads one document
// instead of every rating.
//
// # When to use
//
// Use it when a value derived from many documents is read far more often
// than those documents change. Store what can be maintained incrementally:
// a sum and a count. Never store the average itself: an average cannot be
// updated from one new rating without knowing how many ratings it
// averages, and a stored average plus a stored count drifts with rounding.
// The average is computed on read.
//
// # Shape
//
//	products (parent)
//	{ _id: "p1", name: "Super Widget", rating: { count: NumberLong(3), sum: NumberLong(12) } }
//	ratings (source)
//	{ _id: ObjectId("…"), productId: "p1", stars: 5 }
//
// Config.Parent names the source field holding the parent's _id
// ("productId"), Config.Value the summed field ("stars") and Config.Target
// the parent's embedded {sum, count} ("rating"). Integer values are summed
// as NumberLong, so sums are exact; a double anywhere makes the sum a
// double, subject to rounding (store cents, not dollars, when it matters).
//
// # Write paths
//
//	insert: db.ratings.insertOne(r)
//	        db.products.updateOne({_id: p}, {$inc: {"rating.sum": r.stars, "rating.count": 1}})
//	edit:   db.ratings.findOneAndUpdate({_id: r}, {$set: {stars: s}})      // returns the old value
//	        db.products.updateOne({_id: p}, {$inc: {"rating.sum": s - old}})
//	delete: db.ratings.findOneAndDelete({_id: r})                          // returns the value
//	        db.products.updateOne({_id: p}, {$inc: {"rating.sum": -old, "rating.count": -1}})
//
// $inc is atomic on one document, so concurrent writers never lose an
// increment; findOneAndUpdate and findOneAndDelete return the value they
// replaced atomically, so concurrent edits of one rating add up to the
// right total. The source write and the $inc are two writes: a crash
// between them leaves the total off by that one source document until
// Recompute or Repair.
//
// # Recompute
//
// Verify, Repair and Recompute recompute totals from the source
// collection on the server: a $group by the parent field (Verify, over
// all sources) or a $match on one parent through the {<Parent>: 1} index
// followed by $group (Recompute). Verify then compares the groups with
// the parents, keeping one total per parent in memory.
//
// Recompute does not write with $merge: its compare-and-set needs to know
// whether the stored total was still the one it read, which $merge does
// not report; it writes with an updateOne filtered on that total.
//
// Recompute writes with a compare-and-set: it reads the stored total
// first, sums the sources, and sets the new total only if the stored one
// is unchanged, retrying otherwise, so an $inc that lands meanwhile is
// never overwritten. A writer caught between its source write and its
// $inc while Recompute runs can still be counted twice or not at all;
// run Repair on a quiet collection, or twice.
//
// # Indexes
//
// EnsureIndexes creates {<Parent>: 1} on the source collection, for
// Recompute. The hot paths use only _id.
//
// # Queries
//
//	average: db.products.findOne({_id: p}, {rating: 1})   // avg = sum / count, none when count is 0
//
// # Trade-off
//
// One extra write per source write, and the parent becomes a hot document
// when many sources of one parent are written at once, in exchange for
// reading one document instead of all of a parent's sources.
//
// # Mistakes it guards against
//
// Storing the average; recomputing the average from all ratings on every
// page view; a read-modify-write of the total in the application, which
// loses concurrent updates; forgetting the edit and delete paths; a
// recompute that skips parents with no sources left and so never resets
// them.
//
// Following https://www.mongodb.com/docs/manual/data-modeling/design-patterns/computed-values/computed-schema-pattern/
package computed
