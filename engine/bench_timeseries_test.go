package engine_test

import (
	"context"
	"testing"
	"time"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo"
	"go.mongodb.org/mongo-driver/v2/mongo/options"
)

// tsBenchSensors and tsBenchPer shape the time series benchmarks' data:
// tsBenchSensors sensors, each reporting tsBenchPer readings 10 s apart,
// as formwork lab's timeseries scenario does.
const (
	tsBenchSensors = 20
	tsBenchPer     = 2000
)

// tsBenchStart is the time of the benchmarks' first reading.
var tsBenchStart = time.Date(2026, 5, 18, 0, 0, 0, 0, time.UTC)

// tsBenchReading is reading i of sensor s.
func tsBenchReading(s, i int) bson.D {
	return bson.D{
		{Key: "ts", Value: tsBenchStart.Add(time.Duration(i) * 10 * time.Second)},
		{Key: "sensor", Value: s},
		{Key: "temp", Value: float64(150+(i*7+s)%100) / 10},
		{Key: "hum", Value: float64((i*13+s)%1000) / 10},
	}
}

// tsBenchLoad creates the time series "ts" (timeField ts, metaField
// sensor) and the regular collection "ev" (index {sensor, ts}) and loads
// both with the same readings.
func tsBenchLoad(b *testing.B) (ts, ev *mongo.Collection) {
	b.Helper()
	ctx := context.Background()
	db := perfEngine(b, false).Database("bench")
	if err := db.CreateCollection(ctx, "ts", options.CreateCollection().SetTimeSeriesOptions(
		options.TimeSeries().SetTimeField("ts").SetMetaField("sensor").SetGranularity("seconds"))); err != nil {
		b.Fatal(err)
	}
	ts, ev = db.Collection("ts"), db.Collection("ev")
	idx := mongo.IndexModel{Keys: bson.D{{Key: "sensor", Value: 1}, {Key: "ts", Value: 1}}}
	for _, c := range []*mongo.Collection{ts, ev} {
		if _, err := c.Indexes().CreateOne(ctx, idx); err != nil {
			b.Fatal(err)
		}
	}
	var docs []any
	for i := range tsBenchPer {
		for s := range tsBenchSensors {
			docs = append(docs, tsBenchReading(s, i))
		}
	}
	for _, c := range []*mongo.Collection{ts, ev} {
		if _, err := c.InsertMany(ctx, docs, options.InsertMany().SetOrdered(false)); err != nil {
			b.Fatal(err)
		}
	}
	return ts, ev
}

// BenchmarkTimeseriesInsert inserts one measurement at a time (each a
// new reading of the next sensor, going forward in time) into a time
// series and the same document into a regular collection with a {sensor,
// ts} index, in the same iteration. It reports each cost and their ratio
// ("ts/regular", target ≤ 3).
func BenchmarkTimeseriesInsert(b *testing.B) {
	ts, ev := tsBenchLoad(b)
	settle(b)
	ctx := context.Background()
	var tTS, tEv time.Duration
	n := 0
	for b.Loop() {
		d := tsBenchReading(n%tsBenchSensors, tsBenchPer+n/tsBenchSensors)
		n++
		t0 := time.Now()
		if _, err := ts.InsertOne(ctx, d); err != nil {
			b.Fatal(err)
		}
		t1 := time.Now()
		if _, err := ev.InsertOne(ctx, d); err != nil {
			b.Fatal(err)
		}
		tTS += t1.Sub(t0)
		tEv += time.Since(t1)
	}
	b.ReportMetric(float64(tTS.Nanoseconds())/float64(n), "ts-ns/op")
	b.ReportMetric(float64(tEv.Nanoseconds())/float64(n), "regular-ns/op")
	b.ReportMetric(float64(tTS)/float64(tEv), "ts/regular")
}

// BenchmarkTimeseriesRange reads one sensor's 30-minute window (180
// readings, sorted by time) from a time series and from per-event
// documents with a {sensor, ts} index, in the same iteration. It reports
// each cost and their ratio ("ts/events").
func BenchmarkTimeseriesRange(b *testing.B) {
	ts, ev := tsBenchLoad(b)
	settle(b)
	ctx := context.Background()
	var tTS, tEv time.Duration
	n := 0
	read := func(c *mongo.Collection, s int, from time.Time) time.Duration {
		t0 := time.Now()
		f := bson.D{{Key: "sensor", Value: s}, {Key: "ts", Value: bson.D{{Key: "$gte", Value: from}, {Key: "$lt", Value: from.Add(30 * time.Minute)}}}}
		cur, err := c.Find(ctx, f, options.Find().SetSort(bson.D{{Key: "ts", Value: 1}}))
		if err != nil {
			b.Fatal(err)
		}
		var out []bson.Raw
		if err := cur.All(ctx, &out); err != nil {
			b.Fatal(err)
		}
		if len(out) != 180 {
			b.Fatalf("%s: %d readings, want 180", c.Name(), len(out))
		}
		return time.Since(t0)
	}
	for b.Loop() {
		s := n % tsBenchSensors
		from := tsBenchStart.Add(time.Duration((n*37)%(tsBenchPer-180)) * 10 * time.Second)
		n++
		tTS += read(ts, s, from)
		tEv += read(ev, s, from)
	}
	b.ReportMetric(float64(tTS.Nanoseconds())/float64(n), "ts-ns/op")
	b.ReportMetric(float64(tEv.Nanoseconds())/float64(n), "events-ns/op")
	b.ReportMetric(float64(tTS)/float64(tEv), "ts/events")
}
