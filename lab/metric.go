package lab

// readMetrics returns the metrics of one logical read in both forms:
// documents and keys examined (explain), round trips and bytes returned
// (command monitoring), p50 and p99 latency.
func readMetrics(op string, naive, pat readResult) []Metric {
	return []Metric{
		{Name: op + ": documents examined", Kind: KindRead, Unit: "docs", Better: Lower, Naive: naive.DocsExamined, Pattern: pat.DocsExamined},
		{Name: op + ": index keys examined", Kind: KindRead, Unit: "keys", Better: Lower, Naive: naive.KeysExamined, Pattern: pat.KeysExamined},
		{Name: op + ": round trips", Kind: KindRead, Unit: "round trips", Better: Lower, Naive: naive.RoundTrips, Pattern: pat.RoundTrips},
		{Name: op + ": bytes returned", Kind: KindRead, Unit: "bytes", Better: Lower, Naive: naive.BytesRecv, Pattern: pat.BytesRecv, Minor: true},
		{Name: op + ": p50 latency", Kind: KindRead, Unit: "µs", Better: Lower, Naive: naive.P50, Pattern: pat.P50, Timing: true},
		{Name: op + ": p99 latency", Kind: KindRead, Unit: "µs", Better: Lower, Naive: naive.P99, Pattern: pat.P99, Timing: true},
	}
}

// writeMetrics returns the metrics of one logical write in both forms:
// documents written (the replies' n, nModified, upserted), round trips and
// bytes sent (command monitoring), p50 and p99 latency.
func writeMetrics(op string, naive, pat opStats) []Metric {
	return []Metric{
		{Name: op + ": documents written", Kind: KindWrite, Unit: "docs", Better: Lower, Naive: naive.DocsWritten, Pattern: pat.DocsWritten},
		{Name: op + ": round trips", Kind: KindWrite, Unit: "round trips", Better: Lower, Naive: naive.RoundTrips, Pattern: pat.RoundTrips},
		{Name: op + ": bytes written", Kind: KindWrite, Unit: "bytes", Better: Lower, Naive: naive.BytesSent, Pattern: pat.BytesSent, Minor: true},
		{Name: op + ": p50 latency", Kind: KindWrite, Unit: "µs", Better: Lower, Naive: naive.P50, Pattern: pat.P50, Timing: true},
		{Name: op + ": p99 latency", Kind: KindWrite, Unit: "µs", Better: Lower, Naive: naive.P99, Pattern: pat.P99, Timing: true},
	}
}

// storageMetrics returns data size and index size (collStats) of both
// forms' collections.
func storageMetrics(naive, pat storage) []Metric {
	return []Metric{
		{Name: "data size", Kind: KindStorage, Unit: "bytes", Better: Lower, Naive: float64(naive.DataSize), Pattern: float64(pat.DataSize)},
		{Name: "index size", Kind: KindStorage, Unit: "bytes", Better: Lower, Naive: float64(naive.IndexSize), Pattern: float64(pat.IndexSize)},
	}
}

// latency pairs the samples of one operation for the charts.
func latency(op string, naive, pat opStats) Latency {
	return Latency{Op: op, Naive: naive.Samples, Pattern: pat.Samples}
}
