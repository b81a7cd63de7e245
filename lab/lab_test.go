package lab

import (
	"context"
	"errors"
	"math"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"
)

// smallScale keeps a run of every scenario to a few seconds.
const smallScale = 5

var (
	smallOnce sync.Once
	smallRep  Report
	smallErr  error
)

// smallRun runs every scenario once at smallScale, shared by the tests.
func smallRun(t *testing.T) Report {
	t.Helper()
	smallOnce.Do(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
		defer cancel()
		smallRep, smallErr = Run(ctx, Options{Scale: smallScale, Seed: 7})
	})
	if smallErr != nil {
		t.Fatal(smallErr)
	}
	return smallRep
}

// metric returns the named metric of a pattern's result.
func metric(t *testing.T, r Report, pattern, name string) Metric {
	t.Helper()
	for _, p := range r.Patterns {
		if p.Pattern != pattern {
			continue
		}
		for _, m := range p.Metrics {
			if m.Name == name {
				return m
			}
		}
	}
	t.Fatalf("%s: no metric %q", pattern, name)
	return Metric{}
}

func TestRunEveryScenario(t *testing.T) {
	rep := smallRun(t)
	var got []string
	for _, p := range rep.Patterns {
		got = append(got, p.Pattern)
		if err := Check(p); err != nil {
			t.Error(err)
		}
		if p.Verdict.Buy == "" || p.Verdict.Charge == "" || p.Scenario == "" {
			t.Errorf("%s: empty verdict or scenario: %+v", p.Pattern, p)
		}
		for _, m := range p.Metrics {
			for _, v := range []float64{m.Naive, m.Pattern} {
				if math.IsNaN(v) || math.IsInf(v, 0) || v < 0 {
					t.Errorf("%s: %s = %v", p.Pattern, m.Name, v)
				}
			}
		}
	}
	if !slices.Equal(got, Patterns()) {
		t.Errorf("patterns %v, want %v", got, Patterns())
	}
	if want := []string{"extref", "subset", "computed", "approx", "bucket", "outlier", "attribute", "polymorphic", "versioning", "timeseries", "archive", "tree"}; !slices.Equal(Patterns(), want) {
		t.Errorf("Patterns() = %v, want every pattern package: %v", Patterns(), want)
	}
	if rep.Version != SchemaVersion || rep.Scale != smallScale || rep.Seed != 7 {
		t.Errorf("header %d %d %d", rep.Version, rep.Scale, rep.Seed)
	}
	if rep.Server.Version == "" || !strings.HasPrefix(rep.Server.Topology, "replica set") ||
		!strings.HasPrefix(rep.Server.Database, "formwork_lab_") {
		t.Errorf("server %+v", rep.Server)
	}
}

// TestFiguresAgreeWithPackages checks the figures the pattern packages'
// own tests and benchmarks establish.
func TestFiguresAgreeWithPackages(t *testing.T) {
	rep := smallRun(t)
	for _, c := range []struct {
		pattern, name string
		naive, pat    float64
	}{
		// subset BenchmarkProductPage: the page is 1 document, not 6.
		{"subset", "product page: documents examined", 6, 1},
		{"subset", "product page: round trips", 2, 1},
		// subset BenchmarkLoad: insert, $push, and the re-read that
		// catches an edit landing between the two.
		{"subset", "add a review: round trips", 1, 3},
		// extref BenchmarkOrderDisplay: 1 round trip instead of 2.
		{"extref", "order page: documents examined", 2, 1},
		{"extref", "order page: round trips", 2, 1},
		// extref BenchmarkRename: the update, the fan-out, the check
		// before the write and the re-read that makes renames converge,
		// then the commitTransaction that makes them one atomic write.
		{"extref", "rename a customer (fan-out): round trips", 1, 5},
		// computed BenchmarkAverage: one document for the average.
		{"computed", "average rating: round trips", -1, 1},
		{"computed", "average rating: documents examined", -1, 1},
		// The insert and the $inc, then the transaction's commit.
		{"computed", "add a rating: round trips", 1, 3},
		// outlier BenchmarkAllBuyers: 4 documents against 3,001 for
		// 3,000 buyers at the default scale; at this one the bestseller
		// has 150 buyers, 50 embedded and 100 in one overflow bucket.
		{"outlier", "book page: documents examined", -1, 1},
		{"outlier", "bestseller's full buyer list: documents examined", 151, 2},
		{"outlier", "purchase of the bestseller: round trips", 1, 3},
		{"outlier", "purchase of a new book: round trips", 1, 1},
		// attribute: one index besides _id against one per field.
		{"attribute", "indexes", 33, 2},
		// bucket: one write per trade either way.
		{"bucket", "record a trade: round trips", 1, 1},
	} {
		m := metric(t, rep, c.pattern, c.name)
		if (c.naive >= 0 && m.Naive != c.naive) || m.Pattern != c.pat {
			t.Errorf("%s %s: naive %v pattern %v, want %v %v", c.pattern, c.name, m.Naive, m.Pattern, c.naive, c.pat)
		}
	}
	// approx BenchmarkEvents: N = 100 writes about 10 times per 1,000
	// events, the naive form 1,000.
	m := metric(t, rep, "approx", "writes per 1,000 views")
	if m.Naive != 1000 || m.Pattern > 20 {
		t.Errorf("approx writes per 1,000: %v %v", m.Naive, m.Pattern)
	}
	// bucket: a page of 50 reads one bucket, or the open one and the
	// next (whose keyset query examines 2, see the package doc); the
	// naive form up to 50 trades.
	m = metric(t, rep, "bucket", "newest 50 trades: documents examined")
	if m.Pattern > 3 || m.Naive <= m.Pattern {
		t.Errorf("bucket page examined: %v %v", m.Naive, m.Pattern)
	}
}

func TestRunUnknownPattern(t *testing.T) {
	_, err := Run(context.Background(), Options{Patterns: []string{"nosuchpattern"}})
	if !errors.Is(err, ErrUnknownPattern) {
		t.Fatalf("err = %v, want ErrUnknownPattern", err)
	}
}

func TestGenDeterministic(t *testing.T) {
	a, b := newGen(3, "subset"), newGen(3, "subset")
	za, zb := a.zipf(100, 1.2), b.zipf(100, 1.2)
	for range 100 {
		if za() != zb() || a.heavy(5, 1.3, 1000) != b.heavy(5, 1.3, 1000) || a.name() != b.name() {
			t.Fatal("same seed and stream, different data")
		}
	}
	if newGen(3, "subset").words(8) == newGen(3, "outlier").words(8) {
		t.Error("streams of different scenarios share their data")
	}
	// Zipf skew: the most popular of 100 items gets far more than 1%.
	z, hits := newGen(1, "x").zipfRank(100, 1.2), 0
	for range 10000 {
		if z() == 0 {
			hits++
		}
	}
	if hits < 1000 {
		t.Errorf("rank 0 drawn %d times in 10,000", hits)
	}
}
