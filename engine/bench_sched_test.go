package engine_test

import (
	"runtime/metrics"
	"testing"
)

// schedLatency is the runtime's histogram of how long goroutines waited
// runnable before a CPU ran them. With more busy goroutines than cores it
// measures CPU queueing, which no lock removal can shorten.
const schedLatency = "/sched/latencies:seconds"

// schedMeter snapshots schedLatency so that a benchmark can report the
// queueing that happened while it ran.
type schedMeter struct{ start *metrics.Float64Histogram }

// startSched records the histogram as it is now.
func startSched() schedMeter {
	return schedMeter{start: readSched()}
}

func readSched() *metrics.Float64Histogram {
	s := []metrics.Sample{{Name: schedLatency}}
	metrics.Read(s)
	if s[0].Value.Kind() != metrics.KindFloat64Histogram {
		return nil
	}
	return s[0].Value.Float64Histogram()
}

// report adds the p50 and p99 scheduling latency, in milliseconds, of the
// goroutine wake-ups since startSched ("sched-p99-ms").
func (m schedMeter) report(b *testing.B) {
	end := readSched()
	if m.start == nil || end == nil || len(end.Counts) != len(m.start.Counts) {
		return
	}
	delta := make([]uint64, len(end.Counts))
	var total uint64
	for i := range delta {
		delta[i] = end.Counts[i] - m.start.Counts[i]
		total += delta[i]
	}
	if total == 0 {
		return
	}
	for _, q := range []struct {
		p    float64
		unit string
	}{{0.50, "sched-p50-ms"}, {0.99, "sched-p99-ms"}} {
		want := uint64(q.p * float64(total))
		var seen uint64
		for i, n := range delta {
			seen += n
			if seen > want {
				// Buckets[i+1] is the bucket's upper bound.
				b.ReportMetric(end.Buckets[i+1]*1e3, q.unit)
				break
			}
		}
	}
}
