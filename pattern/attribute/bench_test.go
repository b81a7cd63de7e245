package attribute

import (
	"context"
	"fmt"
	"testing"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo"
)

const (
	benchDocs  = 2000
	benchNames = 30 // optional attributes besides color and size
	benchPer   = 6  // optional attributes per product
)

// benchAttrs returns product i's attributes: a color (8 values), a size
// (5 values) and 6 of 30 optional attributes.
func benchAttrs(i int) []Attr {
	attrs := []Attr{
		{"color", []string{"blue", "red", "green", "black", "white", "grey", "pink", "teal"}[i%8]},
		{"size", []string{"XS", "S", "M", "L", "XL"}[i%5]},
	}
	for j := range benchPer {
		n := (i + j*5) % benchNames
		attrs = append(attrs, Attr{fmt.Sprintf("a%d", n), (i * (j + 1)) % 10})
	}
	return attrs
}

// BenchmarkMultiAttributeQuery finds the products with color blue and size
// L (50 of 2000) in the attribute form (one compound multikey index), the
// wildcard form (one wildcard index), and the naive form with one
// top-level field per attribute, indexed per field (32 indexes) or not at
// all. It reports the secondary indexes the form needs to serve a query
// on any attribute, and explain's documents and keys examined per query.
func BenchmarkMultiAttributeQuery(b *testing.B) {
	ctx := context.Background()
	const matches = 50
	run := func(b *testing.B, coll *mongo.Collection, filter bson.D, indexes int) {
		res := explainFind(b, coll, filter)
		if n := res.NReturned(); n != matches {
			b.Fatalf("%d returned, want %d", n, matches)
		}
		for b.Loop() {
			c, err := coll.Find(ctx, filter)
			if err != nil {
				b.Fatal(err)
			}
			var docs []bson.Raw
			if err := c.All(ctx, &docs); err != nil {
				b.Fatal(err)
			}
			if len(docs) != matches {
				b.Fatalf("%d documents", len(docs))
			}
		}
		b.ReportMetric(float64(indexes), "indexes")
		b.ReportMetric(float64(res.DocsExamined()), "docsExamined/op")
		b.ReportMetric(float64(res.KeysExamined()), "keysExamined/op")
	}
	for _, wildcard := range []bool{false, true} {
		name := "form=attribute"
		if wildcard {
			name = "form=wildcard"
		}
		b.Run(name, func(b *testing.B) {
			s, coll := newStore(b, wildcard, Config{})
			for i := range benchDocs {
				if _, err := s.Insert(ctx, bson.D{{Key: "name", Value: fmt.Sprintf("p%d", i)}}, benchAttrs(i)...); err != nil {
					b.Fatal(err)
				}
			}
			q, err := s.Filter(All(Where("color").Eq("blue"), Where("size").Eq("L")))
			if err != nil {
				b.Fatal(err)
			}
			run(b, coll, q, 1)
		})
	}
	for _, indexed := range []bool{true, false} {
		b.Run(fmt.Sprintf("form=fields/indexed=%v", indexed), func(b *testing.B) {
			_, coll := newStore(b, false, Config{})
			coll = coll.Database().Collection("flat")
			indexes := 0
			if indexed {
				var models []mongo.IndexModel
				for _, f := range []string{"color", "size"} {
					models = append(models, mongo.IndexModel{Keys: bson.D{{Key: f, Value: 1}}})
				}
				for n := range benchNames {
					models = append(models, mongo.IndexModel{Keys: bson.D{{Key: fmt.Sprintf("a%d", n), Value: 1}}})
				}
				if _, err := coll.Indexes().CreateMany(ctx, models); err != nil {
					b.Fatal(err)
				}
				indexes = len(models)
			}
			docs := make([]any, 0, benchDocs)
			for i := range benchDocs {
				d := bson.D{{Key: "name", Value: fmt.Sprintf("p%d", i)}}
				for _, a := range benchAttrs(i) {
					d = append(d, bson.E{Key: a.Name, Value: a.Value})
				}
				docs = append(docs, d)
			}
			if _, err := coll.InsertMany(ctx, docs); err != nil {
				b.Fatal(err)
			}
			run(b, coll, bson.D{{Key: "color", Value: "blue"}, {Key: "size", Value: "L"}}, indexes)
		})
	}
}
