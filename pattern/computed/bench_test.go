package computed

import (
	"context"
	"fmt"
	"testing"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo/options"

	"github.com/formworkdb/formwork/internal/testenv"
)

// BenchmarkAverage reads one product's average rating, of 200 ratings per
// product: the computed form reads the product document; the naive form
// reads every rating of the product (through the {productId: 1} index)
// and averages in the client.
func BenchmarkAverage(b *testing.B) {
	const products, ratings = 10, 200
	for _, form := range []string{"computed", "naive"} {
		b.Run("form="+form, func(b *testing.B) {
			ctx := context.Background()
			db, count := testenv.Monitored(b)
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
			count.Reset()
			for i := 0; b.Loop(); i++ {
				p := i % products
				var avg float64
				if form == "computed" {
					a, _, err := m.Average(ctx, p)
					if err != nil {
						b.Fatal(err)
					}
					avg = a
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
					}
					cur.Close(ctx)
					avg = float64(sum) / float64(n)
				}
				if avg != 3 {
					b.Fatalf("average %v, want 3", avg)
				}
			}
			b.ReportMetric(float64(count.Commands())/float64(b.N), "roundtrips/op")
			b.ReportMetric(float64(count.Docs())/float64(b.N), "docs/op")
		})
	}
}
