// Package agg parses, optimises and runs MongoDB 7.0 aggregation pipelines:
// the stages ($match, $project, $group, $lookup, $merge, …), the $group
// accumulators, pipeline-style updates, and the explain of the stages that
// follow the query layer's $cursor.
//
// It owns: pipeline parsing with MongoDB's error codes (40323 a stage with
// more than one field, 40324 an unknown stage, each stage's own codes),
// stage position rules, the optimisations mongod applies before running
// (leading $match/$sort/$skip/$limit and the fields the rest needs become a
// Query that the host runs with indexes; $match moves ahead of $sort,
// $project and $addFields where it does not depend on what they compute;
// $sort followed by $limit becomes a bounded top-k; an $unwind of a
// $lookup's "as" field is absorbed into the $lookup), and execution as pull
// iterators (Source) with per-stage memory accounting.
//
// Layout: one file per stage (stage_<name>.go) and per accumulator
// (accum_<name>.go); each registers its parser in an init function with
// register (stages, with position flags) or registerAccum
// (accumulators), so a new stage is one new file. api.go holds the seam
// with the command layer (Host, Query, Options); pipeline.go holds Parse
// and the Pipeline methods; stage.go the stage interface and the parse
// and run contexts; optimize.go the rewrites and the pushdown into Query;
// spill.go the external merge sort shared by $sort and $bucketAuto
// ($group spills partial accumulator states itself); project.go the
// projection tree of $project/$addFields/$unset; filter.go $match's
// filter, validated by package match, with $expr at any allowed position
// evaluated in the pipeline's scope; update.go pipeline-style updates.
//
// Variables: the command's let is evaluated once at Parse (it may use
// $$NOW); $$ROOT and $$CURRENT are set per document; a $lookup's let is
// evaluated per input document and bound in the sub-pipeline's scope.
// Query.Let carries the user variables' values as constants so that a
// pushed-down $expr can read them; when one is missing (which a document
// cannot carry) the $match (of the pipeline or of a $lookup's
// sub-pipeline) runs here instead.
//
// Imports: expr, match, order, bsonkit, mongoerr and the driver's bson
// packages. Must not import command, server or storage: the database is
// reached only through the Host interface, which command implements.
//
// Invariants:
//
//	I1. Parse never panics, whatever the stages (fuzzed); anything MongoDB
//	    rejects comes back as a *mongoerr.Error with mongod's code.
//	I2. A *Pipeline is immutable after Parse; Run may be called many times
//	    (each run has its own state), but one Source is used by one
//	    goroutine at a time.
//	I3. Optimisation never changes a pipeline's results, only their
//	    order where the pipeline leaves order undefined.
//	I4. Every blocking stage ($group, $sort, $bucketAuto, $graphLookup,
//	    $facet's buffer) counts the bytes it holds against Options.Limits;
//	    past the limit it spills to disk when AllowDiskUse allows it or
//	    fails with QueryExceededMemoryLimitNoDiskUseAllowed (292), and
//	    $graphLookup fails with 40099. Nothing grows without bound.
//	I5. Nesting of sub-pipelines ($lookup, $facet, $unionWith) is bounded
//	    by MaxDepth; recursion in $graphLookup by maxDepth and memory.
//	I6. Documents are immutable: a document a Source returns stays valid
//	    after later calls to Next and may be kept (the host's Sources
//	    copy out of storage buffers); no stage writes into a document it
//	    did not build.
//
// Reference: https://www.mongodb.com/docs/v7.0/reference/operator/aggregation-pipeline/
package agg
