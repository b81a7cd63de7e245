package bucket

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"testing"
	"time"

	"go.mongodb.org/mongo-driver/v2/bson"
)

// ids returns the ids of ts.
func ids(ts []trade) []string {
	var out []string
	for _, t := range ts {
		out = append(out, t.ID)
	}
	return out
}

// seq returns "t<from>" … "t<to-1>".
func seq(from, to int) []string {
	var out []string
	for i := from; i < to; i++ {
		out = append(out, fmt.Sprintf("t%d", i))
	}
	return out
}

// fill appends trades t<from>…t<to-1> for owner.
func fill(t testing.TB, s *Store[trade], owner any, from, to int) {
	t.Helper()
	for i := from; i < to; i++ {
		if _, err := s.Append(context.Background(), owner, trade{ID: fmt.Sprintf("t%d", i), Qty: i}); err != nil {
			t.Fatal(err)
		}
	}
}

// pages reads every page of owner, newest first.
func pages(t testing.TB, s *Store[trade], owner any) []Page[trade] {
	t.Helper()
	var out []Page[trade]
	var cur Cursor
	for range 1000 {
		p, err := s.Page(context.Background(), owner, cur)
		if err != nil {
			t.Fatal(err)
		}
		if len(p.Buckets) == 0 {
			if len(p.Elements) != 0 || p.DocsRead != 0 {
				t.Fatalf("empty page with %d elements, %d docs read", len(p.Elements), p.DocsRead)
			}
			return out
		}
		out = append(out, p)
		cur = p.Next
	}
	t.Fatal("pagination does not end")
	return nil
}

func TestPageNewestFirst(t *testing.T) {
	ctx := context.Background()
	s, _ := newStore(t, Config{Size: 10})
	fill(t, s, "alice", 0, 35)
	fill(t, s, "bob", 0, 3)
	ps := pages(t, s, "alice")
	if len(ps) != 4 {
		t.Fatalf("%d pages, want 4", len(ps))
	}
	want := [][]string{seq(30, 35), seq(20, 30), seq(10, 20), seq(0, 10)}
	for i, p := range ps {
		if !slices.Equal(ids(p.Elements), want[i]) {
			t.Errorf("page %d: %v, want %v", i, ids(p.Elements), want[i])
		}
		if len(p.Buckets) != 1 || p.Buckets[0].Count != len(want[i]) {
			t.Errorf("page %d: buckets %+v", i, p.Buckets)
		}
		// The newest page ends in an open bucket, so the next (full)
		// bucket is read to know it is not open too.
		wantRead := 1
		if i == 0 {
			wantRead = 2
		}
		if p.DocsRead != wantRead {
			t.Errorf("page %d: %d documents read, want %d", i, p.DocsRead, wantRead)
		}
	}
	for i := 1; i < len(ps); i++ {
		if !ps[i].Buckets[0].OpenedAt.Before(ps[i-1].Buckets[0].OpenedAt) {
			t.Errorf("page %d opened %v, not before page %d's %v", i, ps[i].Buckets[0].OpenedAt, i-1, ps[i-1].Buckets[0].OpenedAt)
		}
	}
	all, err := s.All(ctx, "alice")
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(ids(all), seq(0, 35)) {
		t.Errorf("All: %v", ids(all))
	}
	if got := pages(t, s, "nobody"); len(got) != 0 {
		t.Errorf("owner without buckets has %d pages", len(got))
	}
	infos, err := s.Buckets(ctx, "bob")
	if err != nil {
		t.Fatal(err)
	}
	if len(infos) != 1 || infos[0].Count != 3 {
		t.Errorf("bob's buckets: %+v", infos)
	}
}

// TestPageKeysetSameOpenedAt opens every bucket in the same millisecond:
// a strict $lt keyset would stop after the first page.
func TestPageKeysetSameOpenedAt(t *testing.T) {
	at := time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC)
	s, _ := newStore(t, Config{Size: 4, Clock: func() time.Time { return at }})
	fill(t, s, 7, 0, 18)
	ps := pages(t, s, 7)
	if len(ps) != 5 {
		t.Fatalf("%d pages, want 5", len(ps))
	}
	var got []string
	seen := map[string]bool{}
	for _, p := range ps {
		for _, b := range p.Buckets {
			if seen[b.ID.String()] {
				t.Errorf("bucket %v read twice", b.ID)
			}
			seen[b.ID.String()] = true
		}
		got = append(got, ids(p.Elements)...)
	}
	slices.Sort(got)
	want := seq(0, 18)
	slices.Sort(want)
	if !slices.Equal(got, want) {
		t.Errorf("elements read %v, want each of %v once", got, want)
	}
}

// TestPageCursorIsStable checks that appends after a cursor was taken
// neither repeat nor hide older pages.
func TestPageCursorIsStable(t *testing.T) {
	ctx := context.Background()
	s, _ := newStore(t, Config{Size: 5})
	fill(t, s, 1, 0, 15)
	first, err := s.Page(ctx, 1, Cursor{})
	if err != nil {
		t.Fatal(err)
	}
	fill(t, s, 1, 15, 27) // opens newer buckets
	second, err := s.Page(ctx, 1, first.Next)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(ids(first.Elements), seq(10, 15)) || !slices.Equal(ids(second.Elements), seq(5, 10)) {
		t.Errorf("pages %v then %v", ids(first.Elements), ids(second.Elements))
	}
	// Rebuilt from its fields, a cursor works the same.
	again, err := s.Page(ctx, 1, Cursor{OpenedAt: first.Next.OpenedAt, IDs: slices.Clone(first.Next.IDs)})
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(ids(again.Elements), ids(second.Elements)) {
		t.Errorf("rebuilt cursor read %v", ids(again.Elements))
	}
}

// TestTwoOpenBuckets builds the state two racing upserts leave behind, two
// open buckets of one owner, and checks that reads merge them and appends
// fill both before a third opens.
func TestTwoOpenBuckets(t *testing.T) {
	ctx := context.Background()
	s, coll := newStore(t, Config{Size: 5})
	fill(t, s, "o", 0, 5) // one full bucket
	t0 := time.Date(2025, 6, 1, 12, 0, 0, 0, time.UTC)
	mk := func(at time.Time, ts ...string) bson.D {
		var es bson.A
		for _, id := range ts {
			es = append(es, trade{ID: id})
		}
		return bson.D{{Key: "owner", Value: "o"}, {Key: "elements", Value: es},
			{Key: "count", Value: int32(len(es))}, {Key: "openedAt", Value: at}}
	}
	if _, err := coll.InsertMany(ctx, []any{mk(t0, "a1", "a2", "a3"), mk(t0.Add(time.Millisecond), "b1", "b2")}); err != nil {
		t.Fatal(err)
	}
	ps := pages(t, s, "o")
	if len(ps) != 2 {
		t.Fatalf("%d pages, want the merged doubles then the full bucket", len(ps))
	}
	if !slices.Equal(ids(ps[0].Elements), []string{"a1", "a2", "a3", "b1", "b2"}) || len(ps[0].Buckets) != 2 {
		t.Errorf("head page %v over %d buckets", ids(ps[0].Elements), len(ps[0].Buckets))
	}
	if ps[0].DocsRead != 3 {
		t.Errorf("head page read %d documents, want 3 (two open, one full)", ps[0].DocsRead)
	}
	if !slices.Equal(ids(ps[1].Elements), seq(0, 5)) {
		t.Errorf("second page %v", ids(ps[1].Elements))
	}
	// Five more appends fit into the two open buckets (2 + 3 free slots).
	for i := range 5 {
		opened, err := s.Append(ctx, "o", trade{ID: fmt.Sprintf("c%d", i)})
		if err != nil {
			t.Fatal(err)
		}
		if opened {
			t.Fatalf("append %d opened a bucket while one had room", i)
		}
	}
	opened, err := s.Append(ctx, "o", trade{ID: "d"})
	if err != nil || !opened {
		t.Fatalf("append after both filled: opened %v, %v", opened, err)
	}
	docs := stored(t, coll, bson.D{})
	var counts []int32
	for _, d := range docs {
		counts = append(counts, d.Lookup("count").Int32())
		if int(d.Lookup("count").Int32()) != arrayLen(d, "elements") {
			t.Errorf("bucket %v: count %v, %d elements", d.Lookup("_id"), d.Lookup("count"), arrayLen(d, "elements"))
		}
	}
	slices.Sort(counts)
	if !slices.Equal(counts, []int32{1, 5, 5, 5}) {
		t.Errorf("counts %v, want three full buckets and one with 1", counts)
	}
	// Every bucket is visited once, whatever the order of openedAt.
	var n int
	for _, p := range pages(t, s, "o") {
		n += len(p.Elements)
	}
	if n != 16 {
		t.Errorf("pages hold %d elements, want 16", n)
	}
}

func TestFindReplaceUpdate(t *testing.T) {
	ctx := context.Background()
	s, coll := newStore(t, Config{Size: 4, ElementID: "id"})
	fill(t, s, 9, 0, 10)
	fill(t, s, 8, 0, 2) // same ids, other owner

	got, in, err := s.Find(ctx, 9, "t6")
	if err != nil {
		t.Fatal(err)
	}
	if got != (trade{ID: "t6", Qty: 6}) || in.Count != 4 {
		t.Errorf("Find: %+v in %+v", got, in)
	}
	if _, _, err := s.Find(ctx, 9, "t99"); !errors.Is(err, ErrNotFound) {
		t.Errorf("Find of a missing id: %v", err)
	}
	if _, _, err := s.Find(ctx, 8, "t6"); !errors.Is(err, ErrNotFound) {
		t.Errorf("Find under another owner: %v", err)
	}

	if err := s.Replace(ctx, 9, "t6", trade{ID: "t6", Ticker: "MDB", Qty: 400}); err != nil {
		t.Fatal(err)
	}
	if err := s.Update(ctx, 9, "t1", bson.D{{Key: "qty", Value: 7}, {Key: "ticker", Value: "XYZ"}}); err != nil {
		t.Fatal(err)
	}
	// As stored: exactly the two elements changed, in place, and the
	// other owner's t1 did not.
	all, err := s.All(ctx, 9)
	if err != nil {
		t.Fatal(err)
	}
	for i, tr := range all {
		want := trade{ID: fmt.Sprintf("t%d", i), Qty: i}
		switch i {
		case 6:
			want = trade{ID: "t6", Ticker: "MDB", Qty: 400}
		case 1:
			want = trade{ID: "t1", Ticker: "XYZ", Qty: 7}
		}
		if tr != want {
			t.Errorf("element %d: %+v, want %+v", i, tr, want)
		}
	}
	other := stored(t, coll, bson.D{{Key: "owner", Value: 8}})
	if got := other[0].Lookup("elements").String(); got != `[{"id": "t0","ticker": "","qty": {"$numberInt":"0"}},{"id": "t1","ticker": "","qty": {"$numberInt":"1"}}]` {
		t.Errorf("other owner's bucket changed: %s", got)
	}
	for _, d := range stored(t, coll, bson.D{{Key: "owner", Value: 9}}) {
		if int(d.Lookup("count").Int32()) != arrayLen(d, "elements") {
			t.Errorf("count %v, %d elements", d.Lookup("count"), arrayLen(d, "elements"))
		}
	}

	if err := s.Replace(ctx, 9, "t6", trade{ID: "t7"}); err == nil {
		t.Error("Replace changing the id succeeded")
	}
	if err := s.Replace(ctx, 9, "t99", trade{ID: "t99"}); !errors.Is(err, ErrNotFound) {
		t.Errorf("Replace of a missing id: %v", err)
	}
	if err := s.Update(ctx, 9, "t99", bson.D{{Key: "qty", Value: 1}}); !errors.Is(err, ErrNotFound) {
		t.Errorf("Update of a missing id: %v", err)
	}
	for _, bad := range []bson.D{nil, {{Key: "id", Value: "x"}}, {{Key: "$inc", Value: 1}}, {{Key: "a.$.b", Value: 1}}} {
		if err := s.Update(ctx, 9, "t1", bad); err == nil {
			t.Errorf("Update with %v succeeded", bad)
		}
	}
}
