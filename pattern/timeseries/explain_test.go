package timeseries

import (
	"context"
	"testing"
	"time"

	"go.mongodb.org/mongo-driver/v2/bson"

	"github.com/formworkdb/formwork/internal/explaintest"
)

// TestRangePlan checks that a series' range query is answered from the
// {meta, time} index on the buckets, fetching only the series' bucket,
// not by unpacking every bucket.
func TestRangePlan(t *testing.T) {
	ctx := context.Background()
	c, db := readings(t, Config{})
	if err := c.EnsureIndexes(ctx); err != nil {
		t.Fatal(err)
	}
	if err := c.InsertMany(ctx, series(20, 200, 10*time.Second)); err != nil {
		t.Fatal(err)
	}
	f := c.RangeFilter(Sensor{SensorID: 7, Type: "temperature"}, t0.Add(10*time.Minute), t0.Add(20*time.Minute))
	res := explaintest.Run(t, db, bson.D{{Key: "find", Value: "readings"}, {Key: "filter", Value: f}})
	if !res.Uses("meta_1_ts_1") || res.HasStage("COLLSCAN") {
		t.Errorf("plan %s", res)
	}
	// One series' 200 readings span 2000s: one bucket of the 20.
	if d := res.DocsExamined(); d != 1 {
		t.Errorf("%d buckets examined, want 1", d)
	}
}
