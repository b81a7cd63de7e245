package bucket

import (
	"context"
	"fmt"
	"testing"
	"time"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo"
	"go.mongodb.org/mongo-driver/v2/mongo/options"

	"github.com/formworkdb/formwork/internal/explaintest"
)

// benchSize is the bucket size of the append benchmark.
const benchSize = 50

// tick is the element type of the append benchmark: a price at a time.
type tick struct {
	At time.Time `bson:"at"`
	Px float64   `bson:"px"`
}

// BenchmarkAppend appends to one owner that already holds 10k or 1M
// elements (full buckets of 50, loaded directly), one element at a time
// (Append: every 50th append finds no open bucket) and in full batches
// (AppendMany of 50: never an open bucket with room). ns/element and
// cpu-ns/element (CPU time of client and in-process engine) must not
// grow with the history; examined/append reports explain's keys and
// documents examined by the append filter when no bucket is open.
func BenchmarkAppend(b *testing.B) {
	ctx := context.Background()
	for _, n := range []int{10_000, 1_000_000} {
		for _, verb := range []string{"Append", "AppendMany"} {
			b.Run(fmt.Sprintf("elements=%d/verb=%s", n, verb), func(b *testing.B) {
				s, coll := newTickStore(b)
				preload(b, coll, "MDB", n)
				keys, docs := appendExamined(b, s, coll, "MDB")
				at := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
				elems := 0
				cpu0 := cpuTime()
				b.ResetTimer()
				for b.Loop() {
					if verb == "Append" {
						at = at.Add(time.Second)
						if _, err := s.Append(ctx, "MDB", tick{At: at, Px: 1}); err != nil {
							b.Fatal(err)
						}
						elems++
						continue
					}
					batch := make([]tick, benchSize)
					for i := range batch {
						at = at.Add(time.Second)
						batch[i] = tick{At: at, Px: 1}
					}
					if _, err := s.AppendMany(ctx, "MDB", batch); err != nil {
						b.Fatal(err)
					}
					elems += benchSize
				}
				b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(elems), "ns/element")
				b.ReportMetric(float64((cpuTime()-cpu0).Nanoseconds())/float64(elems), "cpu-ns/element")
				b.ReportMetric(float64(keys), "keys-examined/append")
				b.ReportMetric(float64(docs), "docs-examined/append")
			})
		}
	}
}

// newTickStore returns a Store of ticks, indexes made.
func newTickStore(b *testing.B) (*Store[tick], *mongo.Collection) {
	coll := newStoreColl(b)
	s, err := New[tick](coll, benchTickConfig())
	if err != nil {
		b.Fatal(err)
	}
	if err := s.EnsureIndexes(context.Background()); err != nil {
		b.Fatal(err)
	}
	return s, coll
}

// preload stores n ticks of owner as full buckets, oldest first, with
// insertMany, in the shape Append writes.
func preload(b *testing.B, coll *mongo.Collection, owner string, n int) {
	ctx := context.Background()
	base := time.Date(2020, 1, 1, 0, 0, 0, 0, time.UTC)
	var docs []any
	flush := func() {
		if len(docs) == 0 {
			return
		}
		if _, err := coll.InsertMany(ctx, docs, options.InsertMany().SetOrdered(false)); err != nil {
			b.Fatal(err)
		}
		docs = docs[:0]
	}
	for i := 0; i < n; i += benchSize {
		es := make(bson.A, benchSize)
		for j := range es {
			es[j] = tick{At: base.Add(time.Duration(i+j) * time.Second), Px: float64(i + j)}
		}
		docs = append(docs, preloadBucket(owner, es, base.Add(time.Duration(i)*time.Second),
			base.Add(time.Duration(i+benchSize-1)*time.Second)))
		if len(docs) == 1000 {
			flush()
		}
	}
	flush()
}

// appendExamined explains the append filter with no bucket open (every
// preloaded bucket is full) and returns the keys and documents examined.
func appendExamined(b *testing.B, s *Store[tick], coll *mongo.Collection, owner string) (keys, docs int64) {
	at := bson.NewDateTimeFromTime(time.Now())
	filter, upd := s.appendWrite(owner, tick{At: time.Now()}, 1, timeSpan{min: at, max: at, set: true})
	res := explaintest.Run(b, coll.Database(), bson.D{
		{Key: "update", Value: coll.Name()},
		{Key: "updates", Value: bson.A{bson.D{{Key: "q", Value: filter}, {Key: "u", Value: upd}, {Key: "upsert", Value: true}}}},
	})
	return res.KeysExamined(), res.DocsExamined()
}

// newStoreColl returns a fresh collection for a benchmark.
func newStoreColl(b *testing.B) *mongo.Collection {
	_, coll := newStore(b, Config{Size: 1})
	return coll.Database().Collection("ticks")
}

// benchTickConfig is the benchmark's Config.
func benchTickConfig() Config {
	return Config{Size: benchSize, Time: "at"}
}

// preloadBucket is one full bucket as Append stores it.
func preloadBucket(owner string, es bson.A, first, last time.Time) bson.D {
	return bson.D{{Key: "owner", Value: owner}, {Key: "count", Value: int32(len(es))},
		{Key: "elements", Value: es}, {Key: "openedAt", Value: first},
		{Key: "minTime", Value: first}, {Key: "maxTime", Value: last}}
}
