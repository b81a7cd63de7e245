// Package approx implements the approximation pattern: a counter that
// many events increment (page views, impressions) is written to the
// database once per N events instead of once per event, trading exactness
// for N times fewer writes.
//
// # When to use
//
// Use it for counts whose readers want a trend or an order of magnitude,
// not an exact figure, and whose write rate is high enough to matter.
// Never use it for money, stock levels, quotas or anything a decision
// depends on exactly.
//
// # Shape
//
//	pageViews
//	{ _id: "page:/pricing", views: NumberLong(120300) }
//
// Config.Field names the counter field ("views"); the key is the _id.
//
// # Modes
//
// Deterministic: the process counts events per key in memory and, on the
// N-th, writes {$inc: {views: N}} (upsert) and subtracts N. After k
// events with no Flush the stored value is floor(k/N)*N; Flush writes the
// remainders, after which it is exactly k.
//
// Probabilistic: each event writes {$inc: {views: N}} (upsert) with
// probability 1/N, drawn from Config.Rand. The expected stored value is
// exactly k, the standard deviation after k events is sqrt(k*(N-1)), so
// the relative error shrinks as the count grows (1% at k = 10^6 with
// N = 100). Nothing is held in memory, so there is nothing to lose on a
// crash, but the count is never exact. A seeded *rand.Rand makes the
// sequence of writes, and so the tests, deterministic.
//
// # Loss window
//
// Deterministic mode holds up to N-1 events per key per process in
// memory: a process that dies without Flush loses them, so the stored
// count lags the true one by at most (N-1) x keys x processes, and a
// crash loses at most that. Call Flush on shutdown (and, to bound the lag
// in time as well as in count, periodically). An increment that arrives
// while Flush runs is kept for the next Flush, never lost. A write that
// fails puts its amount back into the pending count and the next write or
// Flush retries it; a failure after the server applied the write (a
// timeout, with retryable writes exhausted) can count those events twice.
// Probabilistic mode holds nothing except amounts whose write failed.
//
// # Concurrency
//
// A Counter is safe for concurrent use: the pending counts and the random
// source sit behind one mutex, and writes happen outside it. Several
// processes may share a counter document: $inc is atomic, and the first
// write of a key is an upsert that retries once when a concurrent upsert
// of the same _id wins the insert (DuplicateKey, 11000).
//
// # Indexes
//
// None beyond _id: every write and read is an _id equality.
//
// # Queries
//
//	write: db.pageViews.updateOne({_id: k}, {$inc: {views: NumberLong(N)}}, {upsert: true})
//	read:  db.pageViews.findOne({_id: k}, {views: 1})
//
// # Mistakes it guards against
//
// A read-modify-write of the counter in the application (lost updates:
// writes are $inc); forgetting the first write must create the document
// (upsert); losing the remainder on shutdown (Flush); an RNG shared
// unsafely between goroutines, or one that cannot be seeded in tests.
//
// Following https://www.mongodb.com/docs/manual/data-modeling/design-patterns/computed-values/approximation-schema-pattern/
package approx
