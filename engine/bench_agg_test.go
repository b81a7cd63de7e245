package engine_test

import (
	"context"
	"testing"
	"time"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo"

	"github.com/formworkdb/formwork/engine"
)

// BenchmarkAggGroup compares a $group by 100 keys with $sum over 100,000
// documents with countDocuments({}) by collection scan over the same
// documents, in the same run; it reports the ratio of their times
// (target: at most 3).
func BenchmarkAggGroup(b *testing.B) {
	c := benchClient(b, "pipe", engine.Options{}).Database("bench").Collection("c")
	ctx := context.Background()
	const n = 100_000
	docs := make([]any, 0, 10_000)
	for i := 0; i < n; i++ {
		docs = append(docs, bson.D{{Key: "_id", Value: i}, {Key: "k", Value: i % 100}, {Key: "v", Value: i}})
		if len(docs) == cap(docs) {
			if _, err := c.InsertMany(ctx, docs); err != nil {
				b.Fatal(err)
			}
			docs = docs[:0]
		}
	}
	group := mongo.Pipeline{{{Key: "$group", Value: bson.D{{Key: "_id", Value: "$k"}, {Key: "s", Value: bson.D{{Key: "$sum", Value: "$v"}}}}}}}
	var tGroup, tCount time.Duration
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		start := time.Now()
		cur, err := c.Aggregate(ctx, group)
		if err != nil {
			b.Fatal(err)
		}
		var out []bson.Raw
		if err := cur.All(ctx, &out); err != nil || len(out) != 100 {
			b.Fatalf("$group: %d groups, %v", len(out), err)
		}
		tGroup += time.Since(start)
		start = time.Now()
		cnt, err := c.CountDocuments(ctx, bson.D{})
		if err != nil || cnt != n {
			b.Fatalf("countDocuments = %d, %v", cnt, err)
		}
		tCount += time.Since(start)
	}
	b.ReportMetric(float64(tGroup.Microseconds())/float64(b.N), "group-µs/op")
	b.ReportMetric(float64(tCount.Microseconds())/float64(b.N), "count-µs/op")
	b.ReportMetric(float64(tGroup)/float64(tCount), "group/count")
}

// BenchmarkAggLookup compares a $lookup over 10,000 local documents whose
// foreignField has an index with 10,000 findOne calls by that indexed
// field, in the same run; it reports the ratio of their times (target: at
// most 3).
func BenchmarkAggLookup(b *testing.B) {
	db := benchClient(b, "pipe", engine.Options{}).Database("bench")
	ctx := context.Background()
	const n = 10_000
	local, foreign := db.Collection("local"), db.Collection("foreign")
	var ls, fs []any
	for i := 0; i < n; i++ {
		ls = append(ls, bson.D{{Key: "_id", Value: i}, {Key: "ref", Value: i}})
		fs = append(fs, bson.D{{Key: "_id", Value: i}, {Key: "key", Value: i}, {Key: "name", Value: "x"}})
	}
	if _, err := local.InsertMany(ctx, ls); err != nil {
		b.Fatal(err)
	}
	if _, err := foreign.InsertMany(ctx, fs); err != nil {
		b.Fatal(err)
	}
	if _, err := foreign.Indexes().CreateOne(ctx, mongo.IndexModel{Keys: bson.D{{Key: "key", Value: 1}}}); err != nil {
		b.Fatal(err)
	}
	lookup := mongo.Pipeline{{{Key: "$lookup", Value: bson.D{
		{Key: "from", Value: "foreign"}, {Key: "localField", Value: "ref"},
		{Key: "foreignField", Value: "key"}, {Key: "as", Value: "f"},
	}}}}
	var tLookup, tFind time.Duration
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		start := time.Now()
		cur, err := local.Aggregate(ctx, lookup)
		if err != nil {
			b.Fatal(err)
		}
		got := 0
		for cur.Next(ctx) {
			got++
		}
		if err := cur.Err(); err != nil || got != n {
			b.Fatalf("$lookup: %d documents, %v", got, err)
		}
		cur.Close(ctx)
		tLookup += time.Since(start)
		start = time.Now()
		for j := 0; j < n; j++ {
			if err := foreign.FindOne(ctx, bson.D{{Key: "key", Value: j}}).Err(); err != nil {
				b.Fatal(err)
			}
		}
		tFind += time.Since(start)
	}
	b.ReportMetric(float64(tLookup.Microseconds())/float64(b.N), "lookup-µs/op")
	b.ReportMetric(float64(tFind.Microseconds())/float64(b.N), "findOnes-µs/op")
	b.ReportMetric(float64(tLookup)/float64(tFind), "lookup/findOnes")
}
