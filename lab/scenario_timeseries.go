package lab

import (
	"time"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo"
	"go.mongodb.org/mongo-driver/v2/mongo/options"

	"github.com/formworkdb/formwork/pattern/bucket"
	"github.com/formworkdb/formwork/pattern/timeseries"
)

// timeseriesScenario: a plant's sensors report a temperature every 10
// seconds; dashboards read one sensor's last half hour. Naive: one
// document per reading, indexed by {meta, ts}. Pattern: a time series
// collection declared from the reading type, granularity from the fit
// check; the server buckets and compresses the readings. Its price: a
// reading cannot be corrected in place (delete and reinsert). The rows
// marked "vs hand-rolled bucket" put pattern/bucket's form (200 readings
// a document, index {owner, maxTime, minTime}) in the naive column.
var timeseriesScenario = scenario{
	pattern: "timeseries",
	title:   "sensor readings: one sensor's last half hour",
	steps:   5,
	run:     runTimeseries,
}

// tsReading is one reading.
type tsReading struct {
	TS     time.Time `bson:"ts" timeseries:"time"`
	Sensor int       `bson:"sensor" timeseries:"meta"`
	Temp   float64   `bson:"temp"`
	Hum    float64   `bson:"hum"`
}

// tsTick is a reading as an element of a hand-rolled bucket.
type tsTick struct {
	At   time.Time `bson:"at"`
	Temp float64   `bson:"temp"`
	Hum  float64   `bson:"hum"`
}

// runTimeseries generates the scenario's data, loads it in the three
// forms and measures them.
func runTimeseries(e *env) ([]Metric, []Latency, error) {
	ctx, g := e.ctx, e.gen
	sensors := e.n(20, 3)
	per := e.n(2000, 100)
	step := 10 * time.Second
	t0 := time.Date(2026, 5, 18, 0, 0, 0, 0, time.UTC)
	var all []tsReading
	for i := range per {
		for s := range sensors {
			all = append(all, tsReading{TS: t0.Add(time.Duration(i) * step), Sensor: s,
				Temp: float64(150+g.intn(100)) / 10, Hum: float64(g.intn(1000)) / 10})
		}
	}
	e.step()

	fit, err := timeseries.FitSample(all[:min(len(all), 2000)])
	if err != nil {
		return nil, nil, err
	}
	ts, err := timeseries.New[tsReading](e.db, "readings", fit.Config())
	if err != nil {
		return nil, nil, err
	}
	if err := ts.Create(ctx); err != nil {
		return nil, nil, err
	}
	if err := ts.EnsureIndexes(ctx); err != nil {
		return nil, nil, err
	}
	if err := ts.InsertMany(ctx, all); err != nil {
		return nil, nil, err
	}
	naive := e.coll("naive_readings")
	if _, err := naive.Indexes().CreateOne(ctx, mongo.IndexModel{Keys: bson.D{{Key: "sensor", Value: 1}, {Key: "ts", Value: 1}}}); err != nil {
		return nil, nil, err
	}
	docs := make([]any, len(all))
	for i, r := range all {
		docs[i] = r
	}
	if _, err := naive.InsertMany(ctx, docs, options.InsertMany().SetOrdered(false)); err != nil {
		return nil, nil, err
	}
	bk, err := bucket.New[tsTick](e.coll("ticks"), bucket.Config{Size: 200, Owner: "sensor", Time: "at"})
	if err != nil {
		return nil, nil, err
	}
	if err := bk.EnsureIndexes(ctx); err != nil {
		return nil, nil, err
	}
	bySensor := map[int][]tsTick{}
	for _, r := range all {
		bySensor[r.Sensor] = append(bySensor[r.Sensor], tsTick{At: r.TS, Temp: r.Temp, Hum: r.Hum})
	}
	for s, ticks := range bySensor {
		if _, err := bk.Load(ctx, s, ticks); err != nil {
			return nil, nil, err
		}
	}
	e.step()

	reads := e.n(200, 10)
	end := t0.Add(time.Duration(per) * step)
	type q struct {
		sensor   int
		from, to time.Time
	}
	qs := make([]q, reads+warmup)
	for i := range qs {
		to := end.Add(-time.Duration(g.intn(per/2)) * step)
		qs[i] = q{sensor: g.intn(sensors), from: to.Add(-30 * time.Minute), to: to}
	}
	naiveRange, err := e.read(reads, func(i int) error {
		cur, err := naive.Find(ctx, bson.D{{Key: "sensor", Value: qs[i].sensor}, {Key: "ts", Value: bson.D{{Key: "$gte", Value: qs[i].from}, {Key: "$lt", Value: qs[i].to}}}},
			options.Find().SetSort(bson.D{{Key: "ts", Value: 1}}))
		if err != nil {
			return err
		}
		var out []tsReading
		return cur.All(ctx, &out)
	})
	if err != nil {
		return nil, nil, err
	}
	patRange, err := e.read(reads, func(i int) error { _, err := ts.Range(ctx, qs[i].sensor, qs[i].from, qs[i].to); return err })
	if err != nil {
		return nil, nil, err
	}
	bkRange, err := e.read(reads, func(i int) error { _, err := bk.Range(ctx, qs[i].sensor, qs[i].from, qs[i].to); return err })
	if err != nil {
		return nil, nil, err
	}
	e.step()

	writes := e.n(200, 10)
	fresh := make([]tsReading, writes+warmup)
	for i := range fresh {
		fresh[i] = tsReading{TS: end.Add(time.Duration(i/sensors) * step), Sensor: i % sensors, Temp: 20, Hum: 50}
	}
	naiveIns, err := e.run(writes, true, func(i int) error { _, err := naive.InsertOne(ctx, fresh[i]); return err })
	if err != nil {
		return nil, nil, err
	}
	patIns, err := e.run(writes, true, func(i int) error { return ts.Insert(ctx, fresh[i]) })
	if err != nil {
		return nil, nil, err
	}
	// Correcting a reading: one updateOne per reading in the naive form;
	// a delete and a reinsert in a time series collection, which updates
	// only its metaField.
	fixes := e.n(50, 5)
	naiveFix, err := e.run(fixes, true, func(i int) error {
		r := all[(i*7919)%len(all)]
		_, err := naive.UpdateOne(ctx, bson.D{{Key: "sensor", Value: r.Sensor}, {Key: "ts", Value: r.TS}}, bson.D{{Key: "$set", Value: bson.D{{Key: "temp", Value: r.Temp + 0.1}}}})
		return err
	})
	if err != nil {
		return nil, nil, err
	}
	patFix, err := e.run(fixes, true, func(i int) error {
		r := all[(i*7919)%len(all)]
		if _, err := ts.Delete(ctx, bson.D{{Key: "sensor", Value: r.Sensor}, {Key: "ts", Value: r.TS}}); err != nil {
			return err
		}
		r.Temp += 0.1
		return ts.Insert(ctx, r)
	})
	if err != nil {
		return nil, nil, err
	}
	e.step()

	nStore, err := e.storageOf("naive_readings")
	if err != nil {
		return nil, nil, err
	}
	pStore, err := e.storageOf("readings")
	if err != nil {
		return nil, nil, err
	}
	bStore, err := e.storageOf("ticks")
	if err != nil {
		return nil, nil, err
	}
	e.step()

	var ms []Metric
	ms = append(ms, readMetrics("one sensor's half hour", naiveRange, patRange)...)
	ms = append(ms, writeMetrics("record a reading", naiveIns, patIns)...)
	ms = append(ms, writeMetrics("correct a reading", naiveFix, patFix)...)
	ms = append(ms, storageMetrics(nStore, pStore)...)
	vs := func(m Metric) Metric { m.Name = "vs hand-rolled bucket: " + m.Name; m.Minor = true; return m }
	for _, m := range readMetrics("one sensor's half hour", bkRange, patRange) {
		if m.Timing || m.Unit == "docs" {
			ms = append(ms, vs(m))
		}
	}
	for _, m := range storageMetrics(bStore, pStore) {
		ms = append(ms, vs(m))
	}
	return ms, []Latency{
		latency("one sensor's half hour", naiveRange.opStats, patRange.opStats),
		latency("record a reading", naiveIns, patIns),
	}, nil
}
