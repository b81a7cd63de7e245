package outlier

import (
	"context"
	"fmt"
	"math/rand/v2"
	"slices"
	"sync"
	"testing"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo"

	"github.com/formworkdb/formwork/pattern"
)

// purchase is the source document of the feed tests.
type purchase struct {
	ID     string `bson:"_id"`
	BookID int    `bson:"bookId"`
	User   string `bson:"user"`
	Qty    int    `bson:"qty"`
}

// buyerOf is the element a purchase makes.
func buyerOf(src bson.Raw) (buyer, error) {
	var p purchase
	if err := bson.Unmarshal(src, &p); err != nil {
		return buyer{}, err
	}
	return buyer{ID: p.ID, User: p.User, Qty: p.Qty}, nil
}

// newFeed returns books fed from purchases through a Source.
func newFeed(t testing.TB, threshold, size int) (*Store[bson.D, buyer], *Feed[bson.D, buyer], *pattern.Source[purchase], *mongo.Collection) {
	t.Helper()
	s := newBuyers(t, threshold, size)
	purchases := s.parents.Database().Collection("purchases")
	f, err := s.Feed(purchases, "bookId", buyerOf)
	if err != nil {
		t.Fatal(err)
	}
	src := pattern.NewSource[purchase](purchases, f)
	if err := src.EnsureIndexes(context.Background()); err != nil {
		t.Fatal(err)
	}
	return s, f, src, purchases
}

// buyersOfBook returns the ids of the book's buyers, embedded then
// overflow.
func buyersOfBook(t testing.TB, s *Store[bson.D, buyer], book int) []string {
	t.Helper()
	p, err := s.GetAll(context.Background(), book)
	if err != nil {
		t.Fatal(err)
	}
	if p.Count != len(p.Elements) {
		t.Errorf("book %d: count %d, %d elements", book, p.Count, len(p.Elements))
	}
	return ids(p.Elements)
}

// checkClean fails unless Check finds nothing.
func checkClean(t testing.TB, f pattern.Dependent) {
	t.Helper()
	r, err := f.Check(context.Background(), false)
	if err != nil || !r.OK() {
		t.Errorf("Check: %+v, %v", r, err)
	}
}

// TestFeed drives the Store from purchases through pattern.Source: each
// insert appends, delete removes (embedded or overflow), a move to
// another book removes and appends, an edit replaces in place.
func TestFeed(t *testing.T) {
	ctx := context.Background()
	s, f, src, _ := newFeed(t, 2, 2)
	for _, b := range []int{1, 2} {
		if err := mk(ctx, s, b, nil); err != nil {
			t.Fatal(err)
		}
	}
	for i := range 5 {
		if _, err := src.Insert(ctx, purchase{ID: fmt.Sprintf("p%d", i), BookID: 1, User: "u", Qty: 1}); err != nil {
			t.Fatal(err)
		}
	}
	if got := buyersOfBook(t, s, 1); !slices.Equal(got, []string{"p0", "p1", "p2", "p3", "p4"}) {
		t.Errorf("after inserts: %v", got)
	}
	if _, err := src.Delete(ctx, "p1"); err != nil { // embedded
		t.Fatal(err)
	}
	if _, err := src.Delete(ctx, "p3"); err != nil { // overflow
		t.Fatal(err)
	}
	if _, err := src.Update(ctx, "p4", bson.D{{Key: "$set", Value: bson.D{{Key: "bookId", Value: 2}}}}); err != nil {
		t.Fatal(err)
	}
	if _, err := src.Update(ctx, "p0", bson.D{{Key: "$inc", Value: bson.D{{Key: "qty", Value: 4}}}}); err != nil {
		t.Fatal(err)
	}
	if got := buyersOfBook(t, s, 1); !slices.Equal(got, []string{"p0", "p2"}) {
		t.Errorf("book 1: %v", got)
	}
	if got := buyersOfBook(t, s, 2); !slices.Equal(got, []string{"p4"}) {
		t.Errorf("book 2: %v", got)
	}
	p, _ := s.Get(ctx, 1)
	if p.Elements[0].Qty != 5 {
		t.Errorf("edited purchase: %+v", p.Elements[0])
	}
	checkClean(t, f)
	// A purchase for a book that does not exist fails the Dependent and
	// is reported by Check.
	if _, err := src.Insert(ctx, purchase{ID: "lost", BookID: 404}); err == nil {
		t.Error("insert for a missing book applied")
	}
	// In a transaction the failed purchase is taken back: no orphan.
	want := 1
	if txn, _ := pattern.Transactions(ctx, s.parents.Database().Client()); txn {
		want = 0
	}
	r, err := f.Check(ctx, false)
	if err != nil || r.Problems != want {
		t.Errorf("Check with an orphan purchase: %+v, %v; want %d problems", r, err, want)
	}
}

// TestFeedCheckRepair breaks the copy every way and checks that Check
// reports each difference and repair fixes them.
func TestFeedCheckRepair(t *testing.T) {
	ctx := context.Background()
	s, f, src, purchases := newFeed(t, 2, 2)
	if err := mk(ctx, s, 1, nil); err != nil {
		t.Fatal(err)
	}
	for i := range 5 {
		if _, err := src.Insert(ctx, purchase{ID: fmt.Sprintf("p%d", i), BookID: 1, User: "u"}); err != nil {
			t.Fatal(err)
		}
	}
	// Source writes not applied: an insert, a delete, an edit.
	if _, err := purchases.InsertOne(ctx, purchase{ID: "new", BookID: 1}); err != nil {
		t.Fatal(err)
	}
	if _, err := purchases.DeleteOne(ctx, bson.D{{Key: "_id", Value: "p3"}}); err != nil {
		t.Fatal(err)
	}
	if _, err := purchases.UpdateOne(ctx, bson.D{{Key: "_id", Value: "p0"}}, bson.D{{Key: "$set", Value: bson.D{{Key: "qty", Value: 7}}}}); err != nil {
		t.Fatal(err)
	}
	// A copy applied twice.
	if _, err := s.Append(ctx, 1, buyer{ID: "p2", User: "u"}); err != nil {
		t.Fatal(err)
	}
	r, err := f.Check(ctx, false)
	if err != nil {
		t.Fatal(err)
	}
	if r.Problems != 4 || r.Repaired != 0 || r.Checked != 1 {
		t.Errorf("Check: %+v", r)
	}
	r, err = f.Check(ctx, true)
	if err != nil || r.Repaired != r.Problems {
		t.Errorf("Check with repair: %+v, %v", r, err)
	}
	checkClean(t, f)
	got := buyersOfBook(t, s, 1)
	slices.Sort(got)
	if !slices.Equal(got, []string{"new", "p0", "p1", "p2", "p4"}) {
		t.Errorf("after repair: %v", got)
	}
}

// TestFeedConcurrent runs inserts, deletes and moves between two books
// from many goroutines through one Source and checks the copy matches the
// source exactly.
func TestFeedConcurrent(t *testing.T) {
	ctx := context.Background()
	const (
		writers = 6
		each    = 25
	)
	s, f, src, _ := newFeed(t, 10, 4)
	for _, b := range []int{1, 2} {
		if err := mk(ctx, s, b, nil); err != nil {
			t.Fatal(err)
		}
	}
	var wg sync.WaitGroup
	errs := make(chan error, writers)
	for w := range writers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			rnd := rand.New(rand.NewPCG(uint64(w), 7))
			for i := range each {
				id := fmt.Sprintf("w%d-%d", w, i)
				if _, err := src.Insert(ctx, purchase{ID: id, BookID: 1 + rnd.IntN(2), User: "u"}); err != nil {
					errs <- err
					return
				}
				var err error
				switch i % 3 {
				case 1: // move to the other book
					_, err = src.Update(ctx, id, bson.A{bson.D{{Key: "$set", Value: bson.D{{Key: "bookId", Value: bson.D{{Key: "$subtract", Value: bson.A{3, "$bookId"}}}}}}}})
				case 2:
					_, err = src.Delete(ctx, fmt.Sprintf("w%d-%d", w, i-2))
				}
				if err != nil {
					errs <- err
					return
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	n := len(buyersOfBook(t, s, 1)) + len(buyersOfBook(t, s, 2))
	if want := writers * (each - each/3); n != want {
		t.Errorf("%d buyers stored, want %d", n, want)
	}
	checkClean(t, f)
}
