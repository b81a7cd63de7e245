package timeseries

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo"
	"go.mongodb.org/mongo-driver/v2/mongo/options"
)

// Bucket limits the fit check works with (MongoDB 7.0): a bucket closes
// at 1000 measurements or 125 KiB of them, whichever comes first.
const (
	BucketMaxCount = 1000
	BucketMaxSize  = 125 * 1024
)

// Choice is how one bucketing option fits the data.
type Choice struct {
	Name      string        // "seconds", "minutes", "hours" or "custom"
	Span      time.Duration // bucketMaxSpanSeconds
	Rounding  time.Duration // bucketRoundingSeconds
	PerBucket int           // measurements a bucket of one series holds when it closes
	Fill      float64       // PerBucket over the most a bucket can hold (count or size bound)
}

// Fit is the fit check's verdict: which bucketing options suit a series'
// rate of measurements and why.
type Fit struct {
	Interval time.Duration // time between two measurements of one series (median)
	DocSize  int           // bytes of one measurement (mean), 0 when unknown
	Cap      int           // measurements a bucket can hold: 1000, or fewer when 125 KiB comes first
	Choices  []Choice      // seconds, minutes, hours, custom
	Best     Choice        // the recommendation
	Reasons  []string      // one line per option, then the verdict
}

// Config returns a Config with the recommended bucketing.
func (f Fit) Config() Config {
	if f.Best.Name == "custom" {
		return Config{BucketMaxSpan: f.Best.Span, BucketRounding: f.Best.Rounding}
	}
	return Config{Granularity: f.Best.Name}
}

// String returns the reasons, one per line.
func (f Fit) String() string { return strings.Join(f.Reasons, "\n") }

// FitRate checks the bucketing options against a declared rate: one
// measurement per series every interval, of docSize bytes (0: unknown,
// only the count bound applies). A bucket holds one series' measurements
// within its span (from a start rounded down to the rounding); it closes
// when the next falls outside the span, or at 1000 measurements, or at
// 125 KiB. The best option is the finest granularity whose buckets fill
// (fewer, fuller buckets; finer rounding keeps each bucket's time range
// narrow, so a range query unpacks fewer measurements outside it); when
// none fills, the custom span that does.
func FitRate(interval time.Duration, docSize int) (Fit, error) {
	if interval <= 0 {
		return Fit{}, errors.New("timeseries: fit: the interval must be positive")
	}
	if docSize < 0 {
		return Fit{}, errors.New("timeseries: fit: negative document size")
	}
	f := Fit{Interval: interval, DocSize: docSize, Cap: BucketMaxCount}
	if docSize > 0 {
		f.Cap = max(1, min(BucketMaxCount, BucketMaxSize/docSize))
	}
	per := func(span time.Duration) int {
		n := int(span / interval)
		if n < 1 {
			n = 1
		}
		return min(f.Cap, n)
	}
	bound := "1000 measurements"
	if f.Cap < BucketMaxCount {
		bound = fmt.Sprintf("%d measurements of %d bytes (125 KiB)", f.Cap, docSize)
	}
	f.Reasons = append(f.Reasons, fmt.Sprintf("one measurement per series every %v; a bucket holds at most %s", interval, bound))
	for _, s := range spans {
		c := Choice{Name: s.name, Span: s.span, Rounding: s.rounding, PerBucket: per(s.span)}
		c.Fill = float64(c.PerBucket) / float64(f.Cap)
		f.Choices = append(f.Choices, c)
		closes := fmt.Sprintf("closes on its %v span", s.span)
		if c.PerBucket == f.Cap {
			closes = fmt.Sprintf("fills after %v", roundDur(time.Duration(f.Cap)*interval))
		}
		f.Reasons = append(f.Reasons, fmt.Sprintf("%s: buckets span up to %v, rounded to %v: %d measurements per bucket (%.0f%% full), %s",
			s.name, s.span, s.rounding, c.PerBucket, 100*c.Fill, closes))
	}
	custom := time.Duration(f.Cap) * interval
	custom = max(time.Second, min(maxSpan, (custom+time.Second-1)/time.Second*time.Second))
	cc := Choice{Name: "custom", Span: custom, Rounding: custom, PerBucket: per(custom)}
	cc.Fill = float64(cc.PerBucket) / float64(f.Cap)
	f.Choices = append(f.Choices, cc)
	for _, c := range f.Choices[:3] {
		if c.Fill >= 1 {
			f.Best = c
			break
		}
	}
	if f.Best.Name == "" {
		f.Best = cc
		f.Reasons = append(f.Reasons, fmt.Sprintf("custom: bucketMaxSpanSeconds = bucketRoundingSeconds = %d fills buckets; no granularity does, so choose it (MongoDB 6.3+), or hours if the server is older",
			int64(custom/time.Second)))
	}
	if f.Best.Name != "custom" {
		why := "the finest granularity whose buckets fill"
		if f.Best.Name == Seconds {
			why = "buckets fill within the hour"
		}
		f.Reasons = append(f.Reasons, fmt.Sprintf("choose %s: %s; a coarser one stores the same buckets with a wider time range per bucket", f.Best.Name, why))
	}
	return f, nil
}

// roundDur rounds d for display.
func roundDur(d time.Duration) time.Duration {
	switch {
	case d >= time.Hour:
		return d.Round(time.Minute)
	case d >= time.Minute:
		return d.Round(time.Second)
	}
	return d
}

// maxSample bounds the measurements FitSample reads.
const maxSample = 100000

// FitSample runs the fit check on a sample of measurements: their median
// interval within a series (measurements with the same meta value) and
// their mean encoded size. It needs two measurements of one series.
func FitSample[M any](ms []M) (Fit, error) {
	tf, mf, err := fieldsOf(typeFor[M]())
	if err != nil {
		return Fit{}, fmt.Errorf("timeseries: fit: %w: %w", err, ErrInvalidConfig)
	}
	if len(ms) > maxSample {
		ms = ms[:maxSample]
	}
	series := map[string][]int64{}
	total := 0
	for _, m := range ms {
		doc, err := bson.Marshal(m)
		if err != nil {
			return Fit{}, err
		}
		total += len(doc)
		t, ok := bson.Raw(doc).Lookup(tf).DateTimeOK()
		if !ok {
			continue
		}
		key := ""
		if mf != "" {
			key = string(bson.Raw(doc).Lookup(mf).Value)
		}
		series[key] = append(series[key], t)
	}
	var gaps []int64
	for _, ts := range series {
		slices.Sort(ts)
		for i := 1; i < len(ts); i++ {
			if d := ts[i] - ts[i-1]; d > 0 {
				gaps = append(gaps, d)
			}
		}
	}
	if len(gaps) == 0 {
		return Fit{}, errors.New("timeseries: fit: the sample has no two measurements of one series at different times")
	}
	slices.Sort(gaps)
	return FitRate(time.Duration(gaps[len(gaps)/2])*time.Millisecond, total/len(ms))
}

// FitCollection runs the fit check on the newest n measurements of coll
// (sorted on the time field, decoded into M): a collection of one
// document per measurement about to become a time series collection, or
// a time series collection whose granularity is in doubt. n is capped at
// 100000.
func FitCollection[M any](ctx context.Context, coll *mongo.Collection, n int) (Fit, error) {
	tf, _, err := fieldsOf(typeFor[M]())
	if err != nil {
		return Fit{}, fmt.Errorf("timeseries: fit: %w: %w", err, ErrInvalidConfig)
	}
	n = max(2, min(n, maxSample))
	cur, err := coll.Find(ctx, bson.D{}, options.Find().SetSort(bson.D{{Key: tf, Value: -1}}).SetLimit(int64(n)))
	if err != nil {
		return Fit{}, err
	}
	var ms []M
	if err := cur.All(ctx, &ms); err != nil {
		return Fit{}, err
	}
	return FitSample(ms)
}
