package outlier

import (
	"context"
	"fmt"
	"slices"
	"testing"
	"time"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo"

	"github.com/formworkdb/formwork/internal/testenv"
	"github.com/formworkdb/formwork/pattern"
	"github.com/formworkdb/formwork/pattern/bucket"
)

// feedOn returns books fed from purchases in db through a Source, as
// newFeed does, on a database of the caller's (a monitored one).
func feedOn(t testing.TB, db *mongo.Database, threshold, size int) (*Store[bson.D, buyer], *Feed[bson.D, buyer], *pattern.Source[purchase]) {
	t.Helper()
	s, err := New[bson.D, buyer](db.Collection("books"), db.Collection("bookBuyersOverflow"), Config{
		Threshold: threshold, ElementID: "id", Overflow: bucket.Config{Size: size, Clock: tickClock()},
	})
	if err != nil {
		t.Fatal(err)
	}
	f, err := s.Feed(db.Collection("purchases"), "bookId", buyerOf)
	if err != nil {
		t.Fatal(err)
	}
	src := pattern.NewSource[purchase](db.Collection("purchases"), f)
	if err := src.EnsureIndexes(context.Background()); err != nil {
		t.Fatal(err)
	}
	return s, f, src
}

// insertOf returns the insert Change of p.
func insertOf(t testing.TB, p purchase) pattern.Change {
	t.Helper()
	doc, err := bson.Marshal(p)
	if err != nil {
		t.Fatal(err)
	}
	return pattern.Change{Op: pattern.Insert, After: doc}
}

// TestFeedApplyMany applies a batch mixing inserts for two books, an
// insert naming no book, a delete and an update in the middle, and checks
// that the result is what the changes one by one give, in order.
func TestFeedApplyMany(t *testing.T) {
	ctx := context.Background()
	s, f, _, purchases := newFeed(t, 3, 2)
	for _, b := range []int{1, 2} {
		if err := mk(ctx, s, b, nil); err != nil {
			t.Fatal(err)
		}
	}
	var cs []pattern.Change
	add := func(p purchase) {
		cs = append(cs, insertOf(t, p))
		if _, err := purchases.InsertOne(ctx, p); err != nil {
			t.Fatal(err)
		}
	}
	for i := range 5 {
		add(purchase{ID: fmt.Sprintf("a%d", i), BookID: 1 + i%2, User: "u", Qty: 1})
	}
	if _, err := purchases.InsertOne(ctx, bson.D{{Key: "_id", Value: "nobook"}}); err != nil {
		t.Fatal(err)
	}
	nobook, _ := bson.Marshal(bson.D{{Key: "_id", Value: "nobook"}})
	cs = append(cs, pattern.Change{Op: pattern.Insert, After: nobook})
	// a0 (book 1, embedded) is deleted; a1 moves from book 2 to book 1.
	gone := insertOf(t, purchase{ID: "a0", BookID: 1, User: "u", Qty: 1})
	if _, err := purchases.DeleteOne(ctx, bson.D{{Key: "_id", Value: "a0"}}); err != nil {
		t.Fatal(err)
	}
	cs = append(cs, pattern.Change{Op: pattern.Delete, Before: gone.After})
	moved := insertOf(t, purchase{ID: "a1", BookID: 1, User: "u", Qty: 1})
	if _, err := purchases.UpdateOne(ctx, bson.D{{Key: "_id", Value: "a1"}}, bson.D{{Key: "$set", Value: bson.D{{Key: "bookId", Value: 1}}}}); err != nil {
		t.Fatal(err)
	}
	cs = append(cs, pattern.Change{Op: pattern.Update, Before: insertOf(t, purchase{ID: "a1", BookID: 2, User: "u", Qty: 1}).After, After: moved.After})
	for i := range 6 {
		add(purchase{ID: fmt.Sprintf("b%d", i), BookID: 1, User: "u", Qty: 1})
	}
	if err := f.ApplyMany(ctx, cs); err != nil {
		t.Fatal(err)
	}
	if got := buyersOfBook(t, s, 1); !slices.Equal(got, []string{"a2", "a4", "a1", "b0", "b1", "b2", "b3", "b4", "b5"}) {
		t.Errorf("book 1: %v", got)
	}
	if got := buyersOfBook(t, s, 2); !slices.Equal(got, []string{"a3"}) {
		t.Errorf("book 2: %v", got)
	}
	checkClean(t, f)
	if err := f.ApplyMany(ctx, nil); err != nil {
		t.Errorf("empty batch: %v", err)
	}
}

// bulkBuyers is the size of the bookshop's bulk load: one bestseller's
// purchases.
const bulkBuyers = 10000

// bulkPurchases returns n purchases of book.
func bulkPurchases(book, n int) []purchase {
	ps := make([]purchase, n)
	for i := range ps {
		ps[i] = purchase{ID: fmt.Sprintf("b%d-%05d", book, i), BookID: book, User: fmt.Sprintf("user%d", i), Qty: 1}
	}
	return ps
}

// TestSourceInsertManyBestseller is the bookshop case: 10,000 purchases of
// one book through Source.InsertMany reach the Feed through ApplyMany, in
// a few round trips; the counter is 10,000, GetAll returns every buyer in
// order, and Check finds nothing.
func TestSourceInsertManyBestseller(t *testing.T) {
	ctx := context.Background()
	db, counter := testenv.Monitored(t)
	s, f, src := feedOn(t, db, 50, 1000)
	if err := mk(ctx, s, 1, nil); err != nil {
		t.Fatal(err)
	}
	ps := bulkPurchases(1, bulkBuyers)
	counter.Reset()
	start := time.Now()
	if _, err := src.InsertMany(ctx, ps); err != nil {
		t.Fatal(err)
	}
	took := time.Since(start)
	trips := counter.Commands()
	t.Logf("InsertMany of %d purchases: %d round trips, %v", bulkBuyers, trips, took)
	if trips > 20 {
		t.Errorf("%d round trips (%v), want a few", trips, counter)
	}
	p, err := s.GetAll(ctx, 1)
	if err != nil {
		t.Fatal(err)
	}
	want := make([]string, len(ps))
	for i, pu := range ps {
		want[i] = pu.ID
	}
	if p.Count != bulkBuyers || !p.HasOverflow || !slices.Equal(ids(p.Elements), want) {
		t.Errorf("GetAll: count %d, flag %v, %d elements", p.Count, p.HasOverflow, len(p.Elements))
	}
	emb, err := s.Get(ctx, 1)
	if err != nil || len(emb.Elements) != 50 {
		t.Errorf("Get: %d embedded, %v", len(emb.Elements), err)
	}
	checkClean(t, f)
}

// BenchmarkBulkApply applies the inserts of 10,000 purchases of one book
// to the Feed one by one (Apply) and in one batch (ApplyMany), and
// reports the round trips per load. Run it with -benchtime=1x: one load
// one by one takes tens of seconds on a loaded machine.
func BenchmarkBulkApply(b *testing.B) {
	ctx := context.Background()
	for _, mode := range []string{"one", "many"} {
		b.Run("apply="+mode, func(b *testing.B) {
			db, counter := testenv.Monitored(b)
			s, f, _ := feedOn(b, db, 50, 1000)
			var trips int64
			loads := 0
			for b.Loop() {
				b.StopTimer()
				book := loads + 1
				if err := mk(ctx, s, book, nil); err != nil {
					b.Fatal(err)
				}
				cs := make([]pattern.Change, bulkBuyers)
				for i, p := range bulkPurchases(book, bulkBuyers) {
					cs[i] = insertOf(b, p)
				}
				counter.Reset()
				b.StartTimer()
				if mode == "many" {
					if err := f.ApplyMany(ctx, cs); err != nil {
						b.Fatal(err)
					}
				} else {
					for _, c := range cs {
						if err := f.Apply(ctx, c); err != nil {
							b.Fatal(err)
						}
					}
				}
				b.StopTimer()
				trips += counter.Commands()
				loads++
				b.StartTimer()
			}
			b.ReportMetric(float64(trips)/float64(loads), "round-trips/load")
		})
	}
}
