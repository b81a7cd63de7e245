// Package extref implements the extended reference pattern: a referencing
// document (an order) carries, next to the _id of the document it refers
// to (its customer), a copy of the few source fields it is displayed with,
// so the hot read needs no second query and no $lookup.
//
// # When to use
//
// Use it when a listing or a detail page of the referencing collection
// shows a handful of fields of another collection on every read, those
// fields rarely change, and a short stale window after a change is
// acceptable. Do not use it for fields that change often (a balance, a
// stock level): every change fans out to every referencing document.
//
// # Shape
//
//	customers (source of truth)
//	{ _id: ObjectId("…c1"), name: "Ada Lovelace", email: "ada@x", tier: "gold", balance: 12 }
//	orders (referencing)
//	{ _id: ObjectId("…o1"), customer: { _id: ObjectId("…c1"), name: "Ada Lovelace" },
//	  status: "open", createdAt: ISODate("2025-01-30T10:15:00Z"), … }
//
// Config.Field names the embedded reference ("customer"), Config.Fields the
// top-level source fields copied into it besides _id (["name"]). A
// Reference[S, R, C] is typed by the user's source struct S (Customer),
// referencing struct R (Order) and copy struct C (CustomerRef, the _id and
// the copied fields); bson.D works for any of them.
//
// # Write paths
//
// A Reference is a pattern.Dependent of the source collection, so a
// pattern.Source of customers declared with it (and any other copy derived
// from customers) maintains every copy from one call per write; Applied
// takes a write the application made itself. Apply of:
//
//   - an insert of a source does nothing (nothing refers to it yet);
//   - an update compares the copied fields of the before and after images:
//     if none changed (the common case the pattern is chosen for) it writes
//     nothing; if one did, it fans the copy out with one updateMany over
//     the live referencing documents, then re-reads the source and fans out
//     again until what it fanned out is the source's current value, so that
//     concurrent changes of one source converge on its last value whatever
//     order their fan-outs land in;
//   - a delete applies Config.OnDelete to the live referencing documents:
//     Cascade deletes them, Detach removes their reference (or marks it,
//     Config.DetachMark), Refuse reports them as dangling (ErrHasChildren).
//
// The package's own verbs: Insert and InsertMany (a bulk load: one $in
// read of the distinct sources, one insertMany) fill each referencing
// document's copy from its source, then re-read the source and rewrite
// the copy if it changed meanwhile, or remove the document again
// (ErrParentNotFound) if the source was deleted meanwhile. Update changes
// a source and fans out as above; an update naming no copied field is one
// findAndModify. Delete deletes a source under Config.OnDelete; under
// Refuse it checks before deleting (ErrHasChildren), and checks again
// after, putting the source back if an Insert slipped in. Reassign moves
// a referencing document to another source (an order to another
// customer) with that source's copy, settling like Insert. Sync re-copies
// one source; List reads one source's referencing documents in
// Config.OrderBy order.
//
// # Atomicity and the staleness window
//
// A fan-out touches many documents, so Update and Delete run through
// pattern.Atomic. With transactions (a replica set) the source write and
// its fan-out, or its policy's writes, commit together: readers never see
// a renamed customer with orders showing the old name. Without them (the
// embedded engine, a standalone server) the source is written first and
// the fan-out follows: until it completes, and for the documents a failed
// fan-out missed until Sync or Check with repair, open orders show the old
// name. The window is one updateMany long in the normal case; a crash or
// error in between leaves it open until repaired. Every fan-out uses $set
// of the source's values, so re-running one is always safe. Under
// transactions, an Insert that commits while a source change's transaction
// is open may keep the old copy (the transaction's snapshot does not see
// it); Check with repair converges it. Delete makes a second pass after the
// commit for the same reason.
//
// # Frozen snapshots
//
// Some referencing documents are records, not views: a delivered order
// keeps the name it was delivered to. Config.Frozen is a filter matching
// those documents; every write of the package adds {$nor: [Frozen]} to its
// filter and so never modifies or deletes them, Verify does not report
// them, and no delete policy touches them: they outlive their source.
// Validate checks the filter as mongod would (known operators, argument
// shapes, at any depth), so a typo fails New, not every later fan-out;
// EnsureIndexes has the server parse it too, for what only the server can
// judge (the expression of an $expr).
//
// # Indexes
//
// EnsureIndexes creates {<Field>._id: 1} followed by Config.OrderBy, e.g.
// {"customer._id": 1, createdAt: -1} (named "customer._id_1_createdAt_-1"
// by the server). It serves the listing of one source's documents in
// OrderBy order without a blocking sort, the fan-out's updateMany and the
// delete policies; without it every rename of a customer scans the whole
// orders collection.
//
// # Queries
//
//	create:   db.customers.findOne({_id: c}, {name: 1})
//	          db.orders.insertOne({…, customer: {_id: c, name: "Ada"}})
//	          db.customers.findOne({_id: c}, {name: 1})              // re-read: changed or deleted meanwhile?
//	load:     db.customers.find({_id: {$in: [c1, c2, …]}}, {name: 1})
//	          db.orders.insertMany([…])
//	          db.customers.find({_id: {$in: [c1, c2, …]}}, {name: 1}) // re-read
//	change:   db.customers.findOne({_id: c})
//	          db.customers.findOneAndUpdate({_id: c, $expr: {$eq: ["$$ROOT", before]}}, {$set: {name: "Ada King"}})
//	          db.orders.updateMany({"customer._id": c, $nor: [Frozen]}, {$set: {"customer.name": "Ada King"}})
//	          db.customers.findOne({_id: c}, {name: 1})              // re-read: changed again meanwhile?
//	delete:   db.orders.countDocuments({"customer._id": c, $nor: [Frozen]})   // Refuse
//	          db.customers.findOneAndDelete({_id: c})
//	          db.orders.deleteMany({"customer._id": c, $nor: [Frozen]})       // Cascade
//	          db.orders.updateMany({"customer._id": c, $nor: [Frozen]}, {$unset: {customer: ""}}) // Detach
//	move:     db.customers.findOne({_id: c2}, {name: 1})
//	          db.orders.findOneAndUpdate({_id: o, $nor: [Frozen]}, {$set: {customer: {_id: c2, name: "Bob"}}})
//	          db.customers.findOne({_id: c2}, {name: 1})             // re-read
//	list:     db.orders.find({"customer._id": c}).sort({createdAt: -1})
//	display:  db.orders.findOne({_id: o})            // one round trip, no $lookup
//
// # Mistakes it guards against
//
// Copying a volatile field: Config.Validate refuses a Config whose Fields
// include one listed in Config.Volatile (ErrVolatile). A Frozen filter the
// server would refuse: Validate refuses it. Syncing a frozen snapshot:
// every write goes through the Frozen filter. Fanning out on every change
// of the source: only a change of a copied field fans out. A stale copy
// from interleaved fan-outs or an insert racing a rename: every write
// re-reads its source until it copied the current value. An order left
// pointing at a deleted customer: the OnDelete policy, and Check, which
// reports orphans and, repairing, applies the policy to them. A fan-out
// without an index: EnsureIndexes creates it and the tests assert, through
// explain, that the fan-out and the listing scan it.
//
// Errors wrap the shared sentinels of package pattern: ErrParentNotFound,
// ErrNotFound, ErrHasChildren, ErrInvalidConfig.
//
// Following https://www.mongodb.com/blog/post/building-with-patterns-the-extended-reference-pattern
package extref
