package computed

import (
	"context"
	"fmt"
	"sync/atomic"
	"testing"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/event"
	"go.mongodb.org/mongo-driver/v2/mongo"
	"go.mongodb.org/mongo-driver/v2/mongo/options"

	"github.com/formworkdb/formwork/engine"
	"github.com/formworkdb/formwork/internal/testenv"
)

// countingDB returns a database on a fresh in-process engine whose client
// counts the commands it sends (round trips).
func countingDB(b *testing.B) (*mongo.Database, *atomic.Int64) {
	b.Helper()
	eng, _ := testenv.Engine(b, engine.Options{})
	var n atomic.Int64
	client, err := mongo.Connect(options.Client().ApplyURI("mongodb://localhost").SetDialer(eng.Dialer()).
		SetMonitor(&event.CommandMonitor{Started: func(context.Context, *event.CommandStartedEvent) { n.Add(1) }}))
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { client.Disconnect(context.Background()) })
	return client.Database("bench"), &n
}

// BenchmarkAverage reads one product's average rating, of 200 ratings per
// product: the computed form reads the product document; the naive form
// reads every rating of the product (through the {productId: 1} index)
// and averages in the client.
func BenchmarkAverage(b *testing.B) {
	const products, ratings = 10, 200
	for _, form := range []string{"computed", "naive"} {
		b.Run("form="+form, func(b *testing.B) {
			ctx := context.Background()
			db, trips := countingDB(b)
			m, err := New(db.Collection("products"), db.Collection("ratings"), Config{Parent: "productId", Value: "stars", Target: "rating"})
			if err != nil {
				b.Fatal(err)
			}
			if err := m.EnsureIndexes(ctx); err != nil {
				b.Fatal(err)
			}
			for p := range products {
				db.Collection("products").InsertOne(ctx, bson.D{{Key: "_id", Value: p}, {Key: "name", Value: fmt.Sprint("product ", p)}})
				var docs []any
				for r := range ratings {
					docs = append(docs, bson.D{{Key: "productId", Value: p}, {Key: "stars", Value: int32(r%5 + 1)}})
				}
				if _, err := db.Collection("ratings").InsertMany(ctx, docs); err != nil {
					b.Fatal(err)
				}
				if _, err := m.Recompute(ctx, p); err != nil {
					b.Fatal(err)
				}
			}
			var docs int64
			start := trips.Load()
			for i := 0; b.Loop(); i++ {
				p := i % products
				var avg float64
				if form == "computed" {
					a, _, err := m.Average(ctx, p)
					if err != nil {
						b.Fatal(err)
					}
					avg = a
					docs++
				} else {
					cur, err := db.Collection("ratings").Find(ctx, bson.D{{Key: "productId", Value: p}},
						options.Find().SetProjection(bson.D{{Key: "_id", Value: 0}, {Key: "stars", Value: 1}}))
					if err != nil {
						b.Fatal(err)
					}
					var sum, n int64
					for cur.Next(ctx) {
						sum += int64(cur.Current.Lookup("stars").Int32())
						n++
						docs++
					}
					cur.Close(ctx)
					avg = float64(sum) / float64(n)
				}
				if avg != 3 {
					b.Fatalf("average %v, want 3", avg)
				}
			}
			b.ReportMetric(float64(trips.Load()-start)/float64(b.N), "roundtrips/op")
			b.ReportMetric(float64(docs)/float64(b.N), "docs/op")
		})
	}
}
