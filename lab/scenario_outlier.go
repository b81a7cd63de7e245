package lab

import (
	"fmt"
	"slices"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo"
	"go.mongodb.org/mongo-driver/v2/mongo/options"

	"github.com/formworkdb/formwork/pattern/bucket"
	"github.com/formworkdb/formwork/pattern/outlier"
)

// outlierScenario: books with their buyers. The book page shows the book
// and its first 50 buyers. Naive: buyers always in their own collection,
// one document per purchase, indexed by {bookId: 1}. Outlier: a book
// embeds up to 50 buyers; the rare bestseller sends the rest to overflow
// buckets of 1000 and sets a flag, so every page is one document and the
// bestseller's full list a handful; the price is a second code path, and
// three round trips per purchase of an outlier.
var outlierScenario = scenario{
	pattern: "outlier",
	title:   "books with their buyers: the book page shows the first 50 buyers",
	steps:   6,
	run:     runOutlier,
}

// outlierThreshold is the number of buyers a book embeds.
const outlierThreshold = 50

// runOutlier generates the scenario's data, loads it in both forms and
// measures them.
func runOutlier(e *env) ([]Metric, []Latency, error) {
	ctx, g := e.ctx, e.gen
	books := e.n(100, 4)
	// Buyers per book, most popular first: a bestseller with 3,000
	// buyers (at the default scale), a runner-up, and a heavy-tailed
	// rest that mostly stays under the threshold.
	buyers := make([]int, books)
	buyers[0], buyers[1] = e.n(3000, 120), e.n(600, 60)
	for b := 2; b < books; b++ {
		buyers[b] = g.heavy(3, 1.3, 3*outlierThreshold)
	}
	slices.SortFunc(buyers[2:], func(a, b int) int { return b - a })
	user := func(b, i int) string { return fmt.Sprintf("user%d-%d", b, i) }
	e.step()

	nBooks, nBuyers := e.coll("naive_books"), e.coll("naive_buyers")
	if _, err := nBuyers.Indexes().CreateOne(ctx, mongo.IndexModel{Keys: bson.D{{Key: "bookId", Value: 1}}}); err != nil {
		return nil, nil, err
	}
	titles := make([]string, books)
	var bookDocs, buyerDocs []any
	for b := range books {
		titles[b] = g.words(3)
		bookDocs = append(bookDocs, bson.D{{Key: "_id", Value: b}, {Key: "title", Value: titles[b]}, {Key: "buyerCount", Value: buyers[b]}})
		for i := range buyers[b] {
			buyerDocs = append(buyerDocs, bson.D{{Key: "bookId", Value: b}, {Key: "user", Value: user(b, i)}})
		}
	}
	if _, err := nBooks.InsertMany(ctx, bookDocs); err != nil {
		return nil, nil, err
	}
	if _, err := nBuyers.InsertMany(ctx, buyerDocs); err != nil {
		return nil, nil, err
	}
	s, err := outlier.New[bson.D, string](e.coll("books"), e.coll("bookBuyersOverflow"),
		outlier.Config{Threshold: outlierThreshold, List: "buyers", Count: "buyerCount", Overflow: bucket.Config{Size: 1000}})
	if err != nil {
		return nil, nil, err
	}
	if err := s.EnsureIndexes(ctx); err != nil {
		return nil, nil, err
	}
	// Bulk load: each book's first buyers through Append (the embedded
	// path), an outlier's excess straight into full overflow buckets,
	// then Repair, which sets each outlier's counter and flag from what
	// is stored: the migration path for existing data.
	for b := range books {
		if _, err := s.Create(ctx, bson.D{{Key: "_id", Value: b}, {Key: "title", Value: titles[b]}}); err != nil {
			return nil, nil, err
		}
		for i := range min(buyers[b], outlierThreshold) {
			if _, err := s.Append(ctx, b, user(b, i)); err != nil {
				return nil, nil, err
			}
		}
		size := s.Config().Overflow.Size
		for i := outlierThreshold; i < buyers[b]; i += size {
			var batch []string
			for j := i; j < min(i+size, buyers[b]); j++ {
				batch = append(batch, user(b, j))
			}
			if _, err := s.Overflow().AppendMany(ctx, b, batch); err != nil {
				return nil, nil, err
			}
		}
	}
	if rep, err := s.Repair(ctx); err != nil {
		return nil, nil, err
	} else if !rep.OK() {
		return nil, nil, fmt.Errorf("outlier: bulk load left problems: %v", rep.Problems)
	}
	e.step()

	// Book pages: the popular books are also the most viewed.
	pop := g.zipfRank(books, 1.1)
	reads := e.n(400, 20)
	pages := make([]int, reads+warmup)
	for i := range pages {
		pages[i] = pop()
	}
	naivePage := func(id int, limit int64) error {
		var book bson.Raw
		if err := nBooks.FindOne(ctx, bson.D{{Key: "_id", Value: id}}).Decode(&book); err != nil {
			return err
		}
		cur, err := nBuyers.Find(ctx, bson.D{{Key: "bookId", Value: id}}, options.Find().SetLimit(limit))
		if err != nil {
			return err
		}
		var rows []bson.Raw
		return cur.All(ctx, &rows)
	}
	naiveRead, err := e.read(reads, func(i int) error { return naivePage(pages[i], outlierThreshold) })
	if err != nil {
		return nil, nil, err
	}
	patRead, err := e.read(reads, func(i int) error {
		_, err := s.Get(ctx, pages[i])
		return err
	})
	if err != nil {
		return nil, nil, err
	}
	e.step()

	// The bestseller's whole buyer list.
	full := e.n(20, 3)
	naiveAll, err := e.read(full, func(int) error { return naivePage(0, 0) })
	if err != nil {
		return nil, nil, err
	}
	patAll, err := e.read(full, func(int) error {
		_, err := s.GetAll(ctx, 0)
		return err
	})
	if err != nil {
		return nil, nil, err
	}
	e.step()

	// Purchases: of new books, which embed their first buyers, and of the
	// bestseller, which sends them to overflow (the second code path).
	writes := e.n(200, 10)
	fresh := func(i int) int { return books + i }
	for i := range writes + warmup {
		if _, err := nBooks.InsertOne(ctx, bson.D{{Key: "_id", Value: fresh(i)}}); err != nil {
			return nil, nil, err
		}
		if _, err := s.Create(ctx, bson.D{{Key: "_id", Value: fresh(i)}}); err != nil {
			return nil, nil, err
		}
	}
	naivePurchase := func(book func(int) int) (opStats, error) {
		return e.run(writes, true, func(i int) error {
			_, err := nBuyers.InsertOne(ctx, bson.D{{Key: "bookId", Value: book(i)}, {Key: "user", Value: user(book(i), 1_000_000+i)}})
			return err
		})
	}
	patPurchase := func(book func(int) int) (opStats, error) {
		return e.run(writes, true, func(i int) error {
			_, err := s.Append(ctx, book(i), user(book(i), 1_000_000+i))
			return err
		})
	}
	bestseller := func(int) int { return 0 }
	naiveTypical, err := naivePurchase(fresh)
	if err != nil {
		return nil, nil, err
	}
	patTypical, err := patPurchase(fresh)
	if err != nil {
		return nil, nil, err
	}
	naiveOutlier, err := naivePurchase(bestseller)
	if err != nil {
		return nil, nil, err
	}
	patOutlier, err := patPurchase(bestseller)
	if err != nil {
		return nil, nil, err
	}
	e.step()

	nStore, err := e.storageOf("naive_books", "naive_buyers")
	if err != nil {
		return nil, nil, err
	}
	pStore, err := e.storageOf("books", "bookBuyersOverflow")
	if err != nil {
		return nil, nil, err
	}
	e.step()

	var ms []Metric
	ms = append(ms, readMetrics("book page", naiveRead, patRead)...)
	ms = append(ms, readMetrics("bestseller's full buyer list", naiveAll, patAll)...)
	ms = append(ms, Metric{Name: "code paths for reading a book's buyers", Kind: KindRead, Unit: "paths", Better: Lower, Naive: 1, Pattern: 2})
	ms = append(ms, writeMetrics("purchase of a new book", naiveTypical, patTypical)...)
	ms = append(ms, writeMetrics("purchase of the bestseller", naiveOutlier, patOutlier)...)
	ms = append(ms, storageMetrics(nStore, pStore)...)
	return ms, []Latency{
		latency("book page", naiveRead.opStats, patRead.opStats),
		latency("purchase of the bestseller", naiveOutlier, patOutlier),
	}, nil
}
