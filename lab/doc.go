// Package lab measures what each schema design pattern buys and what it
// charges. For every pattern that has a package under pattern/, a
// scenario taken from the catalogue's own example (products with reviews,
// orders with their customer, page views, trades, books with buyers,
// product specs) generates one seeded data set with realistic skew (Zipf
// popularity, a few outliers, heavy-tailed list lengths), runs the naive
// form and the patterned form of the same application on it, and measures
// both with the server's own instruments: explain executionStats for the
// documents and keys a read examines, the driver's command monitoring for
// round trips, bytes and documents written, collStats for data and index
// size, and wall-clock latencies (p50, p99). Each pattern also reports its
// own charge (fan-out writes and staleness, refill on delete, drift and
// recompute cost, approximation error, two code paths, rewritten
// documents, data size), and a verdict names the biggest win and the
// biggest charge in one line each.
//
// The lab reaches the database only through the official driver: an
// in-memory engine opened through the public engine package when no URI
// is given, or the deployment a URI names. Either way it works in a
// scratch database, formwork_lab_<random>, that it refuses to use when it
// already holds collections and drops when it is done.
//
// Invariants:
//
//	I1. Every PatternResult has at least one metric where the pattern wins
//	    and one where it pays (Check enforces it; a scenario that cannot
//	    show a charge was not measured honestly).
//	I2. All use of one pattern package is in one file, scenario_<pattern>.go;
//	    generation (gen.go) and measurement (measure.go, monitor.go) know no
//	    pattern.
//	I3. Nothing outside the scratch database is written, and the scratch
//	    database is dropped on every exit path after it was checked empty.
//
// This package must not import engine/internal.
package lab
