package computed

import (
	"context"
	"testing"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo"

	"github.com/formworkdb/formwork/internal/testenv"
)

// product is a typed parent.
type product struct {
	ID     string `bson:"_id"`
	Name   string `bson:"name"`
	Rating Totals `bson:"rating,omitempty"`
}

// review is a typed child.
type review struct {
	ID      any    `bson:"_id,omitempty"`
	Product string `bson:"productId"`
	Author  string `bson:"author,omitempty"`
	Stars   int    `bson:"stars"`
}

func allConfig() Config {
	return Config{Parent: "productId", Value: "stars", Target: "rating", Stats: Sum | Count | Min | Max}
}

type fixture struct {
	db       *mongo.Database
	products *mongo.Collection
	reviews  *mongo.Collection
	r        *Rollup[product, review]
}

// newFixture creates the rollup with cfg and the given products.
func newFixture(t testing.TB, cfg Config, products ...string) *fixture {
	t.Helper()
	db := testenv.Database(t)
	return fixtureOn(t, db, cfg, products...)
}

func fixtureOn(t testing.TB, db *mongo.Database, cfg Config, products ...string) *fixture {
	t.Helper()
	ctx := context.Background()
	f := &fixture{db: db, products: db.Collection("products"), reviews: db.Collection("reviews")}
	r, err := New[product, review](f.products, f.reviews, cfg)
	if err != nil {
		t.Fatal(err)
	}
	if err := r.EnsureIndexes(ctx); err != nil {
		t.Fatal(err)
	}
	f.r = r
	for _, p := range products {
		if _, err := f.products.InsertOne(ctx, product{ID: p, Name: "product " + p}); err != nil {
			t.Fatal(err)
		}
	}
	return f
}

func (f *fixture) rate(t testing.TB, p string, stars int) any {
	t.Helper()
	id, err := f.r.Insert(context.Background(), review{Product: p, Stars: stars})
	if err != nil {
		t.Fatal(err)
	}
	return id
}

// stored returns the product's rating subdocument as stored.
func (f *fixture) stored(t testing.TB, p string) bson.Raw {
	t.Helper()
	doc, err := f.products.FindOne(context.Background(), bson.D{{Key: "_id", Value: p}}).Raw()
	if err != nil {
		t.Fatal(err)
	}
	r, _ := doc.Lookup("rating").DocumentOK()
	return r
}

// requireTotals checks Get and the stored types: sum and count NumberLong,
// min and max present exactly when count is positive.
func (f *fixture) requireTotals(t testing.TB, p string, want Totals) {
	t.Helper()
	got, err := f.r.Get(context.Background(), p)
	if err != nil {
		t.Fatal(err)
	}
	if got != want {
		t.Fatalf("%s totals %+v, want %+v (stored %v)", p, got, want, f.stored(t, p))
	}
	s := f.stored(t, p)
	if len(s) == 0 && want == (Totals{}) {
		return // never written
	}
	if v := s.Lookup("sum"); v.Type != bson.TypeInt64 {
		t.Fatalf("%s stored %v: sum is a %s, want NumberLong", p, s, v.Type)
	}
	if v := s.Lookup("count"); v.Type != bson.TypeInt64 {
		t.Fatalf("%s stored %v: count is a %s, want NumberLong", p, s, v.Type)
	}
	if f.r.cfg.Stats.has(Min) {
		_, err := s.LookupErr("min")
		if (err == nil) != (want.Count > 0) {
			t.Fatalf("%s stored %v: min present %v with count %d", p, s, err == nil, want.Count)
		}
	}
	if _, err := s.LookupErr("avg"); err == nil {
		t.Fatalf("%s stored %v: an average is stored", p, s)
	}
}

// requireClean checks that Verify finds nothing.
func (f *fixture) requireClean(t testing.TB) {
	t.Helper()
	rep, err := f.r.Verify(context.Background())
	if err != nil || len(rep.Drifted) != 0 || rep.Orphans != 0 {
		t.Fatalf("verify: %+v, %v", rep, err)
	}
}
