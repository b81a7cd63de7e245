package bucket

import (
	"context"
	"errors"
	"sync/atomic"
	"testing"
	"time"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo"
	"go.mongodb.org/mongo-driver/v2/mongo/options"

	"github.com/formworkdb/formwork/internal/testenv"
)

// trade is the element type of the tests.
type trade struct {
	ID     string `bson:"id"`
	Ticker string `bson:"ticker"`
	Qty    int    `bson:"qty"`
}

// tickClock returns a clock that starts at a fixed instant and advances by
// step on every call; safe for concurrent use.
func tickClock(step time.Duration) func() time.Time {
	base := time.Date(2025, 5, 1, 9, 30, 0, 0, time.UTC)
	var n atomic.Int64
	return func() time.Time { return base.Add(time.Duration(n.Add(1)-1) * step) }
}

// newStore returns a Store of trades over a fresh collection, indexes made.
func newStore(t testing.TB, cfg Config) (*Store[trade], *mongo.Collection) {
	t.Helper()
	coll := testenv.Database(t).Collection("trades")
	if cfg.Clock == nil {
		cfg.Clock = tickClock(time.Second)
	}
	s, err := New[trade](coll, cfg)
	if err != nil {
		t.Fatal(err)
	}
	if err := s.EnsureIndexes(context.Background()); err != nil {
		t.Fatal(err)
	}
	return s, coll
}

// stored returns the buckets as stored, filter applied, oldest first.
func stored(t testing.TB, coll *mongo.Collection, filter any) []bson.Raw {
	t.Helper()
	ctx := context.Background()
	c, err := coll.Find(ctx, filter, options.Find().SetSort(bson.D{{Key: "openedAt", Value: 1}, {Key: "_id", Value: 1}}))
	if err != nil {
		t.Fatal(err)
	}
	var out []bson.Raw
	if err := c.All(ctx, &out); err != nil {
		t.Fatal(err)
	}
	return out
}

// arrayLen returns the length of the array at key in doc, or -1.
func arrayLen(doc bson.Raw, key string) int {
	arr, ok := doc.Lookup(key).ArrayOK()
	if !ok {
		return -1
	}
	vals, err := arr.Values()
	if err != nil {
		return -1
	}
	return len(vals)
}

// serverCode returns the server error code of err, or 0.
func serverCode(err error) int {
	var se mongo.ServerError
	if !errors.As(err, &se) {
		return 0
	}
	if codes := se.ErrorCodes(); len(codes) > 0 {
		return codes[0]
	}
	return 0
}
