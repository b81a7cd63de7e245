package lab

import (
	"time"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo"

	"github.com/formworkdb/formwork/pattern/archive"
)

// archiveScenario: five years of orders, of which the application reads
// the last year. Naive: one collection holds every order, so the daily
// report over open orders scans five years, and the hand-written cleanup
// script computes its cutoff twice (once to copy, once to delete).
// Archive: orders older than a year move to orders_archive slice by
// slice with $merge on _id and a delete with the same recorded cutoff;
// the report scans one year; a customer's full history costs a second
// query; the job costs its own round trips.
var archiveScenario = scenario{
	pattern: "archive",
	title:   "five years of orders: the application reads the last year",
	steps:   6,
	run:     runArchive,
}

// runArchive generates the scenario's data, loads it in both forms and
// measures them.
func runArchive(e *env) ([]Metric, []Latency, error) {
	ctx, g := e.ctx, e.gen
	now := time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC)
	orders := e.n(20000, 500)
	customers := e.n(2000, 50)
	span := 5 * 365 * 24 * time.Hour
	docs := make([]any, orders)
	for i := range orders {
		at := now.Add(-time.Duration(g.float() * float64(span))).Truncate(time.Millisecond)
		status := "closed"
		if now.Sub(at) < 30*24*time.Hour && g.intn(3) == 0 {
			status = "open"
		}
		docs[i] = bson.D{{Key: "_id", Value: i}, {Key: "customerId", Value: g.intn(customers)}, {Key: "createdAt", Value: at},
			{Key: "status", Value: status}, {Key: "total", Value: 5 + g.intn(500)}, {Key: "note", Value: g.words(6)}}
	}
	e.step()

	byCustomer := mongo.IndexModel{Keys: bson.D{{Key: "customerId", Value: 1}, {Key: "createdAt", Value: -1}}}
	naive := e.coll("naive_orders")
	live, cold := e.coll("orders"), e.coll("orders_archive")
	for _, c := range []*mongo.Collection{naive, live, cold} {
		if _, err := c.Indexes().CreateOne(ctx, byCustomer); err != nil {
			return nil, nil, err
		}
	}
	if _, err := naive.InsertMany(ctx, docs); err != nil {
		return nil, nil, err
	}
	if _, err := live.InsertMany(ctx, docs); err != nil {
		return nil, nil, err
	}
	a, err := archive.New[bson.Raw](live, cold, archive.Config{Field: "createdAt", Age: 365 * 24 * time.Hour, Slice: 30 * 24 * time.Hour})
	if err != nil {
		return nil, nil, err
	}
	if err := a.EnsureIndexes(ctx); err != nil {
		return nil, nil, err
	}
	e.step()

	// The archive job, measured once.
	job, err := e.run(1, false, func(int) error {
		_, err := a.Run(ctx, archive.RunOptions{Now: now})
		return err
	})
	if err != nil {
		return nil, nil, err
	}
	// The naive script's crash-and-rerun: it copies with one cutoff and,
	// a day later (a long copy, or a rerun), deletes with a new one; the
	// orders of that day are deleted and never copied.
	script := e.coll("naive_script_orders")
	if _, err := script.InsertMany(ctx, docs); err != nil {
		return nil, nil, err
	}
	c1 := now.Add(-365 * 24 * time.Hour)
	cur, err := script.Aggregate(ctx, mongo.Pipeline{
		{{Key: "$match", Value: bson.D{{Key: "createdAt", Value: bson.D{{Key: "$lt", Value: c1}}}}}},
		{{Key: "$merge", Value: bson.D{{Key: "into", Value: "naive_script_archive"}}}},
	})
	if err != nil {
		return nil, nil, err
	}
	cur.Close(ctx)
	if _, err := script.DeleteMany(ctx, bson.D{{Key: "createdAt", Value: bson.D{{Key: "$lt", Value: c1.Add(24 * time.Hour)}}}}); err != nil {
		return nil, nil, err
	}
	kept, err := script.CountDocuments(ctx, bson.D{})
	if err != nil {
		return nil, nil, err
	}
	copied, err := e.coll("naive_script_archive").CountDocuments(ctx, bson.D{})
	if err != nil {
		return nil, nil, err
	}
	lost := float64(int64(orders) - kept - copied)
	// The pattern's count, checked the same way.
	liveN, err := live.CountDocuments(ctx, bson.D{})
	if err != nil {
		return nil, nil, err
	}
	coldN, err := cold.CountDocuments(ctx, bson.D{})
	if err != nil {
		return nil, nil, err
	}
	patLost := float64(int64(orders) - liveN - coldN)
	e.step()

	// The open-orders report: no index serves it, so it scans what the
	// collection holds.
	report := func(c *mongo.Collection) func(int) error {
		return func(int) error {
			cur, err := c.Aggregate(ctx, mongo.Pipeline{
				{{Key: "$match", Value: bson.D{{Key: "status", Value: "open"}}}},
				{{Key: "$group", Value: bson.D{{Key: "_id", Value: nil}, {Key: "n", Value: bson.D{{Key: "$sum", Value: 1}}}, {Key: "total", Value: bson.D{{Key: "$sum", Value: "$total"}}}}}},
			})
			if err != nil {
				return err
			}
			return cur.Close(ctx)
		}
	}
	reads := e.n(40, 5)
	naiveReport, err := e.read(reads, report(naive))
	if err != nil {
		return nil, nil, err
	}
	patReport, err := e.read(reads, report(live))
	if err != nil {
		return nil, nil, err
	}
	e.step()

	// A customer's whole history: one query, or one per collection.
	pick := make([]int, reads+warmup)
	for i := range pick {
		pick[i] = g.intn(customers)
	}
	history := func(cs ...*mongo.Collection) func(int) error {
		return func(i int) error {
			for _, c := range cs {
				cur, err := c.Find(ctx, bson.D{{Key: "customerId", Value: pick[i]}})
				if err != nil {
					return err
				}
				if err := cur.All(ctx, &[]bson.Raw{}); err != nil {
					return err
				}
			}
			return nil
		}
	}
	naiveHistory, err := e.read(reads, history(naive))
	if err != nil {
		return nil, nil, err
	}
	patHistory, err := e.read(reads, history(live, cold))
	if err != nil {
		return nil, nil, err
	}
	e.step()

	nStore, err := e.storageOf("naive_orders")
	if err != nil {
		return nil, nil, err
	}
	pStore, err := e.storageOf("orders")
	if err != nil {
		return nil, nil, err
	}
	e.step()

	var ms []Metric
	ms = append(ms, readMetrics("open-orders report", naiveReport, patReport)...)
	ms = append(ms, readMetrics("a customer's full history", naiveHistory, patHistory)...)
	ms = append(ms,
		Metric{Name: "archive job: round trips", Kind: KindWrite, Unit: "round trips", Better: Lower, Naive: 0, Pattern: job.RoundTrips},
		Metric{Name: "archive job: documents written", Kind: KindWrite, Unit: "docs", Better: Lower, Naive: 0, Pattern: job.DocsWritten},
		Metric{Name: "orders lost by a cleanup whose cutoff moved between copy and delete", Kind: KindAccuracy, Unit: "orders", Better: Lower, Naive: lost, Pattern: patLost},
		Metric{Name: "live collection: data size", Kind: KindStorage, Unit: "bytes", Better: Lower, Naive: float64(nStore.DataSize), Pattern: float64(pStore.DataSize)},
		Metric{Name: "live collection: index size", Kind: KindStorage, Unit: "bytes", Better: Lower, Naive: float64(nStore.IndexSize), Pattern: float64(pStore.IndexSize)},
	)
	return ms, []Latency{
		latency("open-orders report", naiveReport.opStats, patReport.opStats),
		latency("a customer's full history", naiveHistory.opStats, patHistory.opStats),
	}, nil
}
