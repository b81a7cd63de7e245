package workload

import (
	"context"
	"fmt"
	"math/rand/v2"
	"sync/atomic"
	"time"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo"
)

// load inserts n documents {_id: i, g: "x", seq: i, g2: "x", seq2: i,
// n: 0, pad} in batches of 1,000.
func load(ctx context.Context, c *mongo.Collection, n int) error {
	pad := padding(150)
	batch := make([]any, 0, 1000)
	for i := 0; i < n; i++ {
		batch = append(batch, bson.D{{Key: "_id", Value: i}, {Key: "g", Value: "x"}, {Key: "seq", Value: i}, {Key: "g2", Value: "x"}, {Key: "seq2", Value: i}, {Key: "n", Value: 0}, {Key: "pad", Value: pad}})
		if len(batch) == cap(batch) || i == n-1 {
			if _, err := c.InsertMany(ctx, batch); err != nil {
				return err
			}
			batch = batch[:0]
		}
	}
	return nil
}

// pointFind finds single documents by a secondary index on 10,000.
func pointFind(ctx context.Context, db *mongo.Database, d time.Duration) (Result, error) {
	const docs = 10000
	c, err := fresh(ctx, db, "point_find")
	if err != nil {
		return Result{}, err
	}
	defer c.Drop(ctx)
	if err := load(ctx, c, docs); err != nil {
		return Result{}, err
	}
	if _, err := c.Indexes().CreateOne(ctx, mongo.IndexModel{Keys: bson.D{{Key: "seq", Value: 1}}}); err != nil {
		return Result{}, err
	}
	ops, took, err := runFor(ctx, 1, d, func(ctx context.Context, _, i int) error {
		var out bson.Raw
		return c.FindOne(ctx, bson.D{{Key: "seq", Value: (i * 7919) % docs}}).Decode(&out)
	})
	return Result{Ops: ops, Seconds: took.Seconds(), Metrics: map[string]float64{"finds/s": float64(ops) / took.Seconds()}}, err
}

// indexScan counts n documents through a {g: 1, seq: 1} index (an index
// scan that fetches every document) and through a collection scan (the
// same predicate on unindexed copies of the fields), alternately, at
// least once each, and reports the fastest time of each per document and
// their ratio (MongoDB's own target: at most 2).
func indexScan(n int) func(context.Context, *mongo.Database, time.Duration) (Result, error) {
	return func(ctx context.Context, db *mongo.Database, d time.Duration) (Result, error) {
		c, err := fresh(ctx, db, "index_scan")
		if err != nil {
			return Result{}, err
		}
		defer c.Drop(ctx)
		if err := load(ctx, c, n); err != nil {
			return Result{}, err
		}
		if _, err := c.Indexes().CreateOne(ctx, mongo.IndexModel{Keys: bson.D{{Key: "g", Value: 1}, {Key: "seq", Value: 1}}}); err != nil {
			return Result{}, err
		}
		indexed := bson.D{{Key: "g", Value: "x"}, {Key: "seq", Value: bson.D{{Key: "$gte", Value: 0}}}}
		unindexed := bson.D{{Key: "g2", Value: "x"}, {Key: "seq2", Value: bson.D{{Key: "$gte", Value: 0}}}}
		best := [2]time.Duration{time.Hour, time.Hour}
		// At least one count of each kind, however short d is.
		start := time.Now()
		ops := 0
		for ; ops < 2 || time.Since(start) < d; ops++ {
			if err := ctx.Err(); err != nil {
				return Result{}, err
			}
			t0 := time.Now()
			got, err := c.CountDocuments(ctx, [2]bson.D{indexed, unindexed}[ops%2])
			if err != nil {
				return Result{}, err
			}
			if got != int64(n) {
				return Result{}, fmt.Errorf("count = %d, want %d", got, n)
			}
			best[ops%2] = min(best[ops%2], time.Since(t0))
		}
		took := time.Since(start)
		ix, coll := float64(best[0].Nanoseconds())/float64(n), float64(best[1].Nanoseconds())/float64(n)
		return Result{Ops: ops, Seconds: took.Seconds(), Metrics: map[string]float64{
			"ix-ns/doc": ix, "coll-ns/doc": coll, "ix/coll": ix / coll,
		}}, nil
	}
}

// mixed runs 50% point reads, 40% $inc updates and 10% inserts from n
// clients on 10,000 documents and reports the reads' p50 and p99.
func mixed(n int) func(context.Context, *mongo.Database, time.Duration) (Result, error) {
	return func(ctx context.Context, db *mongo.Database, d time.Duration) (Result, error) {
		const docs = 10000
		c, err := fresh(ctx, db, "mixed")
		if err != nil {
			return Result{}, err
		}
		defer c.Drop(ctx)
		if err := load(ctx, c, docs); err != nil {
			return Result{}, err
		}
		var inserted atomic.Int64
		inserted.Store(docs)
		pad := padding(100)
		reads := make([][]time.Duration, n)
		ops, took, err := runFor(ctx, n, d, func(ctx context.Context, client, _ int) error {
			switch r := rand.IntN(100); {
			case r < 50:
				t0 := time.Now()
				var out bson.Raw
				err := c.FindOne(ctx, bson.D{{Key: "_id", Value: rand.IntN(docs)}}).Decode(&out)
				reads[client] = append(reads[client], time.Since(t0))
				return err
			case r < 90:
				_, err := c.UpdateOne(ctx, bson.D{{Key: "_id", Value: rand.IntN(docs)}}, bson.D{{Key: "$inc", Value: bson.D{{Key: "n", Value: 1}}}})
				return err
			default:
				_, err := c.InsertOne(ctx, bson.D{{Key: "_id", Value: inserted.Add(1)}, {Key: "n", Value: 0}, {Key: "pad", Value: pad}})
				return err
			}
		})
		s := sortedAll(reads)
		return Result{Ops: ops, Seconds: took.Seconds(), Metrics: map[string]float64{
			"ops/s":       float64(ops) / took.Seconds(),
			"read-p50-ms": ms(percentile(s, 0.50)),
			"read-p99-ms": ms(percentile(s, 0.99)),
		}}, err
	}
}
