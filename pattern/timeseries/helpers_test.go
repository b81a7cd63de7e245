package timeseries

import (
	"context"
	"testing"
	"time"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo"

	"github.com/formworkdb/formwork/internal/testenv"
)

// Reading is a sensor's temperature reading, the catalogue's shape.
type Reading struct {
	TS   time.Time `bson:"ts" timeseries:"time"`
	Meta Sensor    `bson:"meta" timeseries:"meta"`
	Temp float64   `bson:"temp"`
}

// Sensor is a reading's meta value.
type Sensor struct {
	SensorID int    `bson:"sensorId"`
	Type     string `bson:"type"`
}

var t0 = time.Date(2026, 5, 18, 0, 0, 0, 0, time.UTC)

// readings declares the readings collection in a fresh database.
func readings(t testing.TB, cfg Config) (*Collection[Reading], *mongo.Database) {
	t.Helper()
	db := testenv.Database(t)
	c, err := New[Reading](db, "readings", cfg)
	if err != nil {
		t.Fatal(err)
	}
	if err := c.Create(context.Background()); err != nil {
		t.Fatal(err)
	}
	return c, db
}

// series returns n readings per sensor, every step, for sensors 1…k.
func series(k, n int, step time.Duration) []Reading {
	var out []Reading
	for i := range n {
		for s := 1; s <= k; s++ {
			out = append(out, Reading{TS: t0.Add(time.Duration(i) * step), Meta: Sensor{SensorID: s, Type: "temperature"}, Temp: float64(i%30) + float64(s)/10})
		}
	}
	return out
}

// info returns the collection's listCollections entry.
func info(t testing.TB, db *mongo.Database, name string) bson.Raw {
	t.Helper()
	cur, err := db.ListCollections(context.Background(), bson.D{{Key: "name", Value: name}})
	if err != nil {
		t.Fatal(err)
	}
	defer cur.Close(context.Background())
	if !cur.Next(context.Background()) {
		t.Fatalf("no collection %s", name)
	}
	return cur.Current
}

// testenvDB returns a fresh database.
func testenvDB(t testing.TB) *mongo.Database { return testenv.Database(t) }
