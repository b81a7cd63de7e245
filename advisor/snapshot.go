package advisor

import (
	"time"

	"go.mongodb.org/mongo-driver/v2/bson"
)

// Snapshot is everything the checks read: collected once, then read only.
// It marshals to JSON, so a saved Snapshot reproduces the findings.
type Snapshot struct {
	// Server is the inspected deployment.
	Server Server `json:"server"`
	// Taken is when collection began; Cutoff is Taken less
	// Thresholds.ColdAge, the date before which sampled dates count as
	// cold.
	Taken  time.Time `json:"taken"`
	Cutoff time.Time `json:"cutoff"`
	// Sample is the $sample size used per collection.
	Sample int `json:"sample"`
	// Databases holds the inspected databases in name order.
	Databases []*Database `json:"databases"`
	// Workload says where the query shapes came from.
	Workload Workload `json:"workload"`
	// Shapes are the workload's query shapes, most expensive first.
	Shapes []*Shape `json:"shapes"`
	// Notes say what could not be collected and why.
	Notes []string `json:"notes,omitempty"`
}

// Server describes the deployment.
type Server struct {
	// Version is buildInfo's version, e.g. "7.0.14".
	Version string `json:"version"`
	// Topology is "standalone", "replicaSet" or "sharded".
	Topology string `json:"topology"`
	// Target is the connection string without credentials, or "embedded
	// engine (in memory)".
	Target string `json:"target,omitempty"`
}

// Database is one inspected database.
type Database struct {
	Name        string        `json:"name"`
	Collections []*Collection `json:"collections"`
	// Profiler is the profiling level read with {profile: -1}, or -1 when
	// it could not be read.
	Profiler int `json:"profiler"`
}

// Collection is one collection's statistics, indexes and sampled schema.
type Collection struct {
	DB   string `json:"db"`
	Name string `json:"name"`
	// Type is "collection" or "timeseries".
	Type string `json:"type"`
	// Validator reports whether the collection has a validator, and
	// JSONSchema whether it uses $jsonSchema.
	Validator  bool `json:"validator"`
	JSONSchema bool `json:"jsonSchema"`
	// Count, Size (uncompressed bytes), AvgObjSize, StorageSize and
	// TotalIndexSize come from $collStats storageStats.
	Count          int64            `json:"count"`
	Size           int64            `json:"size"`
	AvgObjSize     int64            `json:"avgObjSize"`
	StorageSize    int64            `json:"storageSize"`
	TotalIndexSize int64            `json:"totalIndexSize"`
	IndexSizes     map[string]int64 `json:"indexSizes,omitempty"`
	// Indexes are the collection's indexes with their $indexStats.
	Indexes []*Index `json:"indexes"`
	// IndexStats reports whether $indexStats answered.
	IndexStats bool `json:"indexStats"`
	// Schema is the sampled schema; nil when sampling failed.
	Schema *Schema `json:"schema,omitempty"`
}

// NS returns "db.name".
func (c *Collection) NS() string { return c.DB + "." + c.Name }

// Index returns the index named name, or nil.
func (c *Collection) Index(name string) *Index {
	for _, ix := range c.Indexes {
		if ix.Name == name {
			return ix
		}
	}
	return nil
}

// Key is one field of an index key pattern. Dir is 1 or -1, or the
// index type ("text", "hashed", "2dsphere"…) as a string.
type Key struct {
	Field string `json:"field"`
	Dir   any    `json:"dir"`
}

// Index is one index and its usage.
type Index struct {
	Name   string `json:"name"`
	Keys   []Key  `json:"keys"`
	Unique bool   `json:"unique,omitempty"`
	Sparse bool   `json:"sparse,omitempty"`
	Hidden bool   `json:"hidden,omitempty"`
	// Partial is the partialFilterExpression as relaxed Extended JSON,
	// PartialFields its top-level field names.
	Partial       string   `json:"partial,omitempty"`
	PartialFields []string `json:"partialFields,omitempty"`
	// TTL reports an expireAfterSeconds option.
	TTL bool `json:"ttl,omitempty"`
	// Collation reports a collation option.
	Collation bool `json:"collation,omitempty"`
	// Ops and Since are $indexStats accesses.ops and accesses.since.
	Ops   int64     `json:"ops"`
	Since time.Time `json:"since"`
	// Size is the index's size in bytes from collStats indexSizes.
	Size int64 `json:"size"`
}

// KeyString formats the key pattern as mongosh writes it: {a: 1, b: -1}.
func (ix *Index) KeyString() string { return keysString(ix.Keys) }

// Schema is a collection's shape inferred from a $sample, computed on the
// server with $group.
type Schema struct {
	// Sampled is the number of documents in the sample.
	Sampled int64 `json:"sampled"`
	// Document sizes ($bsonSize) in bytes.
	SizeP50 float64 `json:"sizeP50"`
	SizeP95 float64 `json:"sizeP95"`
	SizeP99 float64 `json:"sizeP99"`
	SizeMax float64 `json:"sizeMax"`
	// Fields are the top-level paths, the paths one level inside
	// embedded documents, and the paths inside array elements that are
	// documents ("items.sku"), in path order.
	Fields []*Field `json:"fields"`
	// KV are the keys of arrays of {k, v} documents (the attribute
	// pattern's shape).
	KV []*KVKey `json:"kv,omitempty"`
	// Discriminators are fields with few distinct scalar values.
	Discriminators []*Discriminator `json:"discriminators,omitempty"`
	// References are embedded copies of other collections' documents.
	References []*Reference `json:"references,omitempty"`
}

// Field returns the field at path, or nil.
func (s *Schema) Field(path string) *Field {
	if s == nil {
		return nil
	}
	for _, f := range s.Fields {
		if f.Path == path {
			return f
		}
	}
	return nil
}

// Field is one path's statistics in the sample.
type Field struct {
	Path string `json:"path"`
	// Docs is the number of sampled documents that have the path.
	Docs int64 `json:"docs"`
	// Types counts values per BSON type name ($type).
	Types map[string]int64 `json:"types"`
	// Array holds length statistics when some values are arrays.
	Array *ArrayStats `json:"array,omitempty"`
	// Old counts date values before the snapshot's Cutoff.
	Old int64 `json:"old,omitempty"`
}

// Dominant returns the type name with the most values.
func (f *Field) Dominant() string {
	best, n := "", int64(-1)
	for t, c := range f.Types {
		if c > n || (c == n && t < best) {
			best, n = t, c
		}
	}
	return best
}

// ArrayStats are percentiles of array lengths ($size), computed with
// $percentile (method "approximate").
type ArrayStats struct {
	Count int64   `json:"count"`
	P50   float64 `json:"p50"`
	P95   float64 `json:"p95"`
	Max   float64 `json:"max"`
}

// KVKey is one key of a k/v array: how often it occurs and how its
// values are typed.
type KVKey struct {
	// Path is the array's path, Key the value of its elements' k.
	Path string `json:"path"`
	Key  string `json:"key"`
	// Docs counts sampled documents with the key, Values its elements.
	Docs   int64 `json:"docs"`
	Values int64 `json:"values"`
	// Strings counts string values, NumericStrings those that convert to
	// a number ($convert to double without error).
	Strings        int64 `json:"strings"`
	NumericStrings int64 `json:"numericStrings"`
}

// Discriminator is a top-level field with few distinct scalar values.
type Discriminator struct {
	Field string `json:"field"`
	// Values counts documents per value, most frequent first; values are
	// printed as relaxed Extended JSON (strings quoted).
	Values []ValueCount `json:"values"`
	// Missing counts sampled documents without the field.
	Missing int64 `json:"missing"`
	// Presence, when measured, maps each value to the share of its
	// documents that have each top-level field.
	Presence map[string]map[string]float64 `json:"presence,omitempty"`
}

// ValueCount is one value and how many sampled documents hold it.
type ValueCount struct {
	Value string `json:"value"`
	Count int64  `json:"count"`
}

// Workload describes the source of the query shapes.
type Workload struct {
	// Source is "system.profile", a file name, or "" when none was read.
	Source string `json:"source"`
	// Entries counts the operations read, Skipped those not understood
	// or issued by the advisor itself.
	Entries int `json:"entries"`
	Skipped int `json:"skipped"`
}

// Shape is a group of operations that differ only in their values.
type Shape struct {
	// Key identifies the shape: op, namespace and the normalized command.
	Key string `json:"key"`
	NS  string `json:"ns"`
	// Op is the command: find, aggregate, update, delete, insert, count,
	// distinct, findAndModify, or getMore (attributed to its original).
	Op string `json:"op"`
	// Text is the normalized shape as mongosh-like text.
	Text string `json:"text"`
	// Totals over the shape's executions.
	Count        int64 `json:"count"`
	KeysExamined int64 `json:"keysExamined"`
	DocsExamined int64 `json:"docsExamined"`
	NReturned    int64 `json:"nreturned"`
	Millis       int64 `json:"millis"`
	MaxMillis    int64 `json:"maxMillis"`
	// SortStages counts executions with a blocking sort (hasSortStage),
	// UsedDisk those that spilled, MemoryErrors those that failed with
	// QueryExceededMemoryLimitNoDiskUseAllowed (292).
	SortStages   int64 `json:"sortStages"`
	UsedDisk     int64 `json:"usedDisk"`
	MemoryErrors int64 `json:"memoryErrors"`
	// MaxSkip is the largest skip ($skip) seen.
	MaxSkip int64 `json:"maxSkip"`
	// PlanSummary is the last planSummary seen.
	PlanSummary string `json:"planSummary,omitempty"`
	// The example operation's parts (the first seen), as the checks read
	// them.
	Filter     bson.D   `json:"-"`
	Sort       bson.D   `json:"-"`
	Pipeline   []bson.D `json:"-"`
	Update     any      `json:"-"`
	Hint       any      `json:"-"`
	AllowDisk  bool     `json:"allowDiskUse,omitempty"`
	Collection string   `json:"collection"`
	DB         string   `json:"db"`
	// Explain is the queryPlanner explain of the example, when run.
	Explain *Plan `json:"explain,omitempty"`
}

// Plan is what the advisor reads of an explain.
type Plan struct {
	// Stages are the winning plan's stage names, root first.
	Stages []string `json:"stages"`
	// Indexes are the IXSCAN index names in the winning plan.
	Indexes []string `json:"indexes,omitempty"`
	// Sort reports a blocking SORT stage, Collscan a COLLSCAN.
	Sort     bool `json:"sort"`
	Collscan bool `json:"collscan"`
}
