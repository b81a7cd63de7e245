package bucket

import (
	"context"
	"errors"
	"slices"
	"testing"
	"time"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo"

	"github.com/formworkdb/formwork/internal/explaintest"
)

// t0 is the first tick of the time tests, years before the clock.
var t0 = time.Date(2019, 3, 1, 0, 0, 0, 0, time.UTC)

// newTicks returns a Store of ticks with Time "at", ElementID "id" (the
// tick's px), indexes made, over a fresh collection.
func newTicks(t testing.TB, size int) (*Store[bson.D], *tickColl) {
	t.Helper()
	_, coll := newStore(t, Config{Size: 1})
	tc := &tickColl{coll.Database().Collection("ticks")}
	s, err := New[bson.D](tc.Collection, Config{Size: size, Time: "at", ElementID: "id",
		Clock: func() time.Time { return time.Date(2026, 12, 1, 0, 0, 0, 0, time.UTC) }})
	if err != nil {
		t.Fatal(err)
	}
	if err := s.EnsureIndexes(context.Background()); err != nil {
		t.Fatal(err)
	}
	return s, tc
}

// tickAt is an element with id and time t0+sec seconds.
func tickAt(id, sec int) bson.D {
	return bson.D{{Key: "id", Value: id}, {Key: "at", Value: t0.Add(time.Duration(sec) * time.Second)}}
}

// at returns t0+sec seconds.
func at(sec int) time.Time { return t0.Add(time.Duration(sec) * time.Second) }

// bounds returns the stored openedAt, minTime and maxTime of a bucket.
func bounds(d bson.Raw) (opened, lo, hi time.Time) {
	get := func(k string) time.Time {
		if v, ok := d.Lookup(k).TimeOK(); ok {
			return v.UTC()
		}
		return time.Time{}
	}
	return get("openedAt"), get("minTime"), get("maxTime")
}

// TestTimeBoundsFromElements is the regression test for openedAt taken
// from the clock: historical ticks loaded today got today's openedAt and
// no bounds. Now openedAt is the first element's time and minTime/maxTime
// follow the elements, out of order too.
func TestTimeBoundsFromElements(t *testing.T) {
	ctx := context.Background()
	s, coll := newTicks(t, 4)
	for _, sec := range []int{10, 5, 30} {
		if _, err := s.Append(ctx, "MDB", tickAt(sec, sec)); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := s.AppendMany(ctx, "MDB", []bson.D{tickAt(40, 40), tickAt(1, 1), tickAt(50, 50)}); err != nil {
		t.Fatal(err)
	}
	docs := stored(t, coll.Collection, bson.D{})
	if len(docs) != 2 {
		t.Fatalf("%d buckets", len(docs))
	}
	type want struct{ opened, lo, hi time.Time }
	got := []want{}
	for _, d := range docs {
		o, lo, hi := bounds(d)
		got = append(got, want{o, lo, hi})
	}
	wants := []want{{at(10), at(5), at(30)}, {at(1), at(1), at(50)}}
	slices.SortFunc(got, func(a, b want) int { return a.lo.Compare(b.lo) })
	slices.SortFunc(wants, func(a, b want) int { return a.lo.Compare(b.lo) })
	if !slices.Equal(got, wants) {
		t.Errorf("openedAt/minTime/maxTime %v, want %v", got, wants)
	}
	infos, err := s.Buckets(ctx, "MDB")
	if err != nil {
		t.Fatal(err)
	}
	for _, in := range infos {
		if in.MinTime.IsZero() || in.MaxTime.Before(in.MinTime) {
			t.Errorf("Info without bounds: %+v", in)
		}
	}
	// Elements without a date there are refused, nothing stored.
	for _, bad := range []bson.D{{{Key: "id", Value: 1}}, {{Key: "id", Value: 1}, {Key: "at", Value: "2019-03-01"}}} {
		if _, err := s.Append(ctx, "MDB", bad); err == nil {
			t.Errorf("Append of %v succeeded", bad)
		}
	}
	if n, _ := coll.CountDocuments(ctx, bson.D{}); n != 2 {
		t.Errorf("%d buckets after refused appends", n)
	}
}

// tickColl wraps the ticks collection.
type tickColl struct{ *mongo.Collection }

// TestRangePlan loads 100k ticks (2,000 buckets of 50) for one owner and
// a few for others, and checks that a one-hour range reads only the
// buckets overlapping it through the time index, and returns exactly the
// hour's ticks.
func TestRangePlan(t *testing.T) {
	ctx := context.Background()
	s, coll := newTicks(t, 50)
	const n = 100_000
	for i := 0; i < n; i += 50 {
		batch := make([]bson.D, 50)
		for j := range batch {
			batch[j] = tickAt(i+j, i+j)
		}
		if _, err := s.AppendMany(ctx, "MDB", batch); err != nil {
			t.Fatal(err)
		}
	}
	for _, other := range []string{"AAA", "ZZZ"} {
		if _, err := s.AppendMany(ctx, other, []bson.D{tickAt(1, 40_000), tickAt(2, 40_100)}); err != nil {
			t.Fatal(err)
		}
	}
	from, to := at(40_000), at(40_000+3600)
	overlapping := 0
	for _, d := range stored(t, coll.Collection, bson.D{{Key: "owner", Value: "MDB"}}) {
		if _, lo, hi := bounds(d); !hi.Before(from) && lo.Before(to) {
			overlapping++
		}
	}
	res := explaintest.Run(t, coll.Database(), bson.D{
		{Key: "find", Value: coll.Name()},
		{Key: "filter", Value: s.RangeFilter("MDB", from, to)},
	})
	ix := res.MustStage("IXSCAN")
	if ix.Index != "owner_1_maxTime_1_minTime_1" {
		t.Errorf("IXSCAN on %s", ix.Index)
	}
	if n := res.DocsExamined(); n != int64(overlapping) {
		t.Errorf("%d buckets examined, want the %d overlapping the hour (of 2000)", n, overlapping)
	}
	t.Logf("one-hour range: %d keys, %d buckets examined, %d overlapping, of %d", res.KeysExamined(), res.DocsExamined(), overlapping, n/50)
	got, err := s.Range(ctx, "MDB", from, to)
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 3600 {
		t.Fatalf("Range returned %d ticks, want 3600", len(got))
	}
	for i, d := range got {
		if d[0].Value.(int32) != int32(40_000+i) {
			t.Fatalf("tick %d is %v", i, d)
		}
	}
	plain, _ := newStore(t, Config{Size: 3})
	if _, err := plain.Range(ctx, 1, from, to); !errors.Is(err, ErrInvalidConfig) {
		t.Errorf("Range without Time: %v", err)
	}
}

// TestAppendExaminesOnlyOpenBuckets is the regression test for the
// append filter {owner, count: {$lt: Size}} planned on the owner prefix
// of {owner: 1, openedAt: -1}: with no open bucket it examined every
// bucket of the owner. On {owner: 1, count: 1} it examines none then, and
// the one open bucket otherwise.
func TestAppendExaminesOnlyOpenBuckets(t *testing.T) {
	ctx := context.Background()
	s, coll := newStore(t, Config{Size: 5})
	fill(t, s, 1, 0, 500) // 100 full buckets
	fill(t, s, 2, 0, 500)
	explain := func(k int) explaintest.Result {
		filter, upd := s.appendWrite(1, bson.D{{Key: "$each", Value: make(bson.A, k)}}, k, timeSpan{})
		return explaintest.Run(t, coll.Database(), bson.D{
			{Key: "update", Value: coll.Name()},
			{Key: "updates", Value: bson.A{bson.D{{Key: "q", Value: filter}, {Key: "u", Value: upd}, {Key: "upsert", Value: true}}}},
		})
	}
	for _, k := range []int{1, 5} {
		res := explain(k)
		if !res.Uses("owner_1_count_1") {
			t.Errorf("append of %d: plan %v", k, res)
		}
		if res.DocsExamined() != 0 || res.KeysExamined() > 1 {
			t.Errorf("append of %d with no open bucket: %d keys, %d documents examined, want 0 documents", k, res.KeysExamined(), res.DocsExamined())
		}
	}
	fill(t, s, 1, 500, 502) // one open bucket with 2
	if res := explain(1); res.DocsExamined() != 1 || res.KeysExamined() > 2 {
		t.Errorf("append with one open bucket: %d keys, %d documents examined, want 1 document", res.KeysExamined(), res.DocsExamined())
	}
	if res := explain(4); res.DocsExamined() != 0 {
		t.Errorf("append of 4 with 3 free slots: %d documents examined, want 0", res.DocsExamined())
	}
	opened, err := s.Append(ctx, 1, trade{ID: "x"})
	if err != nil || opened {
		t.Errorf("append with an open bucket: opened %v, %v", opened, err)
	}
}
