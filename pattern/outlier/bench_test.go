package outlier

import (
	"context"
	"fmt"
	"testing"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo"
	"go.mongodb.org/mongo-driver/v2/mongo/options"

	"github.com/formworkdb/formwork/pattern/bucket"
)

const (
	benchThreshold = 50
	benchPopular   = 3000 // buyers of the bestseller
	benchTypical   = 20   // buyers of every other book
	benchBooks     = 10
)

// buyersOf returns the number of buyers of book id in the bench data.
func buyersOf(id int) int {
	if id == 0 {
		return benchPopular
	}
	return benchTypical
}

// BenchmarkItemPage renders a book page, the book and its first 50 buyers,
// for the bestseller (3000 buyers) and a typical book (20 buyers), with the
// outlier pattern (Threshold 50, overflow buckets of 1000) and with the
// naive always-separate form (one buyer document per purchase, index
// {bookId: 1}). It reports the documents read per page.
func BenchmarkItemPage(b *testing.B) {
	ctx := context.Background()
	for _, item := range []struct {
		name string
		id   int
	}{{"popular", 0}, {"typical", 1}} {
		b.Run("form=outlier/item="+item.name, func(b *testing.B) {
			s := benchOutlier(b)
			docs, pages := 0, 0
			for b.Loop() {
				p, err := s.Get(ctx, item.id)
				if err != nil {
					b.Fatal(err)
				}
				if len(p.Elements) != min(buyersOf(item.id), benchThreshold) {
					b.Fatalf("%d buyers on the page", len(p.Elements))
				}
				docs++
				pages++
			}
			b.ReportMetric(float64(docs)/float64(pages), "docs/page")
		})
		b.Run("form=separate/item="+item.name, func(b *testing.B) {
			books, buyers := benchSeparate(b)
			docs, pages := 0, 0
			for b.Loop() {
				n, err := separatePage(ctx, books, buyers, item.id, benchThreshold)
				if err != nil {
					b.Fatal(err)
				}
				docs += n
				pages++
			}
			b.ReportMetric(float64(docs)/float64(pages), "docs/page")
		})
	}
}

// BenchmarkAllBuyers reads the bestseller's whole buyer list.
func BenchmarkAllBuyers(b *testing.B) {
	ctx := context.Background()
	b.Run("form=outlier", func(b *testing.B) {
		s := benchOutlier(b)
		ov, err := s.Overflow().Buckets(ctx, 0)
		if err != nil {
			b.Fatal(err)
		}
		docs, reads := 0, 0
		for b.Loop() {
			p, err := s.GetAll(ctx, 0)
			if err != nil {
				b.Fatal(err)
			}
			if len(p.Elements) != benchPopular || !p.OverflowRead {
				b.Fatalf("%d buyers", len(p.Elements))
			}
			docs += 1 + len(ov)
			reads++
		}
		b.ReportMetric(float64(docs)/float64(reads), "docs/read")
	})
	b.Run("form=separate", func(b *testing.B) {
		books, buyers := benchSeparate(b)
		docs, reads := 0, 0
		for b.Loop() {
			n, err := separatePage(ctx, books, buyers, 0, 0)
			if err != nil {
				b.Fatal(err)
			}
			if n != 1+benchPopular {
				b.Fatalf("%d documents", n)
			}
			docs += n
			reads++
		}
		b.ReportMetric(float64(docs)/float64(reads), "docs/read")
	})
}

// benchOutlier loads the bench books with the outlier pattern.
func benchOutlier(b *testing.B) *Store[bson.D, string] {
	ctx := context.Background()
	s, _, _ := newStore(b, Config{Threshold: benchThreshold, Overflow: bucket.Config{Size: 1000}})
	for id := range benchBooks {
		if err := mk(ctx, s, id, bson.D{{Key: "title", Value: fmt.Sprintf("book %d", id)}}); err != nil {
			b.Fatal(err)
		}
		for u := range buyersOf(id) {
			if _, err := s.Append(ctx, id, fmt.Sprintf("user%d", u)); err != nil {
				b.Fatal(err)
			}
		}
	}
	return s
}

// benchSeparate loads the bench books in the always-separate form.
func benchSeparate(b *testing.B) (books, buyers *mongo.Collection) {
	ctx := context.Background()
	_, books, _ = newStore(b, Config{Threshold: 1})
	buyers = books.Database().Collection("buyers")
	if _, err := buyers.Indexes().CreateOne(ctx, mongo.IndexModel{Keys: bson.D{{Key: "bookId", Value: 1}}}); err != nil {
		b.Fatal(err)
	}
	for id := range benchBooks {
		if _, err := books.InsertOne(ctx, bson.D{{Key: "_id", Value: id}, {Key: "title", Value: fmt.Sprintf("book %d", id)},
			{Key: "buyerCount", Value: buyersOf(id)}}); err != nil {
			b.Fatal(err)
		}
		docs := make([]any, 0, buyersOf(id))
		for u := range buyersOf(id) {
			docs = append(docs, bson.D{{Key: "bookId", Value: id}, {Key: "user", Value: fmt.Sprintf("user%d", u)}})
		}
		if _, err := buyers.InsertMany(ctx, docs); err != nil {
			b.Fatal(err)
		}
	}
	return books, buyers
}

// separatePage reads a book and up to limit of its buyers (0: all) and
// returns the documents read.
func separatePage(ctx context.Context, books, buyers *mongo.Collection, id, limit int) (int, error) {
	var book bson.Raw
	if err := books.FindOne(ctx, bson.D{{Key: "_id", Value: id}}).Decode(&book); err != nil {
		return 0, err
	}
	c, err := buyers.Find(ctx, bson.D{{Key: "bookId", Value: id}}, options.Find().SetLimit(int64(limit)))
	if err != nil {
		return 0, err
	}
	var rows []bson.Raw
	if err := c.All(ctx, &rows); err != nil {
		return 0, err
	}
	return 1 + len(rows), nil
}
