package timeseries

import (
	"context"
	"strings"
	"testing"
	"time"
)

// TestFitRate checks the recommendation across rates: the finest
// granularity whose buckets fill, a custom span when none does, and the
// size bound taking over from the count bound for large measurements.
func TestFitRate(t *testing.T) {
	for _, c := range []struct {
		interval time.Duration
		size     int
		best     string
		per      int
		span     time.Duration
	}{
		{time.Second, 0, Seconds, 1000, time.Hour},
		{3 * time.Second, 0, Seconds, 1000, time.Hour},
		{10 * time.Second, 0, Minutes, 1000, 24 * time.Hour},
		{time.Minute, 0, Minutes, 1000, 24 * time.Hour},
		{5 * time.Minute, 0, Hours, 1000, 30 * 24 * time.Hour},
		{time.Hour, 0, "custom", 1000, 1000 * time.Hour},
		{10 * time.Second, 1024, Seconds, 125, time.Hour},
	} {
		f, err := FitRate(c.interval, c.size)
		if err != nil {
			t.Fatal(err)
		}
		if f.Best.Name != c.best || f.Best.PerBucket != c.per || f.Best.Span != c.span {
			t.Errorf("%v/%dB: best %+v, want %s %d %v\n%s", c.interval, c.size, f.Best, c.best, c.per, c.span, f)
		}
	}
	f, _ := FitRate(time.Minute, 0)
	s := f.String()
	for _, want := range []string{"seconds: buckets span up to 1h0m0s, rounded to 1m0s: 60 measurements per bucket (6% full)", "choose minutes"} {
		if !strings.Contains(s, want) {
			t.Errorf("explanation lacks %q:\n%s", want, s)
		}
	}
	if cfg := f.Config(); cfg.Granularity != Minutes || cfg.Validate() != nil {
		t.Errorf("config %+v", cfg)
	}
	slow, _ := FitRate(24*time.Hour, 0)
	if cfg := slow.Config(); cfg.BucketMaxSpan != 365*24*time.Hour || cfg.Validate() != nil {
		t.Errorf("daily: %+v %v", cfg, cfg.Validate())
	}
	if _, err := FitRate(0, 0); err == nil {
		t.Error("zero interval accepted")
	}
}

// TestFitSample checks the rate and size measured from a sample.
func TestFitSample(t *testing.T) {
	f, err := FitSample(series(4, 50, 30*time.Second))
	if err != nil {
		t.Fatal(err)
	}
	if f.Interval != 30*time.Second || f.DocSize < 50 || f.DocSize > 120 || f.Best.Name != Minutes {
		t.Errorf("fit %+v", f)
	}
	if _, err := FitSample(series(3, 1, time.Second)); err == nil {
		t.Error("one measurement per series accepted")
	}
}

// TestFitCollection checks the fit of an existing per-event collection:
// one reading a minute per sensor suits minutes, and the Config it gives
// creates the time series collection.
func TestFitCollection(t *testing.T) {
	ctx := context.Background()
	db := testenvDB(t)
	events := db.Collection("events")
	var docs []any
	for _, r := range series(5, 100, time.Minute) {
		docs = append(docs, r)
	}
	if _, err := events.InsertMany(ctx, docs); err != nil {
		t.Fatal(err)
	}
	f, err := FitCollection[Reading](ctx, events, 300)
	if err != nil {
		t.Fatal(err)
	}
	if f.Interval != time.Minute || f.Best.Name != Minutes {
		t.Fatalf("fit %+v\n%s", f, f)
	}
	c, err := New[Reading](db, "readings", f.Config())
	if err != nil {
		t.Fatal(err)
	}
	if err := c.Create(ctx); err != nil {
		t.Fatal(err)
	}
	if g := info(t, db, "readings").Lookup("options", "timeseries", "granularity").StringValue(); g != Minutes {
		t.Errorf("granularity %q", g)
	}
}
