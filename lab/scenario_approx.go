package lab

import (
	"fmt"
	"math"

	"github.com/formworkdb/formwork/pattern/approx"
)

// approxScenario: page views. Every view of a page counts. Naive: every
// view is an $inc (the same Counter with N = 1). Approximation: the
// process counts views in memory and writes every 100th of a page
// (deterministic mode, N = 100), so the stored counts lag the true ones
// until Flush, and a crash loses what is pending.
var approxScenario = scenario{
	pattern: "approx",
	title:   "page views: every view of a page is counted",
	steps:   4,
	run:     runApprox,
}

// approxN is the pattern's step: one write per 100 views of a page.
const approxN = 100

// runApprox generates the scenario's data, loads it in both forms and
// measures them.
func runApprox(e *env) ([]Metric, []Latency, error) {
	ctx, g := e.ctx, e.gen
	pages, events := e.n(50, 5), e.n(20000, 500)
	pop := g.zipf(pages, 1.1)
	seq := make([]string, events+warmup)
	for i := range seq {
		seq[i] = fmt.Sprintf("/page/%d", pop())
	}
	e.step()

	naive, err := approx.New(e.coll("naive_pageViews"), approx.Config{Field: "views", N: 1})
	if err != nil {
		return nil, nil, err
	}
	pat, err := approx.New(e.coll("pageViews"), approx.Config{Field: "views", N: approxN})
	if err != nil {
		return nil, nil, err
	}
	naiveView, err := e.run(events, false, func(i int) error { return naive.Incr(ctx, seq[i]) })
	if err != nil {
		return nil, nil, err
	}
	e.step()
	patView, err := e.run(events, false, func(i int) error { return pat.Incr(ctx, seq[i]) })
	if err != nil {
		return nil, nil, err
	}
	e.step()

	// What a reader sees before Flush: the stored counts against the
	// exact ones, over the pages that were viewed.
	exact := map[string]int64{}
	for _, k := range seq[:events] {
		exact[k]++
	}
	var errSum, lost float64
	for k, want := range exact {
		got, err := pat.Get(ctx, k)
		if err != nil {
			return nil, nil, err
		}
		errSum += math.Abs(float64(want-got)) / float64(want)
		lost += float64(pat.Pending(k))
	}
	meanErr := 100 * errSum / float64(len(exact))
	var naiveErr float64
	for k, want := range exact {
		got, err := naive.Get(ctx, k)
		if err != nil {
			return nil, nil, err
		}
		naiveErr += math.Abs(float64(want-got)) / float64(want)
	}
	naiveErr = 100 * naiveErr / float64(len(exact))
	if err := pat.Flush(ctx); err != nil {
		return nil, nil, err
	}
	e.step()

	ms := []Metric{{Name: "writes per 1,000 views", Kind: KindWrite, Unit: "writes", Better: Lower,
		Naive: 1000 * naiveView.RoundTrips, Pattern: 1000 * patView.RoundTrips}}
	ms = append(ms, writeMetrics("count a page view", naiveView, patView)...)
	ms = append(ms,
		Metric{Name: "error of the stored count per page, before Flush", Kind: KindAccuracy, Unit: "%", Better: Lower,
			Naive: naiveErr, Pattern: meanErr},
		Metric{Name: "views lost if the process crashes now", Kind: KindAccuracy, Unit: "views", Better: Lower,
			Naive: 0, Pattern: lost},
	)
	return ms, []Latency{latency("count a page view", naiveView, patView)}, nil
}
