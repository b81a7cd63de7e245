package subset

import (
	"context"
	"fmt"
	"testing"
	"time"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo/options"

	"github.com/formworkdb/formwork/internal/testenv"
)

// BenchmarkProductPage renders a product with its 5 newest reviews, of
// 200 per product: the subset reads the product document alone; the
// naive form reads the product and then its newest reviews through the
// {productId, at, _id} index.
func BenchmarkProductPage(b *testing.B) {
	const products, reviews = 20, 200
	for _, form := range []string{"subset", "naive"} {
		b.Run("form="+form, func(b *testing.B) {
			ctx := context.Background()
			db, count := testenv.Monitored(b)
			w, err := New[bson.D, bson.D](db.Collection("products"), db.Collection("reviews"), Config{
				Parent: "productId", Time: "at", Array: "recentReviews", Size: 5})
			if err != nil {
				b.Fatal(err)
			}
			if err := w.EnsureIndexes(ctx); err != nil {
				b.Fatal(err)
			}
			t0 := time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC)
			for p := range products {
				db.Collection("products").InsertOne(ctx, bson.D{{Key: "_id", Value: p}, {Key: "name", Value: fmt.Sprint("product ", p)}})
				var docs []any
				for r := range reviews {
					docs = append(docs, bson.D{{Key: "productId", Value: p}, {Key: "at", Value: t0.Add(time.Duration(r) * time.Minute)},
						{Key: "stars", Value: r%5 + 1}, {Key: "text", Value: "a review of some length, as reviews go"}})
				}
				if _, err := db.Collection("reviews").InsertMany(ctx, docs); err != nil {
					b.Fatal(err)
				}
				if _, err := w.Refill(ctx, p); err != nil {
					b.Fatal(err)
				}
			}
			count.Reset()
			for i := 0; b.Loop(); i++ {
				p := i % products
				prod, err := db.Collection("products").FindOne(ctx, bson.D{{Key: "_id", Value: p}}).Raw()
				if err != nil {
					b.Fatal(err)
				}
				n := 0
				if form == "subset" {
					vals, _ := prod.Lookup("recentReviews").Array().Values()
					n = len(vals)
				} else {
					cur, err := db.Collection("reviews").Find(ctx, bson.D{{Key: "productId", Value: p}},
						options.Find().SetSort(bson.D{{Key: "at", Value: -1}, {Key: "_id", Value: -1}}).SetLimit(5))
					if err != nil {
						b.Fatal(err)
					}
					for cur.Next(ctx) {
						n++
					}
					cur.Close(ctx)
				}
				if n != 5 {
					b.Fatalf("%d reviews shown", n)
				}
			}
			b.ReportMetric(float64(count.Commands())/float64(b.N), "roundtrips/op")
			b.ReportMetric(float64(count.Docs())/float64(b.N), "docs/op")
		})
	}
}
