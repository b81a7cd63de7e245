package subset

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"
	"testing"
	"time"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo"
	"go.mongodb.org/mongo-driver/v2/mongo/options"

	"github.com/formworkdb/formwork/pattern"
)

// tally is a second, small Dependent for the composition tests: each
// product's review count and star sum, kept with $inc from the changes
// alone (so applied exactly once per change).
type tally struct {
	products, reviews *mongo.Collection
}

func (t *tally) Name() string                        { return "tally products.stats" }
func (t *tally) EnsureIndexes(context.Context) error { return nil }

func (t *tally) Apply(ctx context.Context, c pattern.Change) error {
	inc := func(doc bson.Raw, sign int32) error {
		if doc == nil {
			return nil
		}
		_, err := t.products.UpdateOne(ctx, bson.D{{Key: "_id", Value: doc.Lookup("productId")}},
			bson.D{{Key: "$inc", Value: bson.D{{Key: "stats.n", Value: sign}, {Key: "stats.stars", Value: sign * doc.Lookup("stars").Int32()}}}})
		return err
	}
	if err := inc(c.Before, -1); err != nil {
		return err
	}
	return inc(c.After, 1)
}

// Check compares every product's stats with the reviews; it does not
// repair.
func (t *tally) Check(ctx context.Context, repair bool) (pattern.Result, error) {
	res := pattern.Result{Name: t.Name()}
	cur, err := t.products.Find(ctx, bson.D{})
	if err != nil {
		return res, err
	}
	defer cur.Close(ctx)
	for cur.Next(ctx) {
		var p struct {
			ID    string `bson:"_id"`
			Stats struct {
				N     int32 `bson:"n"`
				Stars int32 `bson:"stars"`
			} `bson:"stats"`
		}
		if err := cur.Decode(&p); err != nil {
			return res, err
		}
		res.Checked++
		rc, err := t.reviews.Find(ctx, bson.D{{Key: "productId", Value: p.ID}})
		if err != nil {
			return res, err
		}
		var n, stars int32
		for rc.Next(ctx) {
			n++
			stars += rc.Current.Lookup("stars").Int32()
		}
		rc.Close(ctx)
		if n != p.Stats.N || stars != p.Stats.Stars {
			res.Problems++
			res.Details = append(res.Details, fmt.Sprintf("%s: stats %d/%d, reviews %d/%d", p.ID, p.Stats.N, p.Stats.Stars, n, stars))
		}
	}
	return res, cur.Err()
}

// checkAll fails unless every Dependent of src checks clean.
func checkAll(t *testing.T, src *pattern.Source[Review]) {
	t.Helper()
	results, err := src.Check(context.Background(), false)
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range results {
		if !r.OK() {
			t.Fatalf("%s: %+v", r.Name, r)
		}
	}
}

// TestSourceMaintainsWindowAndTally declares the reviews collection once,
// with the window and the tally as its Dependents, and shows that each
// logical write (insert, bulk insert, edit, retime, move, delete, and a
// write the application made itself) is one call that keeps both.
func TestSourceMaintainsWindowAndTally(t *testing.T) {
	ctx := context.Background()
	f := newFixture(t, reviewConfig())
	f.product(t, "p1")
	f.product(t, "p2")
	stats := &tally{products: f.products, reviews: f.reviews}
	src := pattern.NewSource[Review](f.reviews, f.w, stats)
	if err := src.EnsureIndexes(ctx); err != nil {
		t.Fatal(err)
	}
	for n := range 4 {
		if _, err := src.Insert(ctx, review("p1", n)); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := src.InsertMany(ctx, []Review{review("p1", 4), review("p1", 5), review("p2", 0), review("p1", 6)}); err != nil {
		t.Fatal(err)
	}
	checkAll(t, src)

	// Edit stars of a review in the window: copy and sum both change.
	if _, err := src.Update(ctx, "p1-r05", bson.D{{Key: "$set", Value: bson.D{{Key: "stars", Value: int32(5)}}}}); err != nil {
		t.Fatal(err)
	}
	p, err := f.w.Parent(ctx, "p1")
	if err != nil || p.RecentReviews[1].ID != "p1-r05" || p.RecentReviews[1].Stars != 5 {
		t.Fatalf("p1 after the edit: %+v, %v", p, err)
	}
	checkAll(t, src)
	// Retime, move, delete.
	if _, err := src.Update(ctx, "p1-r00", bson.D{{Key: "$set", Value: bson.D{{Key: "at", Value: t0.Add(90 * time.Hour)}}}}); err != nil {
		t.Fatal(err)
	}
	if _, err := src.Update(ctx, "p1-r06", bson.D{{Key: "$set", Value: bson.D{{Key: "productId", Value: "p2"}}}}); err != nil {
		t.Fatal(err)
	}
	if _, err := src.Delete(ctx, "p1-r04"); err != nil {
		t.Fatal(err)
	}
	if got := ids(f.stored(t, "p1")); !slices.Equal(got, []string{"p1-r00", "p1-r05", "p1-r03", "p1-r02", "p1-r01"}) {
		t.Fatalf("p1 window %v", got)
	}
	if got := ids(f.stored(t, "p2")); !slices.Equal(got, []string{"p1-r06", "p2-r00"}) {
		t.Fatalf("p2 window %v", got)
	}
	checkAll(t, src)

	// A write the application made itself, handed over afterwards.
	before, _ := f.reviews.FindOne(ctx, bson.D{{Key: "_id", Value: "p1-r03"}}).Raw()
	after, err := f.reviews.FindOneAndUpdate(ctx, bson.D{{Key: "_id", Value: "p1-r03"}},
		bson.D{{Key: "$set", Value: bson.D{{Key: "text", Value: "changed elsewhere"}, {Key: "stars", Value: int32(1)}}}},
		optionsAfter()).Raw()
	if err != nil {
		t.Fatal(err)
	}
	if err := src.Applied(ctx, pattern.Change{Op: pattern.Update, Before: before, After: after}); err != nil {
		t.Fatal(err)
	}
	if r := f.stored(t, "p1")[2]; r.Lookup("text").StringValue() != "changed elsewhere" {
		t.Fatalf("copy after Applied: %v", r)
	}
	checkAll(t, src)

	// A review of a product that does not exist: the window refuses it;
	// without transactions the review stays, and Check reports it.
	if _, err := src.Insert(ctx, review("nope", 1)); !errors.Is(err, ErrParentNotFound) {
		t.Fatalf("Insert for an unknown product: %v", err)
	}
	if tx, _ := pattern.Transactions(ctx, f.db.Client()); !tx {
		rep, err := f.w.Verify(ctx)
		if err != nil || !slices.Equal(kinds(rep), []string{"orphan:nope"}) {
			t.Fatalf("Verify = %+v, %v", rep, err)
		}
	}
}

// TestSourceConcurrentUpdates races Source updates of the same reviews:
// the tally (applied once per change) and the window (compare-and-set)
// both end exact.
func TestSourceConcurrentUpdates(t *testing.T) {
	ctx := context.Background()
	f := newFixture(t, reviewConfig())
	f.product(t, "p1")
	f.product(t, "p2")
	src := pattern.NewSource[Review](f.reviews, f.w, &tally{products: f.products, reviews: f.reviews})
	for n := range 8 {
		if _, err := src.Insert(ctx, review("p1", n)); err != nil {
			t.Fatal(err)
		}
	}
	var wg sync.WaitGroup
	for g := range 6 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range 10 {
				id := fmt.Sprintf("p1-r%02d", (g+i)%8)
				var u bson.D
				switch i % 3 {
				case 0:
					u = bson.D{{Key: "$inc", Value: bson.D{{Key: "stars", Value: 1}}}}
				case 1:
					u = bson.D{{Key: "$set", Value: bson.D{{Key: "at", Value: t0.Add(time.Duration(g*10+i) * time.Minute)}}}}
				case 2:
					u = bson.D{{Key: "$set", Value: bson.D{{Key: "productId", Value: fmt.Sprint("p", 1+g%2)}}}}
				}
				if _, err := src.Update(ctx, id, u); err != nil {
					t.Error(err)
					return
				}
			}
		}()
	}
	wg.Wait()
	checkAll(t, src)
}

// optionsAfter asks findOneAndUpdate for the document after the update.
func optionsAfter() *options.FindOneAndUpdateOptionsBuilder {
	return options.FindOneAndUpdate().SetReturnDocument(options.After)
}

// TestWindowApplyBadChange: changes without their images, or of an
// unknown kind, are errors, not panics.
func TestWindowApplyBadChange(t *testing.T) {
	ctx := context.Background()
	f := newFixture(t, reviewConfig())
	good, _ := bson.Marshal(review("p1", 1))
	for _, c := range []pattern.Change{
		{Op: pattern.Insert},
		{Op: pattern.Update, After: good},
		{Op: pattern.Update, Before: good},
		{Op: pattern.Delete},
		{Op: pattern.Op(9), After: good},
		{},
	} {
		if err := f.w.Apply(ctx, c); err == nil {
			t.Errorf("Apply(%+v) succeeded", c)
		}
		if err := f.w.ApplyMany(ctx, []pattern.Change{c}); err == nil {
			t.Errorf("ApplyMany(%+v) succeeded", c)
		}
	}
}
