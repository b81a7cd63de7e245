// Package polymorphic implements MongoDB's polymorphic pattern: documents
// of several kinds (payment methods that are cards, bank accounts or
// wallets) live in one collection, told apart by a discriminator field,
// each kind decoded into its own Go type.
//
// # When to use
//
// Use it when the kinds share the fields most queries filter on (the
// customer, the creation time) and are listed together, but each carries
// fields of its own. One collection per kind would turn "all of this
// customer's payment methods" into one query per kind and multiply
// collections (a file per collection and per index in WiredTiger); one
// collection without a discriminator leaves every reader guessing the
// kind from which fields are there.
//
// # Shape
//
//	{ _id, type: "card", customerId: 811, label: "Visa", createdAt, card: { last4: "4242", expiresAt } }
//	{ _id, type: "bank", customerId: 811, label: "IBAN", createdAt, bank: { iban: "DE…" } }
//
// Config.Field names the discriminator ("type" by default), a top-level
// string written right after _id. Each variant is registered with its name
// and its Go type (the user's struct, bson tags respected):
//
//	methods, _ := polymorphic.New(coll, polymorphic.Config{Field: "type"})
//	cards, _ := polymorphic.Register[Card](methods, "card",
//		polymorphic.Index{Keys: bson.D{{Key: "card.expiresAt", Value: 1}}})
//	banks, _ := polymorphic.Register[Bank](methods, "bank")
//
// A struct need not hold the discriminator; when it does (a string field
// with the same bson name) it must be empty or the variant's name.
//
// # Write paths
//
// Variant.Insert and InsertMany write the value with its discriminator;
// Collection.Insert picks the variant from the value's Go type. Update
// and Delete filter on {_id, type: <variant>}, so a card's update never
// touches a bank account, and an update may not set the discriminator: a
// change of kind is Variant.Replace, which rewrites the whole document as
// the new kind. Each is one single-document write.
//
// # Validator
//
// Collection.Schema generates a $jsonSchema from the variants' structs:
// the discriminator required and one of the registered names, and a
// oneOf with one branch per variant, {required: [type, …the struct's
// fields], properties: {type: {enum: [<name>]}, …}}. The branches are
// disjoint by the discriminator, so exactly one matches a valid document.
// Go types map to bsonType as the driver marshals them: int and int64 to
// ["int", "long"] (the driver writes a Go int as int32 when it fits),
// float64 to "double", time.Time to "date", structs to nested objects;
// nil slices, maps and pointers are written as null and accepted as null;
// omitempty fields are optional. EnsureValidator installs it with
// Config.ValidationLevel ("strict" or "moderate") and
// Config.ValidationAction ("error", refused with code 121 "Document failed
// validation" and the failing rule in errInfo, or "warn"), through create
// for a new collection and collMod for an existing one.
//
// # Indexes
//
// Config.Indexes are the collection-wide indexes ({customerId: 1,
// createdAt: -1}). A variant's Index is partial, with
// partialFilterExpression {type: "<variant>"}: only that variant's
// documents have entries, so an index on card.expiresAt costs the bank
// accounts nothing (a full index holds a null entry for each). Its name
// is "<variant>_<keys>" unless given. EnsureIndexes creates them all.
//
// # Queries
//
// The planner uses a partial index only when the query implies its
// filter. Every query of a Variant therefore goes through Filter, which
// puts {type: "<variant>"} first:
//
//	find({ type: "card", "card.expiresAt": { $lt: cutoff } })   // IXSCAN card_card.expiresAt_1, isPartial: true
//	find({ "card.expiresAt": { $lt: cutoff } })                 // COLLSCAN: the partial index cannot answer
//
// A filter that names another variant fails with ErrWrongVariant instead
// of returning nothing. Collection.Find reads across variants and decodes
// each document into its own type (a two-step decode: the discriminator
// from the raw document, then the variant's struct).
//
// # Verify
//
// Collection.Verify reports the documents that fit no variant: without
// a string discriminator, with an unknown one, that the variant's struct
// cannot decode, or that the schema rejects (asked of the server with
// {$nor: [{$jsonSchema: …}]}): documents written before the validator, by
// bypassDocumentValidation or under the "warn" action. Nothing is derived,
// so there is no Repair.
//
// # Mistakes
//
//   - A query that forgets the discriminator: the partial index is
//     silently ignored and the query scans the collection (explain shows
//     COLLSCAN). Variant's reads cannot forget it.
//   - A validator written by hand with bsonType "int" for a Go int: a
//     value above 2^31 is written as a long and refused.
//   - Decoding a mixed collection into one struct: the fields of other
//     variants are dropped or fail to decode.
//   - A partial index whose filter the query does not imply, forced with
//     hint: the planner refuses it.
//   - Two indexes with the same keys that differ only by their partial
//     filter: give each variant's index keys under its own sub-document,
//     or distinct names.
//
// https://www.mongodb.com/docs/manual/data-modeling/design-patterns/polymorphic-data/polymorphic-schema-pattern/
package polymorphic
