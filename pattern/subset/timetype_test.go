package subset

import (
	"context"
	"errors"
	"slices"
	"testing"
	"time"

	"go.mongodb.org/mongo-driver/v2/bson"

	"github.com/formworkdb/formwork/pattern"
)

// TestWindowTimeTypeRefused is the regression test of a child whose time
// is a string where the window orders by dates: it used to be inserted
// without error and never shown (a string sorts below every date), with
// Verify reporting all consistent. Now every write path refuses it, and
// Verify reports one written behind the window's back.
func TestWindowTimeTypeRefused(t *testing.T) {
	ctx := context.Background()
	f := newFixture(t, reviewConfig())
	f.product(t, "p1")
	for n := range 3 {
		f.add(t, "p1", n)
	}
	w, err := New[bson.D, bson.D](f.products, f.reviews, reviewConfig())
	if err != nil {
		t.Fatal(err)
	}
	stringDate := bson.D{{Key: "_id", Value: "s"}, {Key: "productId", Value: "p1"}, {Key: "at", Value: "2026-01-01T00:00:00Z"}}
	if _, err := w.Add(ctx, stringDate); !errors.Is(err, ErrTimeType) {
		t.Fatalf("Add of a string date: %v, want ErrTimeType", err)
	}
	if _, err := w.AddMany(ctx, []bson.D{{{Key: "_id", Value: "ok"}, {Key: "productId", Value: "p1"}, {Key: "at", Value: t0}}, stringDate}); !errors.Is(err, ErrTimeType) {
		t.Fatalf("AddMany with a string date: %v, want ErrTimeType", err)
	}
	if n, _ := f.reviews.CountDocuments(ctx, bson.D{}); n != 3 {
		t.Fatalf("%d children after refused adds, want 3", n)
	}
	// An edit that would make the time a string is undone.
	if _, err := f.w.Edit(ctx, "p1-r01", bson.D{{Key: "$set", Value: bson.D{{Key: "at", Value: "yesterday"}}}}); !errors.Is(err, ErrTimeType) {
		t.Fatalf("Edit to a string date: %v, want ErrTimeType", err)
	}
	if _, err := f.w.Edit(ctx, "p1-r01", bson.D{{Key: "$unset", Value: bson.D{{Key: "at", Value: ""}}}}); !errors.Is(err, ErrTimeType) {
		t.Fatalf("Edit removing the time: %v, want ErrTimeType", err)
	}
	var back Review
	if err := f.reviews.FindOne(ctx, bson.D{{Key: "_id", Value: "p1-r01"}}).Decode(&back); err != nil || back != review("p1", 1) {
		t.Fatalf("child after the refused edits: %+v, %v", back, err)
	}
	f.verifyOK(t)

	// Written past the window (a Source's Apply refuses it after the
	// write; a plain insert never tells it), Verify reports the child.
	src := pattern.NewSource[bson.D](f.reviews, w)
	if _, err := src.Insert(ctx, stringDate); !errors.Is(err, ErrTimeType) {
		t.Fatalf("Source.Insert of a string date: %v, want ErrTimeType", err)
	}
	if _, err := f.reviews.InsertOne(ctx, bson.D{{Key: "_id", Value: "t"}, {Key: "productId", Value: "p1"}}); err != nil {
		t.Fatal(err)
	}
	// In a transaction the Source's refused insert is rolled back with
	// it; only the plain insert is left to report.
	want := []string{"s", "t"}
	if txn, _ := pattern.Transactions(ctx, f.reviews.Database().Client()); txn {
		want = []string{"t"}
	}
	rep, err := f.w.Verify(ctx)
	if err != nil || rep.Found != int64(len(want)) || len(rep.Problems) != len(want) {
		t.Fatalf("Verify = %+v, %v; want the children %v breaking the time rule", rep, err, want)
	}
	for i, p := range rep.Problems {
		if kinds(rep)[i] != "time-type:p1" || p.Child.StringValue() != want[i] {
			t.Fatalf("Verify = %+v; want the children %v breaking the time rule", rep, want)
		}
	}
	if rep, err := f.w.Repair(ctx); err != nil || rep.Repaired != 0 || rep.OK() {
		t.Fatalf("Repair = %+v, %v; want them reported, not repaired", rep, err)
	}
}

// TestWindowTimeTypeConfigured orders by ISO strings, and by numbers of
// any numeric type.
func TestWindowTimeTypeConfigured(t *testing.T) {
	ctx := context.Background()
	cfg := reviewConfig()
	cfg.TimeType = bson.TypeString
	f := newFixture(t, cfg)
	f.product(t, "p1")
	w, err := New[bson.D, bson.D](f.products, f.reviews, cfg)
	if err != nil {
		t.Fatal(err)
	}
	for i, at := range []string{"2025-01-02", "2025-01-03", "2025-01-01"} {
		if _, err := w.Add(ctx, bson.D{{Key: "_id", Value: i}, {Key: "productId", Value: "p1"}, {Key: "at", Value: at}}); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := w.Add(ctx, bson.D{{Key: "productId", Value: "p1"}, {Key: "at", Value: t0}}); !errors.Is(err, ErrTimeType) {
		t.Fatalf("a date among strings: %v, want ErrTimeType", err)
	}

	cfg.TimeType = bson.TypeInt64
	cfg.Array = "bySeq"
	w, err = New[bson.D, bson.D](f.products, f.reviews, cfg)
	if err != nil {
		t.Fatal(err)
	}
	f.reviews.DeleteMany(ctx, bson.D{})
	four, _ := bson.ParseDecimal128("4")
	for i, seq := range []any{int32(2), int64(3), 1.5, four} {
		if _, err := w.Add(ctx, bson.D{{Key: "_id", Value: i}, {Key: "productId", Value: "p1"}, {Key: "at", Value: seq}}); err != nil {
			t.Fatalf("number %T: %v", seq, err)
		}
	}
	if _, err := w.Add(ctx, bson.D{{Key: "productId", Value: "p1"}, {Key: "at", Value: "5"}}); !errors.Is(err, ErrTimeType) {
		t.Fatalf("a string among numbers: %v, want ErrTimeType", err)
	}
	recent, err := w.Recent(ctx, "p1")
	var got []int32
	for _, r := range recent {
		got = append(got, r[0].Value.(int32))
	}
	if err != nil || !slices.Equal(got, []int32{3, 1, 0, 2}) {
		t.Fatalf("window by number: %v, %v", got, err)
	}
	if rep, err := w.Verify(ctx); err != nil || rep.Found != 0 {
		t.Fatalf("Verify = %+v, %v", rep, err)
	}
}

// TestWindowApplyManyRefusesOne: a bulk load through a Source whose batch
// holds one child breaking the time rule still writes the others'
// windows, and reports the one.
func TestWindowApplyManyRefusesOne(t *testing.T) {
	ctx := context.Background()
	f := newFixture(t, reviewConfig())
	f.product(t, "p1")
	w, err := New[bson.D, bson.D](f.products, f.reviews, reviewConfig())
	if err != nil {
		t.Fatal(err)
	}
	src := pattern.NewSource[bson.D](f.reviews, w)
	_, err = src.InsertMany(ctx, []bson.D{
		{{Key: "_id", Value: "a"}, {Key: "productId", Value: "p1"}, {Key: "at", Value: t0}},
		{{Key: "_id", Value: "s"}, {Key: "productId", Value: "p1"}, {Key: "at", Value: "today"}},
		{{Key: "_id", Value: "b"}, {Key: "productId", Value: "p1"}, {Key: "at", Value: t0.Add(time.Hour)}},
	})
	if !errors.Is(err, ErrTimeType) {
		t.Fatalf("InsertMany = %v, want ErrTimeType", err)
	}
	if txn, _ := pattern.Transactions(ctx, f.reviews.Database().Client()); txn {
		// In a transaction the whole batch is refused: nothing is written.
		if got := ids(f.stored(t, "p1")); len(got) != 0 {
			t.Fatalf("window %v, want none after the refused transaction", got)
		}
		if n, _ := f.reviews.CountDocuments(ctx, bson.D{}); n != 0 {
			t.Fatalf("%d children after the refused transaction, want 0", n)
		}
		return
	}
	if got := ids(f.stored(t, "p1")); !slices.Equal(got, []string{"b", "a"}) {
		t.Fatalf("window %v, want the two good children", got)
	}
	rep, err := w.Verify(ctx)
	if err != nil || !slices.Equal(kinds(rep), []string{"time-type:p1"}) {
		t.Fatalf("Verify = %+v, %v", rep, err)
	}
}
