package engine_test

import (
	"context"
	"fmt"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"go.mongodb.org/mongo-driver/v2/mongo"

	"github.com/formworkdb/formwork/engine"
	"github.com/formworkdb/formwork/internal/testenv"
)

// The storage performance benchmarks (issue "Storage performance") run
// side by side in one process, so each can compare itself with figures
// measured moments before on the same machine:
//
//	go test ./engine -run '^$' -bench 'Commit|InsertMany|IndexScanFetch|Mixed|PushLarge|PointFind'
//
// Earlier sub-benchmarks record their figures in perfResults; later ones
// report ratios against them as extra metrics (for example
// "x-of-1-disk-client"). A ratio is omitted when -bench filtered out the
// sub-benchmark it compares with.

// perfResults holds figures recorded by sub-benchmarks for later ones.
var perfResults = struct {
	sync.Mutex
	m map[string]float64
}{m: map[string]float64{}}

// recordPerf stores v under key, replacing what an earlier, shorter run
// of the same sub-benchmark stored.
func recordPerf(key string, v float64) {
	perfResults.Lock()
	defer perfResults.Unlock()
	perfResults.m[key] = v
}

// perf returns the figure stored under key and whether there is one.
func perf(key string) (float64, bool) {
	perfResults.Lock()
	defer perfResults.Unlock()
	v, ok := perfResults.m[key]
	return v, ok
}

// reportRatio reports num/den as metric unit when the denominator was
// recorded.
func reportRatio(b *testing.B, num float64, denKey, unit string) {
	if den, ok := perf(denKey); ok && den > 0 {
		b.ReportMetric(num/den, unit)
	}
}

// perfEngine opens an engine for a benchmark: in memory, or on disk in a
// fresh temporary directory when durable. It closes when b ends.
func perfEngine(b *testing.B, durable bool) *mongo.Client {
	b.Helper()
	opts := engine.Options{}
	if durable {
		opts.Dir = b.TempDir()
	}
	_, client := testenv.Engine(b, opts)
	return client
}

// runClients runs b.N calls of op spread over n concurrent clients and
// returns the elapsed time. op receives the client number and a sequence
// number unique across clients. The first error stops the benchmark.
func runClients(b *testing.B, n int, op func(ctx context.Context, client, seq int) error) time.Duration {
	b.Helper()
	ctx := context.Background()
	var next atomic.Int64
	var wg sync.WaitGroup
	errc := make(chan error, n)
	b.ResetTimer()
	start := time.Now()
	for c := 0; c < n; c++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				i := int(next.Add(1)) - 1
				if i >= b.N {
					return
				}
				if err := op(ctx, c, i); err != nil {
					errc <- err
					return
				}
			}
		}()
	}
	wg.Wait()
	elapsed := time.Since(start)
	b.StopTimer()
	close(errc)
	for err := range errc {
		b.Fatal(err)
	}
	return elapsed
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

// latencies collects per-operation durations from concurrent clients.
type latencies struct {
	mu  sync.Mutex
	all []time.Duration
}

// add appends the durations one client measured.
func (l *latencies) add(d []time.Duration) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.all = append(l.all, d...)
}

// sorted returns the durations in increasing order.
func (l *latencies) sorted() []time.Duration {
	l.mu.Lock()
	defer l.mu.Unlock()
	out := slices.Clone(l.all)
	slices.Sort(out)
	return out
}

// ms converts d to milliseconds for a metric.
func ms(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }

// storageName names a storage mode in sub-benchmark names.
func storageName(durable bool) string {
	if durable {
		return "disk"
	}
	return "mem"
}

// padding returns a string of n bytes, to give documents a realistic size.
func padding(n int) string { return fmt.Sprintf("%0*d", n, 0) }

// cpuMeter measures the process's CPU time over a benchmark's timed part.
type cpuMeter struct {
	start time.Duration
	ok    bool
}

// startCPU starts measuring.
func startCPU() cpuMeter {
	t, ok := processCPU()
	return cpuMeter{start: t, ok: ok}
}

// report adds the CPU time used since startCPU per unit of work as metric
// "cpu-µs/"+per (for example "cpu-µs/doc"), when it can be measured.
func (m cpuMeter) report(b *testing.B, units float64, per string) {
	if t, ok := processCPU(); ok && m.ok && units > 0 {
		b.ReportMetric(float64((t-m.start).Microseconds())/units, "cpu-µs/"+per)
	}
}

// settle waits, up to 30 seconds, until the process is nearly idle: the
// flushes and compactions a bulk load leaves running would otherwise
// compete with the measurement for the CPUs.
func settle(b *testing.B) {
	b.Helper()
	const window = 200 * time.Millisecond
	for deadline := time.Now().Add(30 * time.Second); time.Now().Before(deadline); {
		c0, ok := processCPU()
		if !ok {
			return
		}
		time.Sleep(window)
		if c1, _ := processCPU(); c1-c0 < window/20 {
			return
		}
	}
}
