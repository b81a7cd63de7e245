package lab

import (
	"slices"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo"
	"go.mongodb.org/mongo-driver/v2/mongo/options"

	"github.com/formworkdb/formwork/pattern/computed"
)

// computedScenario: products with ratings. The product page shows the
// average rating. Naive: the page reads every rating of the product
// through {productId: 1} and averages them. Computed: the product keeps
// {sum, count}, maintained with $inc on every rating write, so the page
// reads one document; each rating costs a second write, a writer that
// dies between the two leaves the total off (drift), and only a
// recompute over the ratings repairs it.
var computedScenario = scenario{
	pattern: "computed",
	title:   "products with ratings: the product page shows the average rating",
	steps:   6,
	run:     runComputed,
}

// runComputed generates the scenario's data, loads it in both forms and
// measures them.
func runComputed(e *env) ([]Metric, []Latency, error) {
	ctx, g := e.ctx, e.gen
	products := e.n(200, 4)
	// Ratings per product are heavy-tailed, and the most rated products
	// are the most viewed: product k is the k-th most popular.
	counts := make([]int, products)
	for p := range counts {
		counts[p] = g.heavy(1, 1.1, e.n(3000, 60))
	}
	slices.SortFunc(counts, func(a, b int) int { return b - a })
	var productDocs, ratingDocs []any
	for p := range products {
		productDocs = append(productDocs, bson.D{{Key: "_id", Value: p}, {Key: "name", Value: g.words(3)}})
		for range counts[p] {
			ratingDocs = append(ratingDocs, bson.D{{Key: "productId", Value: p}, {Key: "stars", Value: int32(1 + g.intn(5))},
				{Key: "userId", Value: g.intn(1_000_000)}})
		}
	}
	e.step()

	nProducts, nRatings := e.coll("naive_products"), e.coll("naive_ratings")
	if _, err := nRatings.Indexes().CreateOne(ctx, mongo.IndexModel{Keys: bson.D{{Key: "productId", Value: 1}}}); err != nil {
		return nil, nil, err
	}
	if _, err := nProducts.InsertMany(ctx, productDocs); err != nil {
		return nil, nil, err
	}
	if _, err := nRatings.InsertMany(ctx, ratingDocs); err != nil {
		return nil, nil, err
	}
	pProducts, pRatings := e.coll("products"), e.coll("ratings")
	m, err := computed.New[bson.D, bson.D](pProducts, pRatings, computed.Config{Parent: "productId", Value: "stars", Target: "rating"})
	if err != nil {
		return nil, nil, err
	}
	if err := m.EnsureIndexes(ctx); err != nil {
		return nil, nil, err
	}
	if _, err := pProducts.InsertMany(ctx, productDocs); err != nil {
		return nil, nil, err
	}
	if _, err := pRatings.InsertMany(ctx, ratingDocs); err != nil {
		return nil, nil, err
	}
	for p := range products {
		if _, err := m.Recompute(ctx, p); err != nil {
			return nil, nil, err
		}
	}
	e.step()

	pop := g.zipfRank(products, 1.2)
	reads := e.n(400, 20)
	pages := make([]int, reads+warmup)
	for i := range pages {
		pages[i] = pop()
	}
	naiveRead, err := e.read(reads, func(i int) error {
		cur, err := nRatings.Find(ctx, bson.D{{Key: "productId", Value: pages[i]}},
			options.Find().SetProjection(bson.D{{Key: "_id", Value: 0}, {Key: "stars", Value: 1}}))
		if err != nil {
			return err
		}
		defer cur.Close(ctx)
		var sum, n int64
		for cur.Next(ctx) {
			sum += int64(cur.Current.Lookup("stars").Int32())
			n++
		}
		_ = float64(sum) / float64(max(n, 1))
		return cur.Err()
	})
	if err != nil {
		return nil, nil, err
	}
	patRead, err := e.read(reads, func(i int) error {
		t, err := m.Get(ctx, pages[i])
		_, _ = t.Average()
		return err
	})
	if err != nil {
		return nil, nil, err
	}
	e.step()

	writes := e.n(200, 10)
	fresh := make([]bson.D, writes+warmup)
	for i := range fresh {
		fresh[i] = bson.D{{Key: "productId", Value: pop()}, {Key: "stars", Value: int32(1 + g.intn(5))}, {Key: "userId", Value: g.intn(1_000_000)}}
	}
	naiveAdd, err := e.run(writes, true, func(i int) error {
		_, err := nRatings.InsertOne(ctx, fresh[i])
		return err
	})
	if err != nil {
		return nil, nil, err
	}
	patAdd, err := e.run(writes, true, func(i int) error {
		_, err := m.Insert(ctx, fresh[i])
		return err
	})
	if err != nil {
		return nil, nil, err
	}
	e.step()

	// Drift: 1% of the rating writes die between the rating and the $inc
	// (the rating is written, the total is not). The naive average is
	// always right; the stored totals stay wrong until a recompute, whose
	// cost is a scan of every rating.
	crashed := max(1, writes/100)
	for range crashed {
		if _, err := pRatings.InsertOne(ctx, bson.D{{Key: "productId", Value: pop()}, {Key: "stars", Value: int32(1 + g.intn(5))}}); err != nil {
			return nil, nil, err
		}
	}
	rep, err := m.Verify(ctx)
	if err != nil {
		return nil, nil, err
	}
	drifted := float64(len(rep.Drifted))
	repairDocs, repairKeys, err := e.examined(1, func(int) error {
		_, err := m.Repair(ctx)
		return err
	})
	if err != nil {
		return nil, nil, err
	}
	e.step()

	nStore, err := e.storageOf("naive_products", "naive_ratings")
	if err != nil {
		return nil, nil, err
	}
	pStore, err := e.storageOf("products", "ratings")
	if err != nil {
		return nil, nil, err
	}
	e.step()

	var ms []Metric
	ms = append(ms, readMetrics("average rating", naiveRead, patRead)...)
	ms = append(ms, writeMetrics("add a rating", naiveAdd, patAdd)...)
	ms = append(ms,
		Metric{Name: "products with a wrong average after 1% of writes die midway", Kind: KindAccuracy, Unit: "products", Better: Lower, Naive: 0, Pattern: drifted},
		Metric{Name: "recompute (Repair): documents examined", Kind: KindWrite, Unit: "docs", Better: Lower, Naive: 0, Pattern: repairDocs},
		Metric{Name: "recompute (Repair): index keys examined", Kind: KindWrite, Unit: "keys", Better: Lower, Naive: 0, Pattern: repairKeys},
	)
	ms = append(ms, storageMetrics(nStore, pStore)...)
	return ms, []Latency{
		latency("average rating", naiveRead.opStats, patRead.opStats),
		latency("add a rating", naiveAdd, patAdd),
	}, nil
}
