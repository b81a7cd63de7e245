package lab

import (
	"slices"
	"time"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo"
	"go.mongodb.org/mongo-driver/v2/mongo/options"

	"github.com/formworkdb/formwork/pattern/subset"
)

// subsetScenario: products with reviews. The product page shows the
// product and its 5 newest reviews. Naive: the page reads the product,
// then the newest 5 reviews through {productId: 1, at: -1, _id: -1}.
// Subset: the product embeds copies of its 5 newest reviews, so the page
// is one document; adding a review writes twice and deleting one refills
// the copies from the reviews collection.
var subsetScenario = scenario{
	pattern: "subset",
	title:   "products with reviews: the product page shows the 5 newest reviews",
	steps:   6,
	run:     runSubset,
}

// subsetSize is the number of reviews on the product page.
const subsetSize = 5

// runSubset generates the scenario's data, loads it in both forms and
// measures them.
func runSubset(e *env) ([]Metric, []Latency, error) {
	ctx, g := e.ctx, e.gen
	products := e.n(200, 4)
	// At least subsetSize reviews each, heavy-tailed: most products have
	// a handful more, a few have hundreds.
	counts := make([]int, products)
	for p := range counts {
		counts[p] = g.heavy(subsetSize, 1.3, e.n(2000, 40))
	}
	// The most reviewed products are the most viewed: product k is the
	// k-th most popular.
	slices.SortFunc(counts, func(a, b int) int { return b - a })
	t0 := time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC)
	var productDocs, reviewDocs []any
	for p := range products {
		productDocs = append(productDocs, bson.D{{Key: "_id", Value: p}, {Key: "name", Value: g.words(3)},
			{Key: "price", Value: float64(g.intn(20000)) / 100}, {Key: "description", Value: g.words(20)}})
		for range counts[p] {
			reviewDocs = append(reviewDocs, bson.D{{Key: "_id", Value: bson.NewObjectID()}, {Key: "productId", Value: p},
				{Key: "at", Value: t0.Add(time.Duration(g.intn(365*24*60)) * time.Minute)},
				{Key: "author", Value: g.name()}, {Key: "stars", Value: int32(1 + g.intn(5))},
				{Key: "text", Value: g.words(g.heavy(5, 1.5, 200))}})
		}
	}
	e.step()

	// Naive form.
	nProducts, nReviews := e.coll("naive_products"), e.coll("naive_reviews")
	order := bson.D{{Key: "at", Value: -1}, {Key: "_id", Value: -1}}
	if _, err := nReviews.Indexes().CreateOne(ctx, mongo.IndexModel{Keys: bson.D{{Key: "productId", Value: 1}, {Key: "at", Value: -1}, {Key: "_id", Value: -1}}}); err != nil {
		return nil, nil, err
	}
	if _, err := nProducts.InsertMany(ctx, productDocs); err != nil {
		return nil, nil, err
	}
	if _, err := nReviews.InsertMany(ctx, reviewDocs); err != nil {
		return nil, nil, err
	}
	// Subset form: the same data, the copies filled by Refill (the
	// backfill of existing data).
	pProducts, pReviews := e.coll("products"), e.coll("reviews")
	w, err := subset.New[bson.D, bson.D](pProducts, pReviews, subset.Config{Parent: "productId", Time: "at", Array: "recentReviews", Size: subsetSize})
	if err != nil {
		return nil, nil, err
	}
	if err := w.EnsureIndexes(ctx); err != nil {
		return nil, nil, err
	}
	if _, err := pProducts.InsertMany(ctx, productDocs); err != nil {
		return nil, nil, err
	}
	if _, err := pReviews.InsertMany(ctx, reviewDocs); err != nil {
		return nil, nil, err
	}
	for p := range products {
		if _, err := w.Refill(ctx, p); err != nil {
			return nil, nil, err
		}
	}
	e.step()

	// The product page, products drawn by Zipf popularity.
	pop := g.zipfRank(products, 1.2)
	reads := e.n(400, 20)
	pages := make([]int, reads+warmup)
	for i := range pages {
		pages[i] = pop()
	}
	naiveRead, err := e.read(reads, func(i int) error {
		var prod bson.Raw
		if err := nProducts.FindOne(ctx, bson.D{{Key: "_id", Value: pages[i]}}).Decode(&prod); err != nil {
			return err
		}
		cur, err := nReviews.Find(ctx, bson.D{{Key: "productId", Value: pages[i]}}, options.Find().SetSort(order).SetLimit(subsetSize))
		if err != nil {
			return err
		}
		var rs []bson.Raw
		return cur.All(ctx, &rs)
	})
	if err != nil {
		return nil, nil, err
	}
	patRead, err := e.read(reads, func(i int) error {
		var prod bson.Raw
		return pProducts.FindOne(ctx, bson.D{{Key: "_id", Value: pages[i]}}).Decode(&prod)
	})
	if err != nil {
		return nil, nil, err
	}
	e.step()

	// New reviews, on popular products.
	writes := e.n(200, 10)
	added := make([]bson.D, writes+warmup)
	now := t0.Add(366 * 24 * time.Hour)
	for i := range added {
		added[i] = bson.D{{Key: "_id", Value: bson.NewObjectID()}, {Key: "productId", Value: pop()},
			{Key: "at", Value: now.Add(time.Duration(i) * time.Second)}, {Key: "author", Value: g.name()},
			{Key: "stars", Value: int32(1 + g.intn(5))}, {Key: "text", Value: g.words(g.heavy(5, 1.5, 200))}}
	}
	naiveAdd, err := e.run(writes, true, func(i int) error {
		_, err := nReviews.InsertOne(ctx, added[i])
		return err
	})
	if err != nil {
		return nil, nil, err
	}
	patAdd, err := e.run(writes, true, func(i int) error {
		_, err := w.Add(ctx, added[i])
		return err
	})
	if err != nil {
		return nil, nil, err
	}
	e.step()

	// Deleting those reviews again (a moderator removes fresh spam): each
	// is among its product's newest, so the subset refills.
	naiveDel, err := e.run(writes, true, func(i int) error {
		_, err := nReviews.DeleteOne(ctx, bson.D{{Key: "_id", Value: added[i][0].Value}})
		return err
	})
	if err != nil {
		return nil, nil, err
	}
	patDel, err := e.run(writes, true, func(i int) error {
		_, err := w.Delete(ctx, added[i][0].Value)
		return err
	})
	if err != nil {
		return nil, nil, err
	}
	e.step()

	nStore, err := e.storageOf("naive_products", "naive_reviews")
	if err != nil {
		return nil, nil, err
	}
	pStore, err := e.storageOf("products", "reviews")
	if err != nil {
		return nil, nil, err
	}
	e.step()

	var ms []Metric
	ms = append(ms, readMetrics("product page", naiveRead, patRead)...)
	ms = append(ms, writeMetrics("add a review", naiveAdd, patAdd)...)
	ms = append(ms, writeMetrics("delete a review (refill)", naiveDel, patDel)...)
	ms = append(ms, storageMetrics(nStore, pStore)...)
	return ms, []Latency{
		latency("product page", naiveRead.opStats, patRead.opStats),
		latency("add a review", naiveAdd, patAdd),
	}, nil
}
