package extref

import (
	"context"
	"fmt"
	"testing"

	"go.mongodb.org/mongo-driver/v2/bson"

	"github.com/formworkdb/formwork/internal/testenv"
)

// BenchmarkOrderDisplay shows one order with its customer's name: the
// extended reference reads the order alone, the naive form reads the
// order and then its customer.
func BenchmarkOrderDisplay(b *testing.B) {
	const customers, orders = 100, 1000
	for _, form := range []string{"extref", "naive"} {
		b.Run("form="+form, func(b *testing.B) {
			ctx := context.Background()
			db, count := testenv.Monitored(b)
			var cs, ords []any
			for i := 0; i < customers; i++ {
				cs = append(cs, bson.D{{Key: "_id", Value: i}, {Key: "name", Value: fmt.Sprintf("customer %d", i)}, {Key: "email", Value: "x@example.com"}})
			}
			if _, err := db.Collection("customers").InsertMany(ctx, cs); err != nil {
				b.Fatal(err)
			}
			for i := 0; i < orders; i++ {
				o := bson.D{{Key: "_id", Value: i}, {Key: "status", Value: "open"}}
				if form == "extref" {
					o = append(o, bson.E{Key: "customer", Value: bson.D{{Key: "_id", Value: i % customers}, {Key: "name", Value: fmt.Sprintf("customer %d", i%customers)}}})
				} else {
					o = append(o, bson.E{Key: "customerId", Value: i % customers})
				}
				ords = append(ords, o)
			}
			if _, err := db.Collection("orders").InsertMany(ctx, ords); err != nil {
				b.Fatal(err)
			}
			b.ResetTimer()
			count.Reset()
			for i := 0; b.Loop(); i++ {
				order, err := db.Collection("orders").FindOne(ctx, bson.D{{Key: "_id", Value: i % orders}}).Raw()
				if err != nil {
					b.Fatal(err)
				}
				name := order.Lookup("customer", "name")
				if form == "naive" {
					c, err := db.Collection("customers").FindOne(ctx, bson.D{{Key: "_id", Value: order.Lookup("customerId")}}).Raw()
					if err != nil {
						b.Fatal(err)
					}
					name = c.Lookup("name")
				}
				if name.StringValue() == "" {
					b.Fatal("no name")
				}
			}
			b.ReportMetric(float64(count.Commands())/float64(b.N), "roundtrips/op")
			b.ReportMetric(float64(count.Docs())/float64(b.N), "docs/op")
		})
	}
}

// BenchmarkRename is the price of the pattern: renaming a customer with
// 10 live and 10 delivered orders writes the source and fans out to the
// live ones, where the naive form writes the source only.
func BenchmarkRename(b *testing.B) {
	for _, form := range []string{"extref", "naive"} {
		b.Run("form="+form, func(b *testing.B) {
			ctx := context.Background()
			db, count := testenv.Monitored(b)
			ref, err := New[bson.D, bson.D, bson.D](db.Collection("customers"), db.Collection("orders"), Config{
				Field: "customer", Fields: []string{"name"},
				Frozen: bson.D{{Key: "status", Value: "delivered"}}})
			if err != nil {
				b.Fatal(err)
			}
			if err := ref.EnsureIndexes(ctx); err != nil {
				b.Fatal(err)
			}
			db.Collection("customers").InsertOne(ctx, bson.D{{Key: "_id", Value: 1}, {Key: "name", Value: "Ada"}})
			for i := 0; i < 20; i++ {
				if _, err := ref.Insert(ctx, 1, bson.D{{Key: "status", Value: []string{"open", "delivered"}[i%2]}}); err != nil {
					b.Fatal(err)
				}
			}
			var modified int64
			b.ResetTimer()
			count.Reset()
			for i := 0; b.Loop(); i++ {
				set := bson.D{{Key: "name", Value: fmt.Sprintf("Ada %d", i)}}
				if form == "naive" {
					if _, err := db.Collection("customers").UpdateOne(ctx, bson.D{{Key: "_id", Value: 1}}, bson.D{{Key: "$set", Value: set}}); err != nil {
						b.Fatal(err)
					}
					modified++
					continue
				}
				_, fo, err := ref.Update(ctx, 1, bson.D{{Key: "$set", Value: set}})
				if err != nil {
					b.Fatal(err)
				}
				modified += 1 + fo.Modified
			}
			b.ReportMetric(float64(count.Commands())/float64(b.N), "roundtrips/op")
			b.ReportMetric(float64(modified)/float64(b.N), "docswritten/op")
		})
	}
}

// BenchmarkOrderLoad loads 1,000 orders of 100 customers one Insert at a
// time and with one InsertMany: the bulk load reads the distinct
// customers once (and once more to settle) and inserts in one command.
func BenchmarkOrderLoad(b *testing.B) {
	const customers, orders = 100, 1000
	for _, form := range []string{"insert", "insertMany"} {
		b.Run("form="+form, func(b *testing.B) {
			ctx := context.Background()
			db, count := testenv.Monitored(b)
			var cs []any
			for i := range customers {
				cs = append(cs, bson.D{{Key: "_id", Value: i}, {Key: "name", Value: fmt.Sprintf("customer %d", i)}})
			}
			if _, err := db.Collection("customers").InsertMany(ctx, cs); err != nil {
				b.Fatal(err)
			}
			ref, err := New[bson.D, bson.D, bson.D](db.Collection("customers"), db.Collection("orders"), Config{
				Field: "customer", Fields: []string{"name"}})
			if err != nil {
				b.Fatal(err)
			}
			if err := ref.EnsureIndexes(ctx); err != nil {
				b.Fatal(err)
			}
			ids := make([]any, orders)
			docs := make([]bson.D, orders)
			for i := range orders {
				ids[i], docs[i] = i%customers, bson.D{{Key: "status", Value: "open"}}
			}
			b.ResetTimer()
			count.Reset()
			for b.Loop() {
				if form == "insertMany" {
					if _, err := ref.InsertMany(ctx, ids, docs); err != nil {
						b.Fatal(err)
					}
					continue
				}
				for i := range orders {
					if _, err := ref.Insert(ctx, ids[i], docs[i]); err != nil {
						b.Fatal(err)
					}
				}
			}
			b.ReportMetric(float64(count.Commands())/float64(b.N), "roundtrips/op")
			b.ReportMetric(float64(b.Elapsed().Microseconds())/float64(b.N*orders), "µs/order")
		})
	}
}
