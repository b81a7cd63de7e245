package computed

import (
	"context"
	"fmt"
	"testing"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo"
	"go.mongodb.org/mongo-driver/v2/mongo/options"

	"github.com/formworkdb/formwork/internal/testenv"
)

// benchSizes are the children per parent the benchmarks run at.
var benchSizes = []int{100, 1000, 10000}

// benchFixture loads parents p0..p3 with n children each (stars 1..5,
// plus ascending "seq" values for the delete benchmark), with the
// {productId: 1, stars: 1} index, and backfills the totals.
func benchFixture(b *testing.B, n int) (*fixture, *testenv.Counter) {
	b.Helper()
	ctx := context.Background()
	db, count := testenv.Monitored(b)
	f := fixtureOn(b, db, allConfig(), "p0", "p1", "p2", "p3")
	for p := range 4 {
		docs := make([]any, 0, n)
		for i := range n {
			docs = append(docs, review{Product: fmt.Sprint("p", p), Stars: i%5 + 1})
		}
		if _, err := f.reviews.InsertMany(ctx, docs); err != nil {
			b.Fatal(err)
		}
	}
	if _, err := f.r.Backfill(ctx); err != nil {
		b.Fatal(err)
	}
	count.Reset()
	return f, count
}

// naiveAverage is the average computed at read time: $match on the
// parent (through the index) and $group.
func naiveAverage(ctx context.Context, reviews *mongo.Collection, p string) (float64, error) {
	cur, err := reviews.Aggregate(ctx, mongo.Pipeline{
		{{Key: "$match", Value: bson.D{{Key: "productId", Value: p}}}},
		{{Key: "$group", Value: bson.D{{Key: "_id", Value: nil}, {Key: "avg", Value: bson.D{{Key: "$avg", Value: "$stars"}}}}}},
	})
	if err != nil {
		return 0, err
	}
	defer cur.Close(ctx)
	if !cur.Next(ctx) {
		return 0, cur.Err()
	}
	return cur.Current.Lookup("avg").AsFloat64(), nil
}

// BenchmarkInsert inserts one review into a product that has n: the
// computed form also updates the product's totals ($inc, $min, $max:
// one more round trip); the naive form only inserts.
func BenchmarkInsert(b *testing.B) {
	for _, form := range []string{"computed", "naive"} {
		for _, n := range benchSizes {
			b.Run(fmt.Sprintf("form=%s/children=%d", form, n), func(b *testing.B) {
				ctx := context.Background()
				f, count := benchFixture(b, n)
				for i := 0; b.Loop(); i++ {
					rv := review{Product: fmt.Sprint("p", i%4), Stars: i%5 + 1}
					var err error
					if form == "computed" {
						_, err = f.r.Insert(ctx, rv)
					} else {
						_, err = f.reviews.InsertOne(ctx, rv)
					}
					if err != nil {
						b.Fatal(err)
					}
				}
				b.ReportMetric(float64(count.Commands())/float64(b.N), "roundtrips/op")
			})
		}
	}
}

// BenchmarkAverage reads a product's average rating: the computed form
// reads the product's totals (one document); the naive form groups the
// product's n reviews at read time.
func BenchmarkAverage(b *testing.B) {
	for _, form := range []string{"computed", "naive"} {
		for _, n := range benchSizes {
			b.Run(fmt.Sprintf("form=%s/children=%d", form, n), func(b *testing.B) {
				ctx := context.Background()
				f, count := benchFixture(b, n)
				for i := 0; b.Loop(); i++ {
					p := fmt.Sprint("p", i%4)
					var avg float64
					if form == "computed" {
						t, err := f.r.Get(ctx, p)
						if err != nil {
							b.Fatal(err)
						}
						avg, _ = t.Average()
					} else {
						var err error
						if avg, err = naiveAverage(ctx, f.reviews, p); err != nil {
							b.Fatal(err)
						}
					}
					if avg != 3 {
						b.Fatalf("average %v, want 3", avg)
					}
				}
				b.ReportMetric(float64(count.Commands())/float64(b.N), "roundtrips/op")
			})
		}
	}
}

// BenchmarkDeleteMin deletes a product's review with the smallest stars
// and inserts one back, so the min must be recomputed on every delete:
// two index-bounded finds, whatever the number of reviews.
func BenchmarkDeleteMin(b *testing.B) {
	for _, n := range benchSizes {
		b.Run(fmt.Sprintf("children=%d", n), func(b *testing.B) {
			ctx := context.Background()
			f, count := benchFixture(b, n)
			for i := 0; b.Loop(); i++ {
				p := fmt.Sprint("p", i%4)
				var low review
				err := f.reviews.FindOne(ctx, bson.D{{Key: "productId", Value: p}},
					options.FindOne().SetSort(bson.D{{Key: "productId", Value: 1}, {Key: "stars", Value: 1}})).Decode(&low)
				if err != nil {
					b.Fatal(err)
				}
				if _, err := f.r.Delete(ctx, low.ID); err != nil {
					b.Fatal(err)
				}
				if _, err := f.r.Insert(ctx, review{Product: p, Stars: low.Stars}); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(count.Commands())/float64(b.N), "roundtrips/op")
		})
	}
}

// BenchmarkLoad loads 1,000 reviews of 10 products: one by one with
// Insert (two writes each), or with InsertMany (one insertMany and one
// update per product, through ApplyMany). One op is the whole load.
func BenchmarkLoad(b *testing.B) {
	for _, form := range []string{"insert", "insertmany"} {
		b.Run("form="+form, func(b *testing.B) {
			ctx := context.Background()
			db, count := testenv.Monitored(b)
			var products []string
			for p := range 10 {
				products = append(products, fmt.Sprint("p", p))
			}
			f := fixtureOn(b, db, allConfig(), products...)
			rs := make([]review, 1000)
			for i := range rs {
				rs[i] = review{Product: products[i%10], Stars: i%5 + 1}
			}
			count.Reset()
			for b.Loop() {
				if form == "insert" {
					for _, rv := range rs {
						if _, err := f.r.Insert(ctx, rv); err != nil {
							b.Fatal(err)
						}
					}
				} else if _, err := f.r.InsertMany(ctx, rs); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(count.Commands())/float64(b.N), "roundtrips/op")
		})
	}
}
