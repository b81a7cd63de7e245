package pattern_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"go.mongodb.org/mongo-driver/v2/bson"

	"github.com/formworkdb/formwork/internal/testenv"
	"github.com/formworkdb/formwork/pattern"
	"github.com/formworkdb/formwork/pattern/attribute"
	"github.com/formworkdb/formwork/pattern/bucket"
	"github.com/formworkdb/formwork/pattern/computed"
	"github.com/formworkdb/formwork/pattern/extref"
	"github.com/formworkdb/formwork/pattern/outlier"
	"github.com/formworkdb/formwork/pattern/subset"
)

// The bookshop of issue 10, written as a user writes it: typed structs,
// one call per logical write, one read per page.

type shopReview struct {
	ID     string    `bson:"_id"`
	BookID string    `bson:"bookId"`
	At     time.Time `bson:"at"`
	Stars  int       `bson:"stars"`
}

type shopBook struct {
	ID         string           `bson:"_id"`
	Title      string           `bson:"title"`
	Recent     []shopReview     `bson:"recent"`
	Rating     computed.Totals  `bson:"rating,omitempty"`
	BuyerCount int              `bson:"buyerCount"`
	Specs      []attribute.Attr `bson:"specs,omitempty"`
}

type shopCustomer struct {
	ID   string `bson:"_id"`
	Name string `bson:"name"`
	City string `bson:"city"`
}

type shopCustomerRef struct {
	ID   string `bson:"_id"`
	Name string `bson:"name"`
}

type shopOrder struct {
	ID       string          `bson:"_id"`
	Status   string          `bson:"status"`
	Customer shopCustomerRef `bson:"customer"`
}

type shopPurchase struct {
	ID     string `bson:"_id"`
	BookID string `bson:"bookId"`
	User   string `bson:"user"`
}

type shopBuyer struct {
	Purchase string `bson:"purchase"`
	User     string `bson:"user"`
}

type shopTick struct {
	At    time.Time `bson:"at"`
	Price float64   `bson:"price"`
}

func TestBookshop(t *testing.T) {
	ctx := context.Background()
	db := testenv.Database(t)
	books := db.Collection("books")
	must := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}

	// Reviews feed the newest-3 window and the rating.
	window, err := subset.New[shopBook, shopReview](books, db.Collection("reviews"),
		subset.Config{Parent: "bookId", Time: "at", Array: "recent", Size: 3})
	must(err)
	rating, err := computed.New[shopBook, shopReview](books, db.Collection("reviews"),
		computed.Config{Parent: "bookId", Value: "stars", Target: "rating", Stats: computed.Sum | computed.Count | computed.Min | computed.Max})
	must(err)
	reviews := pattern.NewSource[shopReview](db.Collection("reviews"), window, rating)
	must(reviews.EnsureIndexes(ctx))

	// Purchases feed each book's buyers (outlier: 100 embedded, the rest
	// in overflow buckets).
	buyersOf, err := outlier.New[shopBook, shopBuyer](books, db.Collection("bookBuyers"), outlier.Config{
		Threshold: 100, List: "buyers", Count: "buyerCount", ElementID: "purchase"})
	must(err)
	feed, err := buyersOf.Feed(db.Collection("purchases"), "bookId", func(src bson.Raw) (shopBuyer, error) {
		var p shopPurchase
		err := bson.Unmarshal(src, &p)
		return shopBuyer{Purchase: p.ID, User: p.User}, err
	})
	must(err)
	purchases := pattern.NewSource[shopPurchase](db.Collection("purchases"), feed)
	must(purchases.EnsureIndexes(ctx))

	// Specs as attributes.
	specs, err := attribute.New[shopBook](books, attribute.Config{Field: "specs"})
	must(err)
	must(specs.EnsureIndexes(ctx))

	for _, id := range []string{"dune", "emma"} {
		_, err := buyersOf.Create(ctx, shopBook{ID: id, Title: id})
		must(err)
	}

	// Reviews: one call per write.
	day := time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC)
	for i, stars := range []int{5, 4, 2, 5, 3} {
		_, err := reviews.Insert(ctx, shopReview{ID: fmt.Sprint("r", i), BookID: "dune", At: day.AddDate(0, 0, i), Stars: stars})
		must(err)
	}
	_, err = reviews.Update(ctx, "r4", bson.D{{Key: "$set", Value: bson.D{{Key: "stars", Value: 1}}}})
	must(err)
	_, err = reviews.Update(ctx, "r3", bson.D{{Key: "$set", Value: bson.D{{Key: "bookId", Value: "emma"}}}}) // a move
	must(err)
	_, err = reviews.Delete(ctx, "r2")
	must(err)

	// A book with 10,000 buyers, loaded in one call.
	var ps []shopPurchase
	for i := range 10000 {
		ps = append(ps, shopPurchase{ID: fmt.Sprint("p", i), BookID: "dune", User: fmt.Sprint("u", i)})
	}
	_, err = purchases.InsertMany(ctx, ps)
	must(err)
	_, err = purchases.Delete(ctx, "p0") // a refund
	must(err)

	// Specs.
	must(specs.Set(ctx, "dune", "pages", 896))
	must(specs.Set(ctx, "emma", "pages", 474))
	must(specs.Set(ctx, "dune", "language", "en"))

	// The book page: one FindOne, typed.
	var page shopBook
	must(books.FindOne(ctx, bson.D{{Key: "_id", Value: "dune"}}).Decode(&page))
	var recent []string
	for _, r := range page.Recent {
		recent = append(recent, r.ID)
	}
	if fmt.Sprint(recent) != "[r4 r1 r0]" {
		t.Errorf("dune's window %v, want [r4 r1 r0]", recent)
	}
	if page.Rating.Count != 3 || page.Rating.Sum != 10 || page.Rating.Min != 1 || page.Rating.Max != 5 {
		t.Errorf("dune's rating %+v, want count 3 sum 10 min 1 max 5", page.Rating)
	}
	if page.BuyerCount != 9999 {
		t.Errorf("dune's buyerCount %d, want 9999", page.BuyerCount)
	}
	var emma shopBook
	must(books.FindOne(ctx, bson.D{{Key: "_id", Value: "emma"}}).Decode(&emma))
	if len(emma.Recent) != 1 || emma.Recent[0].ID != "r3" || emma.Rating.Count != 1 {
		t.Errorf("emma after the move: window %v, rating %+v", emma.Recent, emma.Rating)
	}
	all, err := buyersOf.GetAll(ctx, "dune")
	must(err)
	if len(all.Elements) != 9999 || !all.HasOverflow {
		t.Errorf("dune's buyers: %d elements, overflow %v; want 9999, true", len(all.Elements), all.HasOverflow)
	}
	short, err := specs.Find(ctx, attribute.All(attribute.Where("pages").Lt(500)))
	must(err)
	if len(short) != 1 || short[0].ID != "emma" {
		t.Errorf("books under 500 pages: %v", short)
	}

	// Orders embed a copy of the customer's name (extended reference).
	ref, err := extref.New[shopCustomer, shopOrder, shopCustomerRef](db.Collection("customers"), db.Collection("orders"),
		extref.Config{Field: "customer", Fields: []string{"name"}, Frozen: bson.D{{Key: "status", Value: "delivered"}}})
	must(err)
	must(ref.EnsureIndexes(ctx))
	customers := pattern.NewSource[shopCustomer](db.Collection("customers"), ref)
	_, err = customers.Insert(ctx, shopCustomer{ID: "c1", Name: "Ada", City: "London"})
	must(err)
	_, err = ref.Insert(ctx, "c1", shopOrder{ID: "o1", Status: "open"})
	must(err)
	_, err = ref.Insert(ctx, "c1", shopOrder{ID: "o2", Status: "delivered"})
	must(err)
	_, err = customers.Update(ctx, "c1", bson.D{{Key: "$set", Value: bson.D{{Key: "name", Value: "Ada King"}}}})
	must(err)
	for id, want := range map[string]string{"o1": "Ada King", "o2": "Ada"} {
		var o shopOrder
		must(db.Collection("orders").FindOne(ctx, bson.D{{Key: "_id", Value: id}}).Decode(&o))
		if o.Customer.Name != want {
			t.Errorf("order %s shows %q, want %q", id, o.Customer.Name, want)
		}
	}

	// Price ticks in buckets, with a time-range read.
	ticks, err := bucket.New[shopTick](db.Collection("ticks"), bucket.Config{Size: 60, Time: "at"})
	must(err)
	must(ticks.EnsureIndexes(ctx))
	var ts []shopTick
	for i := range 600 {
		ts = append(ts, shopTick{At: day.Add(time.Duration(i) * time.Minute), Price: float64(100 + i%7)})
	}
	for i := 0; i < len(ts); i += 60 { // AppendMany takes at most one bucket's worth
		_, err = ticks.AppendMany(ctx, "DUNE", ts[i:i+60])
		must(err)
	}
	hour, err := ticks.Range(ctx, "DUNE", day.Add(2*time.Hour), day.Add(3*time.Hour))
	must(err)
	if len(hour) < 60 || len(hour) > 61 {
		t.Errorf("one hour of ticks: %d, want 60 or 61", len(hour))
	}

	// Every declared copy checks clean.
	for _, src := range []interface {
		Check(context.Context, bool) ([]pattern.Result, error)
	}{reviews, purchases, customers} {
		results, err := src.Check(ctx, false)
		must(err)
		for _, r := range results {
			if !r.OK() {
				t.Errorf("%s: %d problems: %v", r.Name, r.Problems, r.Details)
			}
		}
	}
}
