package subset

import (
	"context"
	"errors"
	"fmt"
	"github.com/formworkdb/formwork/pattern"
	"math/rand/v2"
	"slices"
	"sync"
	"testing"
	"time"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo"

	"github.com/formworkdb/formwork/internal/testenv"
)

// monitoredFixture is newFixture on a database whose commands are
// counted.
func monitoredFixture(t *testing.T, cfg Config) (*fixture, *testenv.Counter) {
	t.Helper()
	db, count := testenv.Monitored(t)
	f := &fixture{db: db, products: db.Collection("products"), reviews: db.Collection("reviews")}
	w, err := New[Product, Review](f.products, f.reviews, cfg)
	if err != nil {
		t.Fatal(err)
	}
	if err := w.EnsureIndexes(context.Background()); err != nil {
		t.Fatal(err)
	}
	f.w = w
	return f, count
}

// shuffled returns reviews 0..n-1 of each product, in random order.
func shuffled(products []string, n int) []Review {
	var rs []Review
	for _, p := range products {
		for i := range n {
			rs = append(rs, review(p, i))
		}
	}
	rng := rand.New(rand.NewPCG(3, 4))
	rng.Shuffle(len(rs), func(i, j int) { rs[i], rs[j] = rs[j], rs[i] })
	return rs
}

// TestWindowAddMany loads 3 products' reviews in one call: one insert,
// one existence check of the parents, one window write per parent.
func TestWindowAddMany(t *testing.T) {
	ctx := context.Background()
	f, count := monitoredFixture(t, reviewConfig())
	products := []string{"p1", "p2", "p3"}
	for _, p := range products {
		f.product(t, p)
	}
	f.add(t, "p1", 99) // a window already holding a copy; also warms up the transaction probe
	rs := shuffled(products, 12)
	count.Reset()
	got, err := f.w.AddMany(ctx, rs)
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != len(rs) || got[0] != rs[0].ID {
		t.Fatalf("AddMany returned %d ids, first %v", len(got), got[0])
	}
	// In a transaction the commit is one more command.
	want := int64(5)
	if txn, _ := pattern.Transactions(ctx, f.products.Database().Client()); txn {
		want = 6
	}
	if ins, find, upd := count.Commands("insert"), count.Commands("find"), count.Commands("update"); ins != 1 || find != 1 || upd != 3 || count.Commands() != want {
		t.Fatalf("AddMany of %d children: %d inserts, %d finds, %d updates, %d commands; want 1, 1, 3 and %d",
			len(rs), ins, find, upd, count.Commands(), want)
	}
	if got := ids(f.stored(t, "p1")); !slices.Equal(got, []string{"p1-r99", "p1-r11", "p1-r10", "p1-r09", "p1-r08"}) {
		t.Fatalf("p1 window %v", got)
	}
	f.verifyOK(t)

	// A replayed batch (a retried ApplyMany) changes no window.
	before := f.stored(t, "p2")
	if err := f.w.insertBatch(ctx, marshalAll(t, rs)); err != nil {
		t.Fatal(err)
	}
	if !slices.EqualFunc(before, f.stored(t, "p2"), func(a, b bson.Raw) bool { return string(a) == string(b) }) {
		t.Fatal("replayed batch changed the window")
	}

	// An unknown parent: nothing written.
	if _, err := f.w.AddMany(ctx, []Review{review("p1", 50), review("nope", 1)}); !errors.Is(err, ErrParentNotFound) {
		t.Fatalf("AddMany with an unknown parent: %v", err)
	}
	if f.count(t, "p1") != 13 {
		t.Fatal("AddMany with an unknown parent inserted children")
	}
	// A duplicate part way: the children before it keep their windows.
	_, err = f.w.AddMany(ctx, []Review{review("p3", 60), review("p3", 61), review("p3", 0), review("p3", 62)})
	if !mongo.IsDuplicateKeyError(err) {
		t.Fatalf("AddMany with a duplicate: %v", err)
	}
	if want == 6 {
		// In a transaction the duplicate takes the whole load back.
		if got := ids(f.stored(t, "p3")); slices.Contains(got, "p3-r60") || slices.Contains(got, "p3-r61") {
			t.Fatalf("p3 window after a refused transaction: %v", got)
		}
	} else if got := ids(f.stored(t, "p3")); !slices.Equal(got[:2], []string{"p3-r61", "p3-r60"}) {
		t.Fatalf("p3 window after a partial load: %v", got)
	}
	f.verifyOK(t)
	if got, err := f.w.AddMany(ctx, nil); err != nil || got != nil {
		t.Fatalf("AddMany(nil) = %v, %v", got, err)
	}
}

func marshalAll(t *testing.T, rs []Review) []bson.Raw {
	out := make([]bson.Raw, len(rs))
	for i, r := range rs {
		b, err := bson.Marshal(r)
		if err != nil {
			t.Fatal(err)
		}
		out[i] = b
	}
	return out
}

// TestWindowAddManyLargeGroup pushes more copies for one parent than
// one $push carries.
func TestWindowAddManyLargeGroup(t *testing.T) {
	ctx := context.Background()
	f := newFixture(t, reviewConfig())
	f.product(t, "p1")
	rs := make([]Review, 2500)
	for i := range rs {
		// Times repeat, and the newest are spread over the three pushes.
		rs[i] = Review{ID: fmt.Sprintf("r%04d", i), ProductID: "p1", At: t0.Add(time.Duration(i*7%1201) * time.Minute)}
	}
	if _, err := f.w.AddMany(ctx, rs); err != nil {
		t.Fatal(err)
	}
	if got := ids(f.stored(t, "p1")); !slices.Equal(got, []string{"r1544", "r0343", "r1887", "r0686", "r2230"}) {
		t.Fatalf("window %v", got)
	}
	f.verifyOK(t)
}

// TestWindowBackfill builds windows for children loaded behind the
// window's back: one pass over the parents, one index query and one
// write per parent.
func TestWindowBackfill(t *testing.T) {
	ctx := context.Background()
	f, count := monitoredFixture(t, reviewConfig())
	products := []string{"p1", "p2", "p3", "empty"}
	for _, p := range products {
		f.product(t, p)
	}
	var docs []any
	for _, r := range shuffled(products[:3], 9) {
		docs = append(docs, r)
	}
	if _, err := f.reviews.InsertMany(ctx, docs); err != nil {
		t.Fatal(err)
	}
	count.Reset()
	n, err := f.w.Backfill(ctx)
	if err != nil || n != 3 {
		t.Fatalf("Backfill = %d, %v; want 3 windows written", n, err)
	}
	if find, upd := count.Commands("find"), count.Commands("update"); find != 5 || upd != 3 {
		t.Fatalf("Backfill: %d finds, %d updates; want 5 (the parents, then one per parent) and 3", find, upd)
	}
	f.verifyOK(t)
	if n, err := f.w.Backfill(ctx); err != nil || n != 0 {
		t.Fatalf("second Backfill = %d, %v", n, err)
	}
}

// TestWindowBulkConcurrent runs AddMany batches, single Adds, Deletes and
// Backfills on the same parents at once; every window ends exact.
func TestWindowBulkConcurrent(t *testing.T) {
	ctx := context.Background()
	f := newFixture(t, reviewConfig())
	const parents, workers, rounds = 3, 6, 8
	for p := range parents {
		f.product(t, fmt.Sprint("p", p))
	}
	var wg sync.WaitGroup
	errs := make(chan error, workers)
	for g := range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for r := range rounds {
				var batch []Review
				for i := range 6 {
					batch = append(batch, Review{ID: fmt.Sprintf("g%d-%d-%d", g, r, i), ProductID: fmt.Sprint("p", i%parents),
						At: t0.Add(time.Duration((g*7+r*5+i*3)%50) * time.Minute)})
				}
				var err error
				switch g % 3 {
				case 0:
					_, err = f.w.AddMany(ctx, batch)
				case 1:
					for _, c := range batch {
						if _, err = f.w.Add(ctx, c); err != nil {
							break
						}
					}
				case 2:
					if _, err = f.w.AddMany(ctx, batch); err == nil {
						_, err = f.w.Delete(ctx, batch[r%len(batch)].ID)
					}
					if err == nil {
						_, err = f.w.Backfill(ctx)
					}
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
	f.verifyOK(t)
}
