// Package versioning implements MongoDB's schema versioning pattern: each
// document records the version of the shape it was written in, readers
// understand every version still live, and the old versions are
// upgraded, on write and by a background job, until only the newest is
// left.
//
// # When to use
//
// Use it when a collection's shape must change and rewriting every
// document at once is not an option: a large collection, an application
// that cannot stop, several deployments of the code at once. The price is
// code per live version, an index per location of a moved field and $or
// queries while the migration runs; the migration must therefore finish,
// and Report says how far it is.
//
// # Shape
//
//	{ _id: 1, name: "Taylor", home: "209-555-7788", work: "503-555-0110" }              // version 1 (no field)
//	{ _id: 2, schemaVersion: 2, name: "Cameron", contactInfo: { work: "670-555-7878" } }  // version 2
//
// Config.Field names the version field ("schemaVersion"). A document
// without it (or with null) is Config.Missing, the first version unless
// set, so a collection that predates versioning needs no stamping pass;
// filters on an old version say {schemaVersion: {$in: [null, 1]}}, which
// matches the missing field (AtVersion). Config.Versions declares the
// versions oldest first; each but the first has Up, a function upgrading
// a bson.D from the previous version in memory, and optionally Pipeline,
// the same upgrade as update pipeline stages for the server. A Store[T]
// reads into T, the newest version's struct.
//
// Step is a declarative upgrade (rename paths, set defaults where
// missing, unset paths) that builds both Up and Pipeline from data; Spec
// and ParseSpec read a list of steps from JSON. It is what
// `formwork jobs migrate --spec` runs, since a command line job cannot run
// the user's Go functions.
//
// # Write paths
//
// Insert and Replace always write the newest version. Upgrade brings one
// document to the newest version with one guarded write, whose filter is
// {_id, schemaVersion: <the version read>}: an updateOne with the steps'
// pipelines concatenated when every step has one (no read on the
// server's side), else a replaceOne with the Up functions' result. Of
// two concurrent upgraders one matches and the other matches nothing, so
// no document is upgraded twice. Update is upgrade-on-write: Upgrade, then
// the caller's update (written for the newest shape) with the filter
// {_id, schemaVersion: <newest>}.
//
// Migrate is the background upgrader: batches of Config.Batch documents
// in _id order (find {schemaVersion: {$ne: newest}, _id: {$gt: last}}),
// each batch one updateMany per stored version with the guarded filter
// {_id: {$in: batch}, schemaVersion: <version>} (or a guarded replace per
// document without pipelines), Config.Throttle between batches. After
// each batch it records its progress, "N of M at version k", in the
// database (Config.Jobs, "formwork_jobs" by default, one document per
// collection: total, done, last _id, batches, failures). It is safe to kill
// at any point and to rerun: a rerun resumes after the last recorded _id;
// a batch upgraded but not recorded is found already upgraded (the guard
// and the version filter skip it); the counts are recomputed from the
// collection at the end. A second pass from the start upgrades documents
// written at an old version behind the scan by code not yet deployed.
// A document whose Up fails is counted and left at its version.
//
// # Indexes
//
// None are created: the version field needs no index for Migrate (its
// scan walks the _id index). A field that moved needs an index at each
// location while both versions are live ({work: 1} and
// {"contactInfo.work": 1}); drop the old one when Report shows its
// version gone.
//
// # Queries
//
// Get and Find decode any live version into T, upgrading in memory; a
// document of an undeclared version (written by newer code) fails with
// ErrUnknownVersion instead of being decoded wrong. A condition on a
// moved field names every location: AnyOf(cond, "work",
// "contactInfo.work") is {$or: [{work: cond}, {"contactInfo.work":
// cond}]}, which explain shows as an OR of two IXSCANs when both indexes
// exist and as a COLLSCAN when one is missing. Sorting on a field that
// lives at two paths cannot use an index: finish the migration first.
//
// # Validator
//
// EnsureValidator installs a $jsonSchema that fits the migration's state:
// while several versions are live, a oneOf with one branch per live
// version ({schemaVersion: {enum: [n]}} and the fields of the Version's
// Schema struct) at validationLevel "moderate"; once Report shows only
// the newest, the newest branch alone at "strict", so old code writing an
// old shape is refused from then on (code 121).
//
// # Report
//
// Report groups the collection by version: count and oldest document
// (by Config.TimeField, else by the ObjectID _id's time) for each live
// version. Finished says whether only the newest is left.
//
// # Verify
//
// Verify reads every document and names those the store cannot read (an
// undeclared version, a failing Up, a result T cannot decode), and counts
// the outdated ones in its Details. Check with repair runs Migrate first
// and reports the documents it upgraded as Repaired.
//
// # Mistakes
//
//   - Treating a missing version field as an error: every document
//     written before versioning has none.
//   - An unguarded upgrade ({_id} alone): two upgraders race and the
//     second applies the version 1 → 2 step to a version 2 document.
//   - A migration that is never finished: every reader keeps the code
//     for every version, every query its $or, and the old indexes stay.
//   - A one-shot updateMany over the whole collection: one long write
//     with no record of where it stopped when it is killed.
//   - New documents written at an old version: Insert always writes the
//     newest.
//
// https://www.mongodb.com/docs/manual/data-modeling/design-patterns/data-versioning/schema-versioning/
package versioning
