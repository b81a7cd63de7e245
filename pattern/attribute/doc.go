// Package attribute implements MongoDB's attribute pattern: many sparse,
// similar fields (a product's specs, a movie's release dates per country)
// become one array of key/value pairs, so a single compound multikey index
// serves a query on any of them.
//
// # When to use
//
// Use it when documents carry many optional fields that are queried the
// same way and whose set is open-ended: one index per field would be too
// many (64 per collection at most, each one a write cost), and a new field
// should not need a new index. Fields present on every document belong at
// the top level, with their own indexes.
//
// # The shape
//
//	{ _id: 1, name: "Water bottle",
//	  attrs: [ {k: "color", v: "blue"}, {k: "volumeMl", v: 500}, {k: "weightKg", v: 0.2} ] }
//
// One element per attribute, at most one element per key. The alternative
// form, built with NewWildcard, keeps the attributes in a sub-document,
// {props: {color: "blue", volumeMl: 500}}, indexed by a wildcard index.
//
// A Store[D] is typed by the user's document struct, which holds its
// attributes as []Attr (whose bson tags are the default "k" and "v"), or
// by bson.D; in the wildcard form the struct's field is a map or bson.D:
//
//	type Book struct {
//		ID    int              `bson:"_id"`
//		Title string           `bson:"title"`
//		Specs []attribute.Attr `bson:"specs"`
//	}
//	specs, err := attribute.New[Book](books, attribute.Config{Field: "specs"})
//
// # Indexes
//
// EnsureIndexes creates {"attrs.k": 1, "attrs.v": 1}, one key per
// element; the wildcard form creates {"props.$**": 1}, one key per field.
//
// # Queries
//
// Queries are built with Where, All and Any and compiled by the Store, and
// the array form always compiles a condition to $elemMatch:
//
//	{attrs: {$elemMatch: {k: "color", v: "blue"}}}
//	{attrs: {$elemMatch: {k: "weightKg", v: {$gte: 0.1, $lt: 1}}}}
//
// Without $elemMatch, {"attrs.k": "color", "attrs.v": "blue"} matches a
// document whose color is red when any other attribute equals "blue", and
// the index bounds only attrs.k (attrs.v is [MinKey, MaxKey], SERVER-3104).
// Under $elemMatch both fields get tight bounds, so explain shows an
// IXSCAN on the compound index with attrs.k ["color", "color"] and
// attrs.v ["blue", "blue"]. The builder has no way to express the
// separate form. Several conditions combine with $and (All) or $or (Any),
// one $elemMatch each. A condition on an attribute means "the document has
// the attribute and its value satisfies the operators", also for Ne; in
// the wildcard form Ne compiles to {$exists: true, $ne: v} to keep that
// meaning.
//
// # Typed values
//
// Comparison operators match only within one BSON type bracket, so a
// volume stored as the string "500" is invisible to {$gte: 400}: a silent
// miss. Values are therefore checked on every write and in every query:
// Config.Kinds declares the kind of an attribute (String, Number, Bool,
// Date); a string that holds a number, given for a Number attribute or an
// undeclared one, is rejected or converted to a number according to
// Config.NumericStrings; other mismatches are rejected; Config.Strict
// rejects undeclared attributes. Values are scalars: documents, arrays and
// null are rejected.
//
// # Writes
//
// Insert and InsertMany (the bulk load: every document checked first, then
// one insertMany) check and normalize the attributes a document holds and
// return it as stored. Each other write is one atomic update on one
// document:
//
//	Add:     updateOne({_id, "attrs.k": {$ne: "color"}}, {$push: {attrs: {k: "color", v: "red"}}})
//	Replace: updateOne({_id, "attrs.k": "color"}, {$set: {"attrs.$.v": "red"}})
//	Remove:  updateOne({_id, "attrs.k": "color"}, {$pull: {attrs: {k: "color"}}})
//
// The $ne guard makes a duplicate key impossible even under concurrent
// Adds. When an update matches nothing, a read tells "no such document"
// (ErrNotFound) from "already there" (ErrExists) or "not there"
// (ErrMissing, which also matches ErrNotFound). Set is Replace, falling
// back to Add, retried if a concurrent writer got in between; in the
// wildcard form it is a single $set. No write touches more than one
// document, so none needs a transaction.
//
// # Reads
//
//	Get:    findOne({_id})                                     // the typed document
//	Attrs:  findOne({_id}, {attrs: 1})                         // its attributes
//	Value:  findOne({_id}, {attrs: {$elemMatch: {k: "color"}}}) // one attribute
//	Find:   find(<compiled filter>)                            // typed documents; Cursor for large results
//
// # Errors
//
// ErrNotFound and ErrInvalidConfig are the shared sentinels of package
// pattern; ErrMissing wraps ErrNotFound; ErrExists, ErrValue and
// ErrUndeclared are this package's own.
//
// # The mistakes it guards against
//
// Queries without $elemMatch (false positives, loose bounds), duplicate
// keys from an unguarded $push, numbers stored as strings, and one index
// per attribute.
//
// Following https://www.mongodb.com/docs/manual/data-modeling/design-patterns/group-data/attribute-pattern/
// and https://www.mongodb.com/docs/manual/core/indexes/index-types/index-wildcard/
package attribute
