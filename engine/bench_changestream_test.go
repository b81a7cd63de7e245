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
	"github.com/formworkdb/formwork/internal/testenv"
)

// BenchmarkChangeStreamLatency measures the time from an insertOne call
// to the delivery of its event to a change stream waiting in getMore
// (awaitData), one insert at a time, and reports the p50 and p99.
func BenchmarkChangeStreamLatency(b *testing.B) {
	_, client := testenv.Engine(b, engine.Options{})
	ctx := context.Background()
	c := client.Database("bench").Collection("cs")
	if _, err := c.InsertOne(ctx, bson.D{{Key: "warm", Value: 1}}); err != nil {
		b.Fatal(err)
	}
	cs, err := c.Watch(ctx, mongo.Pipeline{}, options.ChangeStream().SetMaxAwaitTime(5*time.Second))
	if err != nil {
		b.Fatal(err)
	}
	watchCtx, stop := context.WithCancel(ctx)
	got := make(chan time.Time, 1)
	go func() {
		for cs.Next(watchCtx) {
			got <- time.Now()
		}
		close(got)
	}()
	defer func() {
		stop()
		for range got {
		}
		cs.Close(ctx)
	}()
	lat := make([]time.Duration, 0, b.N)
	b.ResetTimer()
	for i := range b.N {
		start := time.Now()
		if _, err := c.InsertOne(ctx, bson.D{{Key: "_id", Value: i}}); err != nil {
			b.Fatal(err)
		}
		at, ok := <-got
		if !ok {
			b.Fatal(cs.Err())
		}
		lat = append(lat, at.Sub(start))
	}
	b.StopTimer()
	slices.Sort(lat)
	b.ReportMetric(float64(lat[len(lat)/2].Microseconds()), "p50-µs")
	b.ReportMetric(float64(lat[len(lat)*99/100].Microseconds()), "p99-µs")
}

// BenchmarkOplogInsertCost measures insertMany of 100 small documents
// into a logged database and into "local", which the oplog does not
// record, in the same run: the difference is the oplog's cost.
func BenchmarkOplogInsertCost(b *testing.B) {
	_, client := testenv.Engine(b, engine.Options{})
	ctx := context.Background()
	for _, db := range []string{"local", "bench"} {
		b.Run(fmt.Sprintf("oplog=%v", db != "local"), func(b *testing.B) {
			c := client.Database(db).Collection(fmt.Sprintf("ins%d", b.N))
			docs := make([]any, 100)
			for i := range b.N {
				for j := range docs {
					docs[j] = bson.D{{Key: "_id", Value: i*100 + j}, {Key: "name", Value: "document"}, {Key: "n", Value: j}}
				}
				if _, err := c.InsertMany(ctx, docs); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(b.N*100)/b.Elapsed().Seconds(), "docs/s")
		})
	}
}
