package engine_test

import (
	"context"
	"fmt"
	"slices"
	"testing"
	"time"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo"
	"go.mongodb.org/mongo-driver/v2/mongo/options"

	"github.com/formworkdb/formwork/engine"
)

// benchSchema is a 10-property $jsonSchema validator of the kind the
// polymorphic pattern uses: types, bounds, lengths, a pattern and an
// enum.
var benchSchema = bson.D{{Key: "$jsonSchema", Value: bson.D{
	{Key: "bsonType", Value: "object"},
	{Key: "required", Value: bson.A{"name", "email", "age", "kind"}},
	{Key: "properties", Value: bson.D{
		{Key: "name", Value: bson.D{{Key: "bsonType", Value: "string"}, {Key: "maxLength", Value: 100}}},
		{Key: "email", Value: bson.D{{Key: "bsonType", Value: "string"}, {Key: "pattern", Value: "@"}}},
		{Key: "age", Value: bson.D{{Key: "bsonType", Value: "int"}, {Key: "minimum", Value: 0}, {Key: "maximum", Value: 150}}},
		{Key: "kind", Value: bson.D{{Key: "enum", Value: bson.A{"user", "admin", "guest"}}}},
		{Key: "score", Value: bson.D{{Key: "bsonType", Value: "double"}}},
		{Key: "active", Value: bson.D{{Key: "bsonType", Value: "bool"}}},
		{Key: "tags", Value: bson.D{{Key: "bsonType", Value: "array"}, {Key: "maxItems", Value: 10}, {Key: "items", Value: bson.D{{Key: "bsonType", Value: "string"}}}}},
		{Key: "address", Value: bson.D{{Key: "bsonType", Value: "object"}, {Key: "required", Value: bson.A{"city"}}}},
		{Key: "created", Value: bson.D{{Key: "bsonType", Value: "date"}}},
		{Key: "note", Value: bson.D{{Key: "bsonType", Value: []string{"string", "null"}}}},
	}},
}}}

// benchUser returns a document that satisfies benchSchema.
func benchUser(i int) bson.D {
	return bson.D{
		{Key: "_id", Value: i}, {Key: "name", Value: "user"}, {Key: "email", Value: "u@example.com"},
		{Key: "age", Value: int32(i % 100)}, {Key: "kind", Value: "user"}, {Key: "score", Value: 1.5},
		{Key: "active", Value: true}, {Key: "tags", Value: bson.A{"a", "b"}},
		{Key: "address", Value: bson.D{{Key: "city", Value: "Paris"}}},
		{Key: "created", Value: bson.DateTime(1700000000000)}, {Key: "note", Value: nil},
	}
}

// BenchmarkInsertValidated compares inserts into a collection without a
// validator and into one with the 10-property benchSchema in one run:
// each iteration inserts the same batch into both, alternating which goes
// first, so load on the machine weighs on both alike. It reports each
// side's median wall time per batch (medians, because a shared machine
// adds long outliers), each side's process CPU time per batch where the
// OS measures it (the engine runs in this process, so that is the
// insert's work, less sensitive to other processes than wall time), and
// the validator's overhead in percent of the plain insert, in CPU time
// where measured, else in wall time (the target: at most 30). Batches of 1 (each an
// acknowledged insert) and of 100, in memory over the in-process dialer:
// the cheapest insert, where validation's share is largest.
func BenchmarkInsertValidated(b *testing.B) {
	for _, batch := range []int{1, 100} {
		b.Run(fmt.Sprintf("batch=%d", batch), func(b *testing.B) {
			db := benchClient(b, "pipe", engine.Options{}).Database("bench")
			ctx := context.Background()
			if err := db.CreateCollection(ctx, "plain"); err != nil {
				b.Fatal(err)
			}
			if err := db.CreateCollection(ctx, "validated", options.CreateCollection().SetValidator(benchSchema)); err != nil {
				b.Fatal(err)
			}
			colls := []*mongo.Collection{db.Collection("plain"), db.Collection("validated")}
			spent := [2][]time.Duration{make([]time.Duration, 0, b.N), make([]time.Duration, 0, b.N)}
			var cpu [2]time.Duration
			_, haveCPU := processCPU()
			docs := make([]any, batch)
			b.ReportAllocs()
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				for j := range docs {
					docs[j] = benchUser(i*batch + j)
				}
				for k := 0; k < 2; k++ {
					side := (i + k) % 2
					start := time.Now()
					c0, _ := processCPU()
					if _, err := colls[side].InsertMany(ctx, docs); err != nil {
						b.Fatal(err)
					}
					c1, _ := processCPU()
					spent[side] = append(spent[side], time.Since(start))
					cpu[side] += c1 - c0
				}
			}
			b.StopTimer()
			plain, validated := median(spent[0]), median(spent[1])
			b.ReportMetric(float64(plain.Nanoseconds()), "plain-ns/batch")
			b.ReportMetric(float64(validated.Nanoseconds()), "validated-ns/batch")
			overhead := 100 * (float64(validated)/float64(plain) - 1)
			if haveCPU {
				b.ReportMetric(float64(cpu[0].Nanoseconds())/float64(b.N), "plain-cpu-ns/batch")
				b.ReportMetric(float64(cpu[1].Nanoseconds())/float64(b.N), "validated-cpu-ns/batch")
				overhead = 100 * (float64(cpu[1])/float64(cpu[0]) - 1)
			}
			b.ReportMetric(overhead, "overhead-%")
		})
	}
}

// median returns the median of ds, which it sorts.
func median(ds []time.Duration) time.Duration {
	if len(ds) == 0 {
		return 0
	}
	slices.Sort(ds)
	return ds[len(ds)/2]
}
