// Package workload runs the storage benchmark workloads of issue
// "Storage performance" against any MongoDB deployment through the
// official driver, for formwork bench: inserts from concurrent clients,
// insertMany batches, indexed point finds, an index scan with fetch
// against a collection scan, a mixed read/update/insert workload with
// read latency percentiles, and $push to a large document.
//
// Each workload creates and drops its own collections in the database it
// is given and runs for about the duration it is given. It never imports
// the engine, so the same code measures the embedded engine and MongoDB.
package workload

import (
	"context"
	"fmt"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"go.mongodb.org/mongo-driver/v2/mongo"
)

// Result is the outcome of one workload run.
type Result struct {
	// Name identifies the workload and its parameters, for example
	// "insertOne/clients=8".
	Name string `json:"name"`
	// Ops is the number of operations completed.
	Ops int `json:"ops"`
	// Seconds is how long the operations took.
	Seconds float64 `json:"seconds"`
	// Metrics holds the workload's figures by unit ("ops/s", "docs/s",
	// "read-p99-ms", "ix/coll"…).
	Metrics map[string]float64 `json:"metrics"`
}

// Spec describes one workload run: a name and a function that runs it in
// a database for about a duration.
type Spec struct {
	Name string
	Run  func(ctx context.Context, db *mongo.Database, d time.Duration) (Result, error)
}

// All returns every workload, with the given client counts for the
// concurrent ones, in the order formwork bench runs them.
func All(clients []int) []Spec {
	var out []Spec
	for _, n := range clients {
		out = append(out, Spec{fmt.Sprintf("insertOne/clients=%d", n), insertOne(n)})
	}
	out = append(out,
		Spec{"insertMany/batch=1000", insertMany},
		Spec{"pointFind/docs=10000", pointFind},
	)
	for _, n := range []int{10000, 40000} {
		out = append(out, Spec{fmt.Sprintf("indexScan/docs=%d", n), indexScan(n)})
	}
	for _, n := range clients {
		out = append(out, Spec{fmt.Sprintf("mixed/clients=%d", n), mixed(n)})
	}
	return append(out, Spec{"pushLarge/size=100KB", pushLarge})
}

// runFor calls op from clients goroutines until d has passed or op fails,
// and returns the number of calls and the time they took. op receives
// the client number and a sequence number unique across clients.
func runFor(ctx context.Context, clients int, d time.Duration, op func(ctx context.Context, client, seq int) error) (int, time.Duration, error) {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	var next atomic.Int64
	var wg sync.WaitGroup
	var once sync.Once
	var first error
	start := time.Now()
	deadline := start.Add(d)
	for c := 0; c < clients; c++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for time.Now().Before(deadline) && ctx.Err() == nil {
				if err := op(ctx, c, int(next.Add(1))-1); err != nil {
					once.Do(func() { first = err; cancel() })
					return
				}
			}
		}()
	}
	wg.Wait()
	return int(next.Load()), time.Since(start), first
}

// percentile returns the p-th percentile (0 < p ≤ 1) of sorted
// durations, or 0 for none.
func percentile(sorted []time.Duration, p float64) time.Duration {
	if len(sorted) == 0 {
		return 0
	}
	i := int(float64(len(sorted))*p+0.5) - 1
	return sorted[min(max(i, 0), len(sorted)-1)]
}

// sortedAll merges and sorts per-client durations.
func sortedAll(per [][]time.Duration) []time.Duration {
	var all []time.Duration
	for _, d := range per {
		all = append(all, d...)
	}
	slices.Sort(all)
	return all
}

// ms converts d to milliseconds.
func ms(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }

// padding returns a string of n zeros, to give documents a realistic size.
func padding(n int) string { return fmt.Sprintf("%0*d", n, 0) }

// fresh returns the collection name in db, dropped first so that a run
// starts empty.
func fresh(ctx context.Context, db *mongo.Database, name string) (*mongo.Collection, error) {
	c := db.Collection(name)
	if err := c.Drop(ctx); err != nil {
		return nil, err
	}
	return c, nil
}
