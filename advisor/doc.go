// Package advisor reads a live deployment — the embedded engine or any
// MongoDB — through the official Go driver and reports, with measured
// evidence and the exact fix, where a catalogue pattern fits and which
// common schema or indexing mistake is present.
//
// It works in three phases (parse, plan, execute):
//
//  1. Options are parsed and validated into a plan: which databases and
//     collections to read, the sample size, the time budget, the workload
//     source (system.profile or a file of JSON lines).
//  2. Collect builds a Snapshot: the server's version and topology; per
//     collection its collStats, indexes, $indexStats and a schema inferred
//     on the server from a $sample with $group (field presence, types per
//     path, array length and document size percentiles, discriminator-like
//     values); the workload grouped into query shapes; explain of the top
//     shapes.
//  3. Checks run as pure functions of the Snapshot, one per file
//     (check_<id>.go), each with a stable id; their findings make a Report
//     written as text, JSON, SARIF 2.1.0 or HTML.
//
// Invariants:
//
//	I1. The advisor never writes to an inspected database. The only write
//	    it can make is the profiler level, and only when
//	    Options.EnableProfiler asks for it.
//	I2. Every command it sends carries maxTimeMS (at most
//	    Options.MaxTime, never past the overall budget) and the comment
//	    Comment, so its own reads can be told apart in system.profile.
//	I3. Every read is bounded: a sample of Options.Sample documents, at
//	    most Options.MaxProfile profiler entries or workload lines, at most
//	    Options.MaxExplain explains, at most Options.MaxCollections
//	    collections per database.
//	I4. Checks do no I/O: everything they read is in the Snapshot, so
//	    Analyse reproduces the findings of a Snapshot without a server.
//
// The package imports the driver and never engine/internal; Demo builds
// its database through the driver too.
package advisor
