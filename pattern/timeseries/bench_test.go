package timeseries

import (
	"context"
	"testing"
	"time"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo"
	"go.mongodb.org/mongo-driver/v2/mongo/options"

	"github.com/formworkdb/formwork/internal/explaintest"
	"github.com/formworkdb/formwork/internal/testenv"
	"github.com/formworkdb/formwork/pattern/bucket"
)

// Bench data: 20 sensors, a reading every 10 seconds for 2000 readings
// each (about 5.5 hours), 40000 readings.
const (
	benchSensors  = 20
	benchReadings = 2000
	benchStep     = 10 * time.Second
)

// tick is a reading as an element of a hand-rolled bucket.
type tick struct {
	At   time.Time `bson:"at"`
	Temp float64   `bson:"temp"`
}

// sizeOf returns collStats' size and totalIndexSize of coll (for a time
// series collection, of its buckets).
func sizeOf(b *testing.B, db *mongo.Database, coll string) (data, index float64) {
	var r bson.Raw
	if err := db.RunCommand(context.Background(), bson.D{{Key: "collStats", Value: coll}}).Decode(&r); err != nil {
		b.Fatal(err)
	}
	d, _ := r.Lookup("size").AsInt64OK()
	i, _ := r.Lookup("totalIndexSize").AsInt64OK()
	return float64(d), float64(i)
}

// BenchmarkSensorRange loads 40000 readings of 20 sensors three ways and
// reads one sensor's 30 minutes (180 readings): per-event documents with
// an index {sensor, ts} (the naive form), a time series collection
// (server-side buckets, index {meta, ts}), and hand-rolled buckets of 200
// (pattern/bucket, index {owner, maxTime, minTime}). It reports the
// documents the read examines and the stored data and index bytes.
func BenchmarkSensorRange(b *testing.B) {
	ctx := context.Background()
	rs := series(benchSensors, benchReadings, benchStep)
	from, to := t0.Add(2*time.Hour), t0.Add(150*time.Minute)
	const want = 180
	report := func(b *testing.B, db *mongo.Database, coll string, examined int64) {
		d, i := sizeOf(b, db, coll)
		b.ReportMetric(float64(examined), "docsExamined/op")
		b.ReportMetric(d, "dataBytes")
		b.ReportMetric(i, "indexBytes")
	}
	examined := func(b *testing.B, db *mongo.Database, coll string, filter bson.D) int64 {
		return explaintest.Run(b, db, bson.D{{Key: "find", Value: coll}, {Key: "filter", Value: filter}}).DocsExamined()
	}
	b.Run("naive=per-event", func(b *testing.B) {
		db := testenv.Database(b)
		coll := db.Collection("events")
		if _, err := coll.Indexes().CreateOne(ctx, mongo.IndexModel{Keys: bson.D{{Key: "meta", Value: 1}, {Key: "ts", Value: 1}}}); err != nil {
			b.Fatal(err)
		}
		docs := make([]any, len(rs))
		for i, r := range rs {
			docs[i] = r
		}
		if _, err := coll.InsertMany(ctx, docs, options.InsertMany().SetOrdered(false)); err != nil {
			b.Fatal(err)
		}
		f := bson.D{{Key: "meta", Value: Sensor{SensorID: 7, Type: "temperature"}}, {Key: "ts", Value: bson.D{{Key: "$gte", Value: from}, {Key: "$lt", Value: to}}}}
		for b.Loop() {
			var out []Reading
			cur, err := coll.Find(ctx, f, options.Find().SetSort(bson.D{{Key: "ts", Value: 1}}))
			if err != nil {
				b.Fatal(err)
			}
			if err := cur.All(ctx, &out); err != nil || len(out) != want {
				b.Fatalf("%d readings: %v", len(out), err)
			}
		}
		report(b, db, "events", examined(b, db, "events", f))
	})
	b.Run("pattern=timeseries", func(b *testing.B) {
		c, db := readings(b, Config{})
		if err := c.EnsureIndexes(ctx); err != nil {
			b.Fatal(err)
		}
		if err := c.InsertMany(ctx, rs); err != nil {
			b.Fatal(err)
		}
		for b.Loop() {
			out, err := c.Range(ctx, Sensor{SensorID: 7, Type: "temperature"}, from, to)
			if err != nil || len(out) != want {
				b.Fatalf("%d readings: %v", len(out), err)
			}
		}
		report(b, db, "readings", examined(b, db, "readings", c.RangeFilter(Sensor{SensorID: 7, Type: "temperature"}, from, to)))
	})
	b.Run("alt=bucket", func(b *testing.B) {
		db := testenv.Database(b)
		s, err := bucket.New[tick](db.Collection("ticks"), bucket.Config{Size: 200, Owner: "sensor", Time: "at"})
		if err != nil {
			b.Fatal(err)
		}
		if err := s.EnsureIndexes(ctx); err != nil {
			b.Fatal(err)
		}
		per := map[int][]tick{}
		for _, r := range rs {
			per[r.Meta.SensorID] = append(per[r.Meta.SensorID], tick{At: r.TS, Temp: r.Temp})
		}
		for id, ts := range per {
			if _, err := s.Load(ctx, id, ts); err != nil {
				b.Fatal(err)
			}
		}
		for b.Loop() {
			out, err := s.Range(ctx, 7, from, to)
			if err != nil || len(out) != want {
				b.Fatalf("%d readings: %v", len(out), err)
			}
		}
		report(b, db, "ticks", examined(b, db, "ticks", s.RangeFilter(7, from, to)))
	})
}
