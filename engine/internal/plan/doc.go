// Package plan chooses and runs the access path of a query: it turns a
// filter, a sort and a projection into candidate plans over a collection's
// indexes (index bounds per key field, including $in point intervals,
// anchored regex prefixes, $elemMatch on compound multikey indexes,
// rooted and contained $or as a union of index scans, wildcard indexes expanded into
// one {$_path, <path>} entry per queried path), runs them as trees of stages
// that count their work as mongod's classic engine does, picks the most
// productive candidate by a trial run (mongod's multi-planner), caches the
// choice per query shape (replanning when a cached plan needs more than
// ten times its trial works, as mongod's CachedPlanStage does), and
// renders explain output in MongoDB 7.0's classic shape.
//
// plan imports storage, index, keystring, match, order, bsonkit and
// mongoerr. It must not import command, server or wire.
//
// # Invariants
//
// I1. Results never depend on bounds: bounds may select a superset of the
// matching index entries, and every stage that produces a fetched
// document applies the query's full compiled filter (match.Filter). Only
// a covered plan (no FETCH) relies on bounds and on the IXSCAN key filter,
// and the planner builds one only when both are exact for the index.
//
// I1a. Collation: an index serves string predicates and provides the
// sort only when its collation is the query's (Query.Collation); a
// collated index's bounds are built from sort keys (collation.go).
//
// I2. A multikey index yields each record once per scan (dedup on record
// id), and bounds on two paths that share a multikey prefix are combined
// only under one $elemMatch covering that prefix, as mongod does.
//
// I3. Stage counters (works, advanced, needTime, keysExamined,
// docsExamined, seeks, dupsTested, dupsDropped) follow mongod's
// PlanStage::work accounting, so explain and the profiler report the same
// numbers mongod would for the same data and plan.
//
// I4. A wildcard entry (wildcard.go) scans every key a matching document
// has for its path: the path's subpaths when the value bounds reach into
// objects (then with all values), each array-position variant of the
// path, and nested arrays that a position may select. It never answers a
// predicate that a missing path satisfies, since the index holds no key
// for one; and the index package records arrays only at paths its
// projection holds in full, so any other prefix counts as multikey.
//
// I5. There is one filter tree: the planner converts match's compiled
// filter (Filter.View) into its own normalised expressions, each leaf
// keeping the match node that evaluates it, so an IXSCAN key filter is
// made of those nodes (match.And) rather than compiled again.
//
// I6. An Executor reads through one storage.Reader given at Plan time and
// is used by one goroutine; the Planner (and its plan cache) is safe for
// concurrent use.
//
// Following mongod's query planner (src/mongo/db/query) and
// https://www.mongodb.com/docs/manual/reference/explain-results/
package plan
