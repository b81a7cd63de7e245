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
// top-level source fields copied into it besides _id (["name"]).
//
// # Trade-off
//
// One read saved per display, paid for with extra bytes per referencing
// document and one multi-document update per change of a copied field.
// Without multi-document transactions the source update and the fan-out
// are two writes: a crash between them, or two concurrent changes of the
// same source whose fan-outs interleave, leaves copies that disagree with
// the source until Sync, Repair or the next change of that source. The
// fan-out uses $set, which is idempotent, so re-running it is always safe.
//
// # Frozen snapshots
//
// Some referencing documents are records, not views: a delivered order
// keeps the name it was delivered to. Config.Frozen is a filter matching
// those documents; the fan-out, Sync and Repair add {$nor: [Frozen]} to
// their filter and so never modify them, and Verify does not report them.
//
// # Indexes
//
// EnsureIndexes creates {<Field>._id: 1} followed by Config.OrderBy, e.g.
// {"customer._id": 1, createdAt: -1} (named "customer._id_1_createdAt_-1"
// by the server). It serves the listing of one source's documents in
// OrderBy order without a blocking sort, and the fan-out's updateMany;
// without it every rename of a customer scans the whole orders collection.
//
// # Queries
//
//	create:   db.customers.findOne({_id: c}, {name: 1})
//	          db.orders.insertOne({…, customer: {_id: c, name: "Ada"}})
//	change:   db.customers.findOneAndUpdate({_id: c}, {$set: {name: "Ada King"}}, {returnDocument: "after"})
//	          db.orders.updateMany({"customer._id": c, $nor: [Frozen]}, {$set: {"customer.name": "Ada King"}})
//	list:     db.orders.find({"customer._id": c}).sort({createdAt: -1})
//	display:  db.orders.findOne({_id: o})            // one round trip, no $lookup
//
// # Mistakes it guards against
//
// Copying a volatile field: Config.Validate refuses a Config whose Fields
// include one listed in Config.Volatile (ErrVolatile). Syncing a frozen
// snapshot: every write goes through the Frozen filter. A fan-out without
// an index: EnsureIndexes creates it and the tests assert, through
// explain, that the fan-out and the listing scan it.
//
// Following https://www.mongodb.com/blog/post/building-with-patterns-the-extended-reference-pattern
package extref
