package engine_test

import (
	"context"
	"fmt"
	"math/rand/v2"
	"sync/atomic"
	"testing"
	"time"

	"go.mongodb.org/mongo-driver/v2/bson"
)

// mixedDocs is the number of documents the mixed workload starts with.
const mixedDocs = 10000

// BenchmarkMixed runs 50% point reads, 40% $inc updates and 10% inserts
// from 1 and 32 concurrent clients, in memory and on disk, and reports
// the reads' p50 and p99 latency. With 32 clients it also reports the
// p99 relative to one client on the same storage ("p99-x-of-1-client",
// target ≤ 5: readers do not wait for writers), and the runtime's
// scheduling latency over the run (sched-p50-ms, sched-p99-ms: how long a
// runnable goroutine waited for a CPU), which separates CPU queueing from
// waiting on locks. The reads-only runs do the same reads with no writer
// at all; at 32 clients the mixed run reports its p99 relative to them
// ("p99-x-of-reads-only"): how much the writers, rather than the number
// of clients sharing the CPUs, slow the readers down.
func BenchmarkMixed(b *testing.B) {
	for _, durable := range []bool{false, true} {
		for _, clients := range []int{1, 32} {
			for _, readsOnly := range []bool{true, false} {
				name := fmt.Sprintf("storage=%s/clients=%d", storageName(durable), clients)
				if readsOnly {
					name += "/reads-only"
				}
				b.Run(name, func(b *testing.B) {
					benchMixed(b, durable, clients, readsOnly)
				})
			}
		}
	}
}

func benchMixed(b *testing.B, durable bool, clients int, readsOnly bool) {
	c := perfEngine(b, durable).Database("bench").Collection("c")
	ctx := context.Background()
	pad := padding(100)
	docs := make([]any, mixedDocs)
	for i := range docs {
		docs[i] = bson.D{{Key: "_id", Value: i}, {Key: "n", Value: 0}, {Key: "pad", Value: pad}}
	}
	if _, err := c.InsertMany(ctx, docs); err != nil {
		b.Fatal(err)
	}
	var inserted atomic.Int64
	inserted.Store(mixedDocs)
	reads := &latencies{}
	perClient := make([][]time.Duration, clients)
	sched := startSched()
	elapsed := runClients(b, clients, func(ctx context.Context, client, i int) error {
		r := rand.IntN(100)
		if readsOnly {
			r = 0
		}
		switch {
		case r < 50:
			t0 := time.Now()
			var d bson.Raw
			err := c.FindOne(ctx, bson.D{{Key: "_id", Value: rand.IntN(mixedDocs)}}).Decode(&d)
			perClient[client] = append(perClient[client], time.Since(t0))
			return err
		case r < 90:
			_, err := c.UpdateOne(ctx, bson.D{{Key: "_id", Value: rand.IntN(mixedDocs)}}, bson.D{{Key: "$inc", Value: bson.D{{Key: "n", Value: 1}}}})
			return err
		default:
			id := inserted.Add(1)
			_, err := c.InsertOne(ctx, bson.D{{Key: "_id", Value: id}, {Key: "n", Value: 0}, {Key: "pad", Value: pad}})
			return err
		}
	})
	for _, d := range perClient {
		reads.add(d)
	}
	s := reads.sorted()
	p99 := ms(percentile(s, 0.99))
	b.ReportMetric(float64(b.N)/elapsed.Seconds(), "ops/s")
	b.ReportMetric(ms(percentile(s, 0.50)), "read-p50-ms")
	b.ReportMetric(p99, "read-p99-ms")
	sched.report(b)
	key := "mixed/" + storageName(durable)
	if readsOnly {
		if clients > 1 {
			recordPerf(fmt.Sprintf("%s/reads-only/%d", key, clients), p99)
		}
		return
	}
	reportRatio(b, p99, fmt.Sprintf("%s/reads-only/%d", key, clients), "p99-x-of-reads-only")
	if clients == 1 {
		recordPerf(key, p99)
	} else {
		reportRatio(b, p99, key, "p99-x-of-1-client")
	}
}

// BenchmarkPushLarge appends to an array in a document of about 100 KB
// with $push and $slice (so that it keeps its size) and reports the rate
// at which whole documents are rewritten, in MB/s.
func BenchmarkPushLarge(b *testing.B) {
	c := perfEngine(b, false).Database("bench").Collection("c")
	ctx := context.Background()
	const items = 1000
	pad := padding(90)
	arr := make(bson.A, items)
	for i := range arr {
		arr[i] = fmt.Sprintf("%08d%s", i, pad)
	}
	doc := bson.D{{Key: "_id", Value: 1}, {Key: "items", Value: arr}}
	raw, err := bson.Marshal(doc)
	if err != nil {
		b.Fatal(err)
	}
	if _, err := c.InsertOne(ctx, doc); err != nil {
		b.Fatal(err)
	}
	filter := bson.D{{Key: "_id", Value: 1}}
	var cpu cpuMeter
	for i := items; b.Loop(); i++ {
		if i == items {
			cpu = startCPU()
		}
		push := bson.D{{Key: "$push", Value: bson.D{{Key: "items", Value: bson.D{
			{Key: "$each", Value: bson.A{fmt.Sprintf("%08d%s", i, pad)}}, {Key: "$slice", Value: -items}}}}}}
		res, err := c.UpdateOne(ctx, filter, push)
		if err != nil || res.ModifiedCount != 1 {
			b.Fatalf("push: %v %v", res, err)
		}
	}
	cpu.report(b, float64(b.N), "push")
	b.ReportMetric(float64(len(raw))*float64(b.N)/b.Elapsed().Seconds()/1e6, "MB/s")
}
