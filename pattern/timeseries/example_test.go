package timeseries_test

import (
	"context"
	"errors"
	"fmt"
	"log"
	"time"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo"
	"go.mongodb.org/mongo-driver/v2/mongo/options"

	"github.com/formworkdb/formwork/engine"
	"github.com/formworkdb/formwork/pattern/timeseries"
)

// Reading is one measurement: its time and meta fields are declared by
// struct tags.
type Reading struct {
	TS     time.Time `bson:"ts" timeseries:"time"`
	Sensor int       `bson:"sensor" timeseries:"meta"`
	Temp   float64   `bson:"temp"`
}

// plant opens an in-memory engine and returns its "plant" database and a
// function that closes both.
func plant(ctx context.Context) (*mongo.Database, func()) {
	eng, err := engine.Open(ctx, engine.Options{})
	if err != nil {
		log.Fatal(err)
	}
	client, err := mongo.Connect(options.Client().ApplyURI("mongodb://localhost").SetDialer(eng.Dialer()))
	if err != nil {
		log.Fatal(err)
	}
	return client.Database("plant"), func() { client.Disconnect(ctx); eng.Close() }
}

// New declares the collection from the measurement type; Create makes it
// a time series collection, and Range reads one sensor's readings.
func ExampleNew() {
	ctx := context.Background()
	db, done := plant(ctx)
	defer done()
	readings, err := timeseries.New[Reading](db, "readings", timeseries.Config{Granularity: timeseries.Minutes})
	if err != nil {
		log.Fatal(err)
	}
	if err := readings.Create(ctx); err != nil {
		log.Fatal(err)
	}
	t0 := time.Date(2026, 5, 18, 0, 0, 0, 0, time.UTC)
	var rs []Reading
	for i := range 6 {
		rs = append(rs, Reading{TS: t0.Add(time.Duration(i) * time.Minute), Sensor: 1 + i%2, Temp: 12 + float64(i)})
	}
	if err := readings.InsertMany(ctx, rs); err != nil {
		log.Fatal(err)
	}
	got, err := readings.Range(ctx, 2, t0, t0.Add(time.Hour))
	if err != nil {
		log.Fatal(err)
	}
	for _, r := range got {
		fmt.Println(r.TS.Format("15:04"), r.Sensor, r.Temp)
	}
	// Output:
	// 00:01 2 13
	// 00:03 2 15
	// 00:05 2 17
}

// FitRate explains which bucketing suits a rate: here a reading per
// sensor every 30 seconds.
func ExampleFitRate() {
	f, err := timeseries.FitRate(30*time.Second, 0)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(f)
	// Output:
	// one measurement per series every 30s; a bucket holds at most 1000 measurements
	// seconds: buckets span up to 1h0m0s, rounded to 1m0s: 120 measurements per bucket (12% full), closes on its 1h0m0s span
	// minutes: buckets span up to 24h0m0s, rounded to 1h0m0s: 1000 measurements per bucket (100% full), fills after 8h20m0s
	// hours: buckets span up to 720h0m0s, rounded to 24h0m0s: 1000 measurements per bucket (100% full), fills after 8h20m0s
	// choose minutes: the finest granularity whose buckets fill; a coarser one stores the same buckets with a wider time range per bucket
}

// UpdateMeta refuses, before the server does, an update of a measurement
// field: a time series collection updates only its metaField.
func ExampleCollection_UpdateMeta() {
	ctx := context.Background()
	db, done := plant(ctx)
	defer done()
	readings, _ := timeseries.New[Reading](db, "readings", timeseries.Config{})
	readings.Create(ctx)

	_, err := readings.UpdateMeta(ctx, bson.D{{Key: "sensor", Value: 1}}, bson.D{{Key: "$set", Value: bson.D{{Key: "temp", Value: 0}}}})
	fmt.Println(errors.Is(err, timeseries.ErrRestriction))
	fmt.Println(err)
	// Output:
	// true
	// timeseries: update: $set of "temp": measurement fields cannot be updated, only the metaField "sensor" (delete and reinsert the measurements instead): not allowed on a time series collection
}

// CheckIndex refuses a unique index: the server cannot enforce it on
// buckets (code 72), and duplicates are the application's to drop.
func ExampleCollection_CheckIndex() {
	ctx := context.Background()
	db, done := plant(ctx)
	defer done()
	readings, _ := timeseries.New[Reading](db, "readings", timeseries.Config{})

	err := readings.CheckIndex(mongo.IndexModel{Keys: bson.D{{Key: "ts", Value: 1}}, Options: options.Index().SetUnique(true)})
	fmt.Println(errors.Is(err, timeseries.ErrRestriction))
	// Output:
	// true
}
