package agg

import (
	"context"
	"time"

	"go.mongodb.org/mongo-driver/v2/bson"

	"github.com/formworkdb/formwork/engine/internal/collation"
)

// Source yields documents one at a time. Next returns (nil, nil) at the
// end; the documents it returns are immutable and stay valid (I6). Close
// releases resources and may be called at any time, more than once. A
// Source is used by one goroutine at a time.
type Source interface {
	Next(ctx context.Context) (bson.Raw, error)
	Close()
}

// Query is the part of a pipeline the query layer runs with indexes: the
// leading $match/$sort/$skip/$limit (and $project dependencies) of a
// pipeline, or what $lookup, $graphLookup and $unionWith ask of a foreign
// collection. The zero Query means all documents in any order.
type Query struct {
	Filter bson.Raw // a query filter; may contain $expr; nil or {} = all
	Let    bson.Raw // variable values ($$name) the filter's $expr may read, already evaluated constants
	Sort   bson.Raw // nil = any order
	Skip   int64
	Limit  int64    // 0 = none
	Fields []string // top-level-or-dotted paths the rest needs; nil = whole document
	Sample int64    // >0: a leading $sample of this size (host may use a random cursor)
	Hint   bson.RawValue
	// Collation is the collation the query runs under (nil: simple).
	Collation *collation.Collator
	// AllowDiskUse is the command's allowDiskUse for the query's blocking
	// sort; nil leaves the server's allowDiskUseByDefault. With false, a
	// sort past its memory limit fails with 292 instead of spilling.
	AllowDiskUse *bool
}

// Host is the database as seen by a pipeline; the command layer
// implements it. Methods are called from the goroutine that pulls the
// pipeline's Source.
type Host interface {
	// Open runs q against namespace ns ("db.coll") through the planner
	// (indexes, plan cache) and returns its documents. A collection that
	// does not exist yields no documents. Views are resolved by the host.
	Open(ctx context.Context, ns string, q Query) (Source, error)
	// Insert inserts docs into ns (creating it), failing with 11000 on a
	// duplicate key.
	Insert(ctx context.Context, ns string, docs []bson.Raw) error
	// Update runs one update statement on ns: u is an update document, a
	// replacement, or a pipeline (array); let binds variables for a
	// pipeline ($$new for $merge) as an expression document whose values
	// are constants wrapped in $literal, so ParseUpdatePipeline(u, let)
	// evaluates them unchanged. It returns how many documents matched
	// and whether it upserted.
	Update(ctx context.Context, ns string, q, u bson.RawValue, let bson.Raw, upsert, multi bool) (matched int64, upserted bool, err error)
	// UniqueIndexOn reports whether ns has a unique index whose key fields
	// are exactly fields (any order), as $merge's "on" requires (51183).
	UniqueIndexOn(ctx context.Context, ns string, fields []string) (bool, error)
	// ReplaceCollection atomically replaces ns's documents with docs, as
	// $out does: write into a temporary collection, keep ns's indexes and
	// options, then rename over ns in one step.
	ReplaceCollection(ctx context.Context, ns string, docs Source) error
	// StatsSource answers a source stage that reads server state:
	// $collStats, $indexStats, $planCacheStats, $currentOp,
	// $listLocalSessions. stage is the whole stage document.
	StatsSource(ctx context.Context, ns string, stage bson.Raw) (Source, error)
}

// Options are the command-level settings a pipeline runs with.
type Options struct {
	DB           string   // database of the aggregate (for $lookup "from" etc.)
	Coll         string   // "" for {aggregate: 1}
	Let          bson.Raw // the command's let, unevaluated
	AllowDiskUse bool     // default true (6.0+)
	TempDir      string   // where spilling stages write; "" = os.TempDir()
	Limits       Limits   // memory limits in bytes per stage, from server parameters
	Now          time.Time
	ClusterTime  bson.Timestamp
	Explain      bool
	// Collation compares strings in $match, $sort, $group keys,
	// expressions and $lookup matching (nil: the simple collation).
	Collation *collation.Collator
}

// Limits are the memory limits, in bytes, of the blocking stages; a zero
// field means DefaultLimit.
type Limits struct {
	Sort, Group, BucketAuto, SetWindowFields, GraphLookup int64
	// DensifyDocs is internalQueryMaxAllowedDensifyDocs, the most
	// documents one $densify may generate; zero means DefaultDensifyDocs.
	DensifyDocs int64
}

// DefaultLimit is mongod's default memory limit of a blocking stage
// (internalQueryMaxBlockingSortMemoryUsageBytes and its siblings): 100 MB.
const DefaultLimit = 100 * 1024 * 1024

// limit returns v, or DefaultLimit when v is not positive.
func limit(v int64) int64 {
	if v <= 0 {
		return DefaultLimit
	}
	return v
}
