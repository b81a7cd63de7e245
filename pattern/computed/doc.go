// Package computed implements the computed pattern as running totals: a
// parent document (a product) keeps the sum, count, min and max of a
// numeric field of its children (the stars of its reviews), maintained on
// every child write, so reading the average or the range reads one
// document instead of every review.
//
// # When to use
//
// Use it when a value derived from many documents is read far more often
// than those documents change. Store what can be maintained
// incrementally: a sum and a count (and a min and a max, at the charge
// below). Never store the average itself: it cannot be updated from one
// new review without knowing how many it averages, and a stored average
// plus a count drifts with rounding. The average is derived on read
// (Totals.Average).
//
// # Shape
//
//	products (parent, type P)
//	{ _id: "p1", name: "Super Widget",
//	  rating: { sum: NumberLong(12), count: NumberLong(3), min: NumberLong(3), max: NumberLong(5), rev: NumberLong(7) } }
//	reviews (children, type C)
//	{ _id: ObjectId("…"), productId: "p1", stars: 5 }
//
// Config.Parent names the child field holding the parent's _id
// ("productId"), Config.Value the numeric field ("stars"), Config.Target
// the parent's subdocument ("rating"; a dotted path such as
// "stats.rating" works), Config.Stats which of Sum, Count, Min and Max to
// keep (zero: Sum|Count). rev counts the writes to the totals, so that a
// compare-and-set can tell whether they moved (see Min and max). Integer
// values are summed as NumberLong, so sums are exact; a double anywhere
// makes the sum a double, subject to rounding (store cents, not dollars,
// when it matters). Only int32, int64 and double values count: a child
// whose value is missing or of another type (a string, a Decimal128)
// counts nowhere, in no statistic, the way $avg skips it; the package's
// own verbs refuse such values (ErrNotNumber).
//
// P and C are the user's structs, or bson.D. A parent struct holds the
// totals as a Totals field (`bson:"rating,omitempty"`), so one FindOne
// (Rollup.Parent) returns the product with its rating; Get reads the
// totals alone.
//
// # Write paths
//
// Each child write is followed by one update of each parent it touches
// (Apply), the same whether it comes from this package's verbs, from a
// pattern.Source declaring this Rollup with other copies, or from the
// application through Source.Applied:
//
//	insert: db.reviews.insertOne(r)
//	        db.products.updateOne({_id: p}, {$inc: {"rating.rev": 1, "rating.sum": v, "rating.count": 1},
//	                                         $min: {"rating.min": v}, $max: {"rating.max": v}})
//	edit:   db.reviews.findOneAndUpdate({_id: r, <unchanged>}, {$set: {stars: s}})   // before and after images
//	        db.products.findOneAndUpdate({_id: p}, {$inc: {"rating.rev": 1, "rating.sum": s - old},
//	                                     $min: {"rating.min": s}, $max: {"rating.max": s}}, {returnDocument: "after"})
//	move:   the child's update as for an edit, then one update of the old parent (-old, count -1)
//	        and one of the new (+s, count +1, $min/$max s)
//	delete: db.reviews.findOneAndDelete({_id: r})
//	        db.products.findOneAndUpdate({_id: p}, {$inc: {"rating.rev": 1, "rating.sum": -old, "rating.count": -1}})
//	bulk:   db.reviews.insertMany([...]); one update per parent with the batch's sum, count, min and max
//
// Statistics not kept are left out of the update; it is an updateOne
// unless Min or Max is kept and the change removes a value.
// $inc, $min and $max are atomic on one document, so concurrent writers
// never lose an increment; the before and after images come from a
// compare-and-set on the child (pattern.Source.Update), so concurrent
// edits of one review add up. An update that changes neither the parent
// nor the value (a new review text) writes nothing to the parent.
//
// Apply is not idempotent: a running sum cannot tell a change it has seen
// from a new one, so each Change must be applied exactly once. The
// package's verbs and pattern.Source do; code that hands over its own
// writes (Source.Applied) must too. A change applied twice counts twice
// until Check repairs it.
//
// # Min and max
//
// $min and $max can add a value but not take one away. When a delete, an
// edit or a move removes a value that is at or beyond the stored min (or
// max), that parent's min and max are recomputed from its children: one
// find each, sorted on the {<Parent>: 1, <Value>: 1} index with limit 1
// (one key examined, whatever the number of children), then a $set
// filtered on the rev the update returned. A write that lands between the
// read and the $set bumps rev, the $set matches nothing, and the
// recompute reads again (at most 64 times, then ErrContention; Check
// repairs). Without that compare-and-set a concurrent insert whose $min
// found the stale, lower min would be lost. This is the pattern's charge
// for keeping min and max: a removal of the current extreme costs three
// more round trips; other writes cost none.
//
// # Atomicity
//
// With transactions (a replica set; see pattern.Atomic) these run in one
// transaction, all or nothing: Insert (child + parent), DeleteParent
// (check or delete of the parent + its children), Recompute (read +
// $group + $set: exact even under writes), and every Source write with
// its Apply. Without transactions (the engine today) each is a sequence
// of single-document atomic writes, child first, and converges:
//
//   - a failure between the child write and the parent update leaves that
//     parent off by one child until Check with repair;
//   - Insert to a parent that does not exist takes the child back;
//     InsertMany checks the parents first; a move to a parent deleted
//     meanwhile leaves the child counting nowhere (ErrParentNotFound);
//   - Recompute and Repair compare-and-set on rev, so they never
//     overwrite an Apply, but a writer caught between its child write and
//     its Apply while Recompute sums can be counted twice: Repair on a
//     quiet collection (or twice) converges;
//   - DeleteParent under Cascade deletes the parent first, so a child
//     inserted meanwhile either finds no parent or is deleted with the
//     rest; a failure between the two deletes, or a move racing the
//     cascade, leaves orphans that Repair deletes. Under Refuse, a child inserted between the check and the
//     delete is orphaned, and Check lists it.
//
// # Parent delete
//
// Config.OnParentDelete: Refuse (the zero value) returns ErrHasChildren
// while any child names the parent; Cascade deletes the children with it;
// Detach deletes the parent only, leaving children that count nowhere
// (they can still be edited, moved to a parent and deleted).
//
// # Recompute, Check, Backfill
//
// Recompute(parent) rebuilds one parent's totals ($match on the index,
// $group) by compare-and-set on rev. Check(repair=false) (Verify) groups
// all children per parent in one $group and compares every parent, kept
// statistics only (doubles within a relative 1e-9); Check(repair=true)
// (Repair) Recomputes each drifted parent and, under Cascade, deletes the
// children of missing parents. Backfill sets every parent from one
// $group, in unordered bulk writes, for a quiet collection (adopting the
// pattern, changing Stats).
//
// # On the server: RecomputeAll and VerifyAll
//
// RecomputeAll is the scheduled recompute of the manual, run on the
// server in steps of RecomputeOptions.Batch parents in _id order
// (resumable with After; `formwork jobs recompute` records the last _id
// done): per step, $group of the step's children $merge'd into the
// parents with a whenMatched pipeline that $sets only the kept
// statistics, path by path (whenMatched "merge" would replace the whole
// top-level field, and with it whatever else it holds), and bumps rev;
// then the parents of the step that hold totals but have no counted
// child left (a $lookup limited to one child finds none) are reset to
// the empty rollup by a second $merge: $group produces no row for them,
// the classic bug of a scheduled recompute. Config.WhenNotMatched says
// what happens to children of parents that do not exist: "discard"
// (default), "insert" (one final $group, $merge with whenMatched
// "keepExisting", creates stub parents holding only the totals) or
// "fail" (13113 once every existing parent is done). Integers are stored
// as NumberLong and a double sum as a double, as the inline path stores
// them; running it twice changes nothing but rev. It is for a quiet
// collection or a schedule followed by Verify: a child written between a
// step's $group and its $merge is overwritten by the group's total.
//
// VerifyAll compares on the server: one $group of the children $merge'd
// into a scratch collection, then an aggregation over the parents that
// $lookups each one's expected totals and returns only those that
// differ, checked again with Verify's rules; the client holds the drifted
// parents only, where Verify holds one total per parent. On the embedded
// engine (bench_server_test.go, 1,000 parents × 10 children) RecomputeAll
// takes 5 round trips and 0.85 s, Backfill 6 and 0.40 s, a Recompute
// per parent 3,001 and 2.1 s; VerifyAll 5 round trips and 1.1 s with 1
// document to the client, Verify 4 and 0.17 s with 2,000: the engine runs
// $merge and $lookup one document at a time, so the server forms pay off
// in round trips and client memory, not yet in engine time.
//
// # Indexes
//
// EnsureIndexes creates {<Parent>: 1, <Value>: 1} on the children: the
// prefix serves Recompute, Check and DeleteParent, the whole key the
// min/max recompute. The hot paths otherwise use only _id.
//
// # Queries
//
//	product page: db.products.findOne({_id: p})                 // avg = rating.sum / rating.count, none when count is 0
//	best rated:   db.products.find({"rating.count": {$gte: 10}}).sort({"rating.max": -1})
//
// # Trade-off
//
// One extra write per child write (three more when a removal takes away
// the current min or max), and the parent becomes a hot document when
// many children of one parent are written at once, in exchange for
// reading one document instead of all of a parent's children. On the
// embedded engine (bench_test.go) an insert costs 2 round trips instead
// of 1, while reading the average costs one document whatever the number
// of reviews, against a $group at read time that grows with them: about
// 0.1 ms against 1.4 ms at 100 reviews and 50 ms at 10,000.
//
// # Mistakes it guards against
//
// Storing the average; recomputing the average from all reviews on every
// page view; a read-modify-write of the totals in the application, which
// loses concurrent updates; forgetting the edit, move and delete paths;
// two packages each maintaining their own copy from their own writes (one
// Source, many Dependents); a min that is never raised again after its
// review is deleted; a new parent stored with a zero min, which $min then
// never raises (Totals encodes no min or max while Count is zero);
// applying a change twice; a recompute that skips parents with no
// children left and so never resets them.
//
// Following https://www.mongodb.com/docs/manual/data-modeling/design-patterns/computed-values/computed-schema-pattern/
package computed
