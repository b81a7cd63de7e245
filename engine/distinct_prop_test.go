package engine_test

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo"
	"pgregory.net/rapid"

	"github.com/formworkdb/formwork/engine/internal/bsonkit"
)

// TestDistinctScanEquivalence checks, for random documents, indexes and
// filters, that distinct through whatever plan the planner picks
// (DISTINCT_SCAN included) returns the values a collection scan returns,
// apart from the null a DISTINCT_SCAN adds for documents lacking the path
// (SERVER-14832) and the undefined it reports for an empty array (its
// index key). Numbers compare by value: among equal numbers of
// different types each plan returns the first it meets, as in mongod.
// Filters include an equality on a leading field before any predicate.
// count (COUNT_SCAN included), with a random skip and limit, must agree
// with a collection scan exactly.
func TestDistinctScanEquivalence(t *testing.T) {
	_, db := newDB(t)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	iter := 0
	rapid.Check(t, func(rt *rapid.T) {
		iter++
		c := db.Collection(fmt.Sprintf("d%d", iter))
		n := rapid.IntRange(1, 20).Draw(rt, "ndocs")
		var docs []any
		for i := 0; i < n; i++ {
			docs = append(docs, genDoc(rt, i))
		}
		if _, err := c.InsertMany(ctx, docs); err != nil {
			rt.Fatalf("insert: %v", err)
		}
		var specs bson.A
		for i, ix := range propIndexes {
			if rapid.Bool().Draw(rt, fmt.Sprintf("ix%d", i)) {
				specs = append(specs, ix)
			}
		}
		if len(specs) > 0 {
			err := db.RunCommand(ctx, bson.D{{Key: "createIndexes", Value: c.Name()}, {Key: "indexes", Value: specs}}).Err()
			var ce mongo.CommandError
			if errors.As(err, &ce) && ce.Code == 171 {
				rt.Skip("parallel arrays")
			}
			if err != nil {
				rt.Fatalf("createIndexes: %v", err)
			}
		}
		key := []string{"a", "b", "c.x", "a.x"}[rapid.IntRange(0, 3).Draw(rt, "key")]
		filter := bson.D{}
		switch rapid.IntRange(0, 2).Draw(rt, "filtered") {
		case 1:
			filter = bson.D{genPred(rt)}
		case 2:
			// An equality on a leading field, then any predicate: a
			// DISTINCT_SCAN on a trailing key after an equality prefix.
			eq := bson.D{{Key: []string{"a", "b", "a.x"}[rapid.IntRange(0, 2).Draw(rt, "eqpath")], Value: genValue(rt, 0)}}
			filter = bson.D{{Key: "$and", Value: bson.A{eq, bson.D{genPred(rt)}}}}
		}
		skip := int64(rapid.IntRange(0, 3).Draw(rt, "skip"))
		limit := int64(rapid.IntRange(0, 3).Draw(rt, "limit"))
		distinct := func(hint any) ([]bson.RawValue, error) {
			cmd := bson.D{{Key: "distinct", Value: c.Name()}, {Key: "key", Value: key}, {Key: "query", Value: filter}}
			if hint != nil {
				cmd = append(cmd, bson.E{Key: "hint", Value: hint})
			}
			var res struct{ Values []bson.RawValue }
			if err := db.RunCommand(ctx, cmd).Decode(&res); err != nil {
				return nil, err
			}
			return res.Values, nil
		}
		want, err := distinct(bson.D{{Key: "$natural", Value: 1}})
		if err != nil {
			var ce mongo.CommandError
			if errors.As(err, &ce) && (ce.Code == 2 || ce.Code == 51091) {
				rt.Skip("invalid query")
			}
			rt.Fatalf("collscan: %v", err)
		}
		got, err := distinct(nil)
		if err != nil {
			rt.Fatalf("planned: %v", err)
		}
		count := func(hint any) int64 {
			cmd := bson.D{{Key: "count", Value: c.Name()}, {Key: "query", Value: filter}, {Key: "skip", Value: skip}, {Key: "limit", Value: limit}}
			if hint != nil {
				cmd = append(cmd, bson.E{Key: "hint", Value: hint})
			}
			var res struct{ N int64 }
			if err := db.RunCommand(ctx, cmd).Decode(&res); err != nil {
				rt.Fatalf("count: %v", err)
			}
			return res.N
		}
		if g, w := count(nil), count(bson.D{{Key: "$natural", Value: 1}}); g != w {
			rt.Fatalf("count %v skip %d limit %d = %d, collection scan %d\ndocs %v", filter, skip, limit, g, w, docs)
		}
		if !sameValues(withoutNull(got), withoutNull(want)) || len(withoutNull(want)) != len(want) && len(withoutNull(got)) == len(got) {
			rt.Fatalf("distinct %s %v:\n got %v\nwant %v\ndocs %v", key, filter, got, want, docs)
		}
	})
}

// withoutNull drops null and undefined: the keys of a missing path and of
// an empty array, which a DISTINCT_SCAN reports as mongod's does.
func withoutNull(vs []bson.RawValue) []bson.RawValue {
	var out []bson.RawValue
	for _, v := range vs {
		if v.Type != bson.TypeNull && v.Type != bson.TypeUndefined {
			out = append(out, v)
		}
	}
	return out
}

// sameValues compares two sorted value lists by BSON comparison, under
// which numbers of different types compare by value.
func sameValues(a, b []bson.RawValue) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if bsonkit.Compare(a[i], b[i]) != 0 {
			return false
		}
	}
	return true
}
