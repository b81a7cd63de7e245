package polymorphic

import (
	"context"
	"testing"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo"
	"go.mongodb.org/mongo-driver/v2/mongo/options"

	"github.com/formworkdb/formwork/internal/explaintest"
)

// benchMethods is the number of payment methods loaded, half cards.
const benchMethods = 4000

// indexSize returns the size collStats reports for index name.
func indexSize(b *testing.B, coll *mongo.Collection, name string) float64 {
	var st bson.Raw
	if err := coll.Database().RunCommand(context.Background(), bson.D{{Key: "collStats", Value: coll.Name()}}).Decode(&st); err != nil {
		b.Fatal(err)
	}
	v, ok := st.Lookup("indexSizes", name).AsInt64OK()
	if !ok {
		b.Fatalf("no size for %s in %v", name, st.Lookup("indexSizes"))
	}
	return float64(v)
}

// BenchmarkExpiringCards finds the cards expiring in the next six months
// (of 4000 methods, half cards) three ways: the pattern's query, which
// repeats the discriminator and scans the card's partial index; the naive
// form, a full index on card.expiresAt queried without the
// discriminator; and the mistake, the partial index queried without the
// discriminator (a collection scan). It reports explain's keys and
// documents examined and the index's size: the partial index holds only
// the cards, the full one an entry (null) per bank account too.
func BenchmarkExpiringCards(b *testing.B) {
	ctx := context.Background()
	cond := bson.D{{Key: "card.expiresAt", Value: bson.D{{Key: "$lt", Value: t0.AddDate(0, 6, 0)}}}}
	run := func(b *testing.B, coll *mongo.Collection, filter bson.D, index string) {
		res := explaintest.Run(b, coll.Database(), bson.D{{Key: "find", Value: coll.Name()}, {Key: "filter", Value: filter}})
		want := res.NReturned()
		for b.Loop() {
			cur, err := coll.Find(ctx, filter)
			if err != nil {
				b.Fatal(err)
			}
			var docs []bson.Raw
			if err := cur.All(ctx, &docs); err != nil {
				b.Fatal(err)
			}
			if int64(len(docs)) != want {
				b.Fatalf("%d documents, want %d", len(docs), want)
			}
		}
		b.ReportMetric(float64(res.DocsExamined()), "docsExamined/op")
		b.ReportMetric(float64(res.KeysExamined()), "keysExamined/op")
		b.ReportMetric(indexSize(b, coll, index), "indexBytes")
	}
	b.Run("pattern=partial+discriminator", func(b *testing.B) {
		m := newMethods(b, Config{})
		if err := m.c.EnsureIndexes(ctx); err != nil {
			b.Fatal(err)
		}
		loadMethods(b, m, benchMethods)
		f, err := m.cards.Filter(cond)
		if err != nil {
			b.Fatal(err)
		}
		run(b, m.coll, f, "card_card.expiresAt_1")
	})
	b.Run("naive=full-index", func(b *testing.B) {
		m := newMethods(b, Config{})
		if _, err := m.coll.Indexes().CreateOne(ctx, mongo.IndexModel{Keys: bson.D{{Key: "card.expiresAt", Value: 1}},
			Options: options.Index().SetName("full")}); err != nil {
			b.Fatal(err)
		}
		loadMethods(b, m, benchMethods)
		run(b, m.coll, cond, "full")
	})
	b.Run("mistake=partial-without-discriminator", func(b *testing.B) {
		m := newMethods(b, Config{})
		if err := m.c.EnsureIndexes(ctx); err != nil {
			b.Fatal(err)
		}
		loadMethods(b, m, benchMethods)
		run(b, m.coll, cond, "card_card.expiresAt_1")
	})
}
