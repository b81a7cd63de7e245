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
// 200 per product: the subset form reads the typed product alone (1
// document); the naive form reads the product and then its newest
// reviews through the {productId, at, _id} index (6 documents, 2 round
// trips).
func BenchmarkProductPage(b *testing.B) {
	const products, reviews = 20, 200
	for _, form := range []string{"subset", "naive"} {
		b.Run("form="+form, func(b *testing.B) {
			ctx := context.Background()
			db, count := testenv.Monitored(b)
			w, err := New[Product, Review](db.Collection("products"), db.Collection("reviews"), reviewConfig())
			if err != nil {
				b.Fatal(err)
			}
			if err := w.EnsureIndexes(ctx); err != nil {
				b.Fatal(err)
			}
			for p := range products {
				id := fmt.Sprint("p", p)
				if _, err := db.Collection("products").InsertOne(ctx, Product{ID: id, Name: "product " + id}); err != nil {
					b.Fatal(err)
				}
				rs := make([]Review, reviews)
				for r := range rs {
					rs[r] = Review{ID: fmt.Sprintf("%s-%03d", id, r), ProductID: id, At: t0.Add(time.Duration(r) * time.Minute),
						Stars: int32(r%5 + 1), Text: "a review of some length, as reviews go"}
				}
				if _, err := w.AddMany(ctx, rs); err != nil {
					b.Fatal(err)
				}
			}
			count.Reset()
			for i := 0; b.Loop(); i++ {
				id := fmt.Sprint("p", i%products)
				var shown []Review
				if form == "subset" {
					p, err := w.Parent(ctx, id)
					if err != nil {
						b.Fatal(err)
					}
					shown = p.RecentReviews
				} else {
					var p Product
					if err := db.Collection("products").FindOne(ctx, bson.D{{Key: "_id", Value: id}},
						options.FindOne().SetProjection(bson.D{{Key: "recentReviews", Value: 0}})).Decode(&p); err != nil {
						b.Fatal(err)
					}
					cur, err := db.Collection("reviews").Find(ctx, bson.D{{Key: "productId", Value: id}},
						options.Find().SetSort(bson.D{{Key: "at", Value: -1}, {Key: "_id", Value: -1}}).SetLimit(5))
					if err != nil {
						b.Fatal(err)
					}
					if err := cur.All(ctx, &shown); err != nil {
						b.Fatal(err)
					}
				}
				if len(shown) != 5 {
					b.Fatalf("%d reviews shown", len(shown))
				}
			}
			b.ReportMetric(float64(count.Commands())/float64(b.N), "roundtrips/op")
			b.ReportMetric(float64(count.Docs())/float64(b.N), "docs/op")
		})
	}
}

// BenchmarkLoad loads 10 products' 100 reviews each, one Add per review
// or one AddMany per 1000 reviews, and reports the round trips per
// review.
func BenchmarkLoad(b *testing.B) {
	const products, reviews = 10, 100
	for _, verb := range []string{"Add", "AddMany"} {
		b.Run("verb="+verb, func(b *testing.B) {
			ctx := context.Background()
			db, count := testenv.Monitored(b)
			w, err := New[Product, Review](db.Collection("products"), db.Collection("reviews"), reviewConfig())
			if err != nil {
				b.Fatal(err)
			}
			if err := w.EnsureIndexes(ctx); err != nil {
				b.Fatal(err)
			}
			for p := range products {
				db.Collection("products").InsertOne(ctx, Product{ID: fmt.Sprint("p", p)})
			}
			if _, err := w.Add(ctx, Review{ID: "warm", ProductID: "p0", At: t0}); err != nil {
				b.Fatal(err)
			}
			count.Reset()
			loaded := 0
			for round := 0; b.Loop(); round++ {
				rs := make([]Review, 0, products*reviews)
				for r := range reviews {
					for p := range products {
						rs = append(rs, Review{ID: fmt.Sprintf("%d-%d-%d", round, p, r), ProductID: fmt.Sprint("p", p),
							At: t0.Add(time.Duration(round*reviews+r) * time.Second), Stars: 3})
					}
				}
				if verb == "Add" {
					for _, r := range rs {
						if _, err := w.Add(ctx, r); err != nil {
							b.Fatal(err)
						}
					}
				} else if _, err := w.AddMany(ctx, rs); err != nil {
					b.Fatal(err)
				}
				loaded += len(rs)
			}
			b.ReportMetric(float64(count.Commands())/float64(loaded), "roundtrips/review")
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(loaded), "ns/review")
		})
	}
}
