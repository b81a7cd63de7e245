// Package explaintest runs explain through the driver and reads the reply,
// for tests that assert how MongoDB or the embedded engine plans a
// command: which stages the winning plan has, which index it scans, with
// which bounds, and how many keys and documents it examined.
//
// It owns the walk over explain's shapes as MongoDB 7.0 produces them:
// the classic plan tree (queryPlanner.winningPlan with inputStage and
// inputStages), the slot-based engine's winningPlan.queryPlan nesting,
// aggregate's stages[].$cursor wrappers and sharded shards[]. Rejected
// plans and executionStats.executionStages are never walked, so every
// stage a Result reports is one the winning plan runs.
//
// It is a test helper: it fails the test it is given rather than return
// errors, and it must not import the engine, so that the same assertions
// hold against a real deployment (see internal/testenv).
package explaintest
