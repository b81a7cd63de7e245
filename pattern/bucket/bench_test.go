package bucket

import (
	"context"
	"fmt"
	"testing"
	"time"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo"
	"go.mongodb.org/mongo-driver/v2/mongo/options"

	"github.com/formworkdb/formwork/internal/explaintest"
)

const (
	benchTrades   = 1000
	benchPageSize = 50
)

// BenchmarkPage reads one customer's whole history of 1000 trades in pages
// of 50, newest first with a keyset, in the bucket form (one bucket of 50
// per page) and in the naive form (one document per trade, index
// {owner: 1, at: -1}). It reports the documents the client reads per page
// and the documents the server examines per keyset page (explain).
func BenchmarkPage(b *testing.B) {
	ctx := context.Background()
	b.Run("form=bucket", func(b *testing.B) {
		s, coll := newStore(b, Config{Size: benchPageSize, ElementID: "id"})
		for _, owner := range []int{1, 2, 3} {
			for i := 0; i < benchTrades; i += benchPageSize {
				batch := make([]trade, benchPageSize)
				for j := range batch {
					batch[j] = trade{ID: fmt.Sprintf("t%d", i+j), Ticker: "MDB", Qty: i + j}
				}
				if _, err := s.AppendMany(ctx, owner, batch); err != nil {
					b.Fatal(err)
				}
			}
		}
		first, err := s.Page(ctx, 2, Cursor{})
		if err != nil {
			b.Fatal(err)
		}
		examined := examinedPerQuery(b, coll, s.PageFilter(2, first.Next), s.PageSort(), 1)
		b.ResetTimer()
		docs, pages := 0, 0
		for b.Loop() {
			var cur Cursor
			for {
				p, err := s.Page(ctx, 2, cur)
				if err != nil {
					b.Fatal(err)
				}
				if len(p.Buckets) == 0 {
					break
				}
				docs += p.DocsRead
				pages++
				cur = p.Next
			}
		}
		b.ReportMetric(float64(docs)/float64(pages), "docs/page")
		b.ReportMetric(float64(examined), "examined/page")
	})
	b.Run("form=naive", func(b *testing.B) {
		coll := newNaive(b)
		type row struct {
			ID    bson.ObjectID `bson:"_id"`
			At    time.Time     `bson:"at"`
			Trade trade         `bson:",inline"`
		}
		at, ids := time.Time{}, []bson.ObjectID(nil)
		filter := func() bson.D {
			f := bson.D{{Key: "owner", Value: 2}}
			if len(ids) > 0 {
				f = append(f, bson.E{Key: "at", Value: bson.D{{Key: "$lte", Value: at}}},
					bson.E{Key: "_id", Value: bson.D{{Key: "$nin", Value: ids}}})
			}
			return f
		}
		sort := bson.D{{Key: "at", Value: -1}}
		// The same tie-safe keyset as Page, over trades.
		page := func() (int, error) {
			c, err := coll.Find(ctx, filter(), options.Find().SetSort(sort).SetLimit(benchPageSize))
			if err != nil {
				return 0, err
			}
			var rows []row
			if err := c.All(ctx, &rows); err != nil {
				return 0, err
			}
			for _, r := range rows {
				if len(ids) > 0 && r.At.Equal(at) {
					ids = append(ids, r.ID)
				} else {
					at, ids = r.At, []bson.ObjectID{r.ID}
				}
			}
			return len(rows), nil
		}
		if _, err := page(); err != nil {
			b.Fatal(err)
		}
		examined := examinedPerQuery(b, coll, filter(), sort, benchPageSize)
		b.ResetTimer()
		docs, pages := 0, 0
		for b.Loop() {
			at, ids = time.Time{}, nil
			for {
				n, err := page()
				if err != nil {
					b.Fatal(err)
				}
				if n == 0 {
					break
				}
				docs += n
				pages++
			}
		}
		b.ReportMetric(float64(docs)/float64(pages), "docs/page")
		b.ReportMetric(float64(examined), "examined/page")
	})
}

// newNaive stores the same trades one document per trade.
func newNaive(b *testing.B) *mongo.Collection {
	ctx := context.Background()
	_, bc := newStore(b, Config{Size: 1})
	coll := bc.Database().Collection("tradesFlat")
	if _, err := coll.Indexes().CreateOne(ctx, mongo.IndexModel{Keys: bson.D{{Key: "owner", Value: 1}, {Key: "at", Value: -1}}}); err != nil {
		b.Fatal(err)
	}
	base := time.Date(2025, 5, 1, 0, 0, 0, 0, time.UTC)
	for _, owner := range []int{1, 2, 3} {
		docs := make([]any, 0, benchTrades)
		for i := range benchTrades {
			docs = append(docs, bson.D{{Key: "owner", Value: owner}, {Key: "at", Value: base.Add(time.Duration(i) * time.Second)},
				{Key: "id", Value: fmt.Sprintf("t%d", i)}, {Key: "ticker", Value: "MDB"}, {Key: "qty", Value: i}})
		}
		if _, err := coll.InsertMany(ctx, docs); err != nil {
			b.Fatal(err)
		}
	}
	return coll
}

// examinedPerQuery returns explain's totalDocsExamined for one page query.
func examinedPerQuery(b *testing.B, coll *mongo.Collection, filter, sort bson.D, limit int) int64 {
	res := explaintest.Run(b, coll.Database(), bson.D{
		{Key: "find", Value: coll.Name()}, {Key: "filter", Value: filter},
		{Key: "sort", Value: sort}, {Key: "limit", Value: limit},
	})
	if res.HasStage("SORT") {
		b.Fatalf("page query sorts in memory: %v", res)
	}
	return res.DocsExamined()
}
