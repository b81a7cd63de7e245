package workload

import (
	"context"
	"fmt"
	"time"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo"
	"go.mongodb.org/mongo-driver/v2/mongo/options"
)

// insertOne returns the workload of acknowledged single-document inserts
// from n concurrent clients.
func insertOne(n int) func(context.Context, *mongo.Database, time.Duration) (Result, error) {
	return func(ctx context.Context, db *mongo.Database, d time.Duration) (Result, error) {
		c, err := fresh(ctx, db, "insert_one")
		if err != nil {
			return Result{}, err
		}
		defer c.Drop(ctx)
		before, logged := logStats(ctx, db.Client())
		ops, took, err := runFor(ctx, n, d, func(ctx context.Context, _, i int) error {
			_, err := c.InsertOne(ctx, bson.D{{Key: "_id", Value: i}, {Key: "name", Value: "user"}, {Key: "n", Value: i}})
			return err
		})
		m := map[string]float64{"inserts/s": float64(ops) / took.Seconds()}
		if after, ok := logStats(ctx, db.Client()); logged && ok && after.syncs > before.syncs {
			syncs := float64(after.syncs - before.syncs)
			m["log-writes/sync"] = float64(after.writes-before.writes) / syncs
			m["log-µs/sync"] = float64(after.micros-before.micros) / syncs
		}
		return Result{Ops: ops, Seconds: took.Seconds(), Metrics: m}, err
	}
}

// logCounters are serverStatus's wiredTiger.log counters that say how
// many writes one journal sync carried (group commit).
type logCounters struct {
	writes, syncs, micros int64
}

// logStats reads them; ok is false where the server has no journal
// figures (an in-memory engine, a user without serverStatus).
func logStats(ctx context.Context, client *mongo.Client) (logCounters, bool) {
	raw, err := client.Database("admin").RunCommand(ctx, bson.D{{Key: "serverStatus", Value: 1}}).Raw()
	if err != nil {
		return logCounters{}, false
	}
	num := func(name string) (int64, bool) {
		v, err := raw.LookupErr("wiredTiger", "log", name)
		if err != nil {
			return 0, false
		}
		return v.AsInt64OK()
	}
	w, ok1 := num("log write operations")
	s, ok2 := num("log sync operations")
	us, ok3 := num("log sync time duration (usecs)")
	return logCounters{writes: w, syncs: s, micros: us}, ok1 && ok2 && ok3
}

// insertMany inserts batches of 1,000 documents from one client.
func insertMany(ctx context.Context, db *mongo.Database, d time.Duration) (Result, error) {
	const batch = 1000
	c, err := fresh(ctx, db, "insert_many")
	if err != nil {
		return Result{}, err
	}
	defer c.Drop(ctx)
	docs := make([]any, batch)
	ops, took, err := runFor(ctx, 1, d, func(ctx context.Context, _, i int) error {
		for j := range docs {
			id := i*batch + j
			docs[j] = bson.D{{Key: "_id", Value: id}, {Key: "name", Value: "user"}, {Key: "n", Value: id}, {Key: "tags", Value: bson.A{"a", "b"}}}
		}
		_, err := c.InsertMany(ctx, docs)
		return err
	})
	return Result{Ops: ops, Seconds: took.Seconds(), Metrics: map[string]float64{"docs/s": float64(ops*batch) / took.Seconds()}}, err
}

// pushLarge appends with $push and $slice to an array in a document of
// about 100 KB, which keeps its size, and reports the rate at which
// whole documents are rewritten.
func pushLarge(ctx context.Context, db *mongo.Database, d time.Duration) (Result, error) {
	const items = 1000
	c, err := fresh(ctx, db, "push_large")
	if err != nil {
		return Result{}, err
	}
	defer c.Drop(ctx)
	pad := padding(90)
	arr := make(bson.A, items)
	for i := range arr {
		arr[i] = fmt.Sprintf("%08d%s", i, pad)
	}
	doc := bson.D{{Key: "_id", Value: 1}, {Key: "items", Value: arr}}
	raw, err := bson.Marshal(doc)
	if err != nil {
		return Result{}, err
	}
	if _, err := c.InsertOne(ctx, doc); err != nil {
		return Result{}, err
	}
	ops, took, err := runFor(ctx, 1, d, func(ctx context.Context, _, i int) error {
		push := bson.D{{Key: "$push", Value: bson.D{{Key: "items", Value: bson.D{
			{Key: "$each", Value: bson.A{fmt.Sprintf("%08d%s", items+i, pad)}}, {Key: "$slice", Value: -items}}}}}}
		_, err := c.UpdateOne(ctx, bson.D{{Key: "_id", Value: 1}}, push, options.UpdateOne())
		return err
	})
	return Result{Ops: ops, Seconds: took.Seconds(), Metrics: map[string]float64{
		"pushes/s": float64(ops) / took.Seconds(),
		"MB/s":     float64(len(raw)) * float64(ops) / took.Seconds() / 1e6,
	}}, err
}
