package subset

import (
	"context"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo"

	"github.com/formworkdb/formwork/internal/explaintest"
	"github.com/formworkdb/formwork/internal/testenv"
)

const size = 5

// Review is the child type of the tests.
type Review struct {
	ID        string    `bson:"_id"`
	ProductID string    `bson:"productId,omitempty"`
	At        time.Time `bson:"at"`
	Stars     int32     `bson:"stars"`
	Text      string    `bson:"text,omitempty"`
}

// Product is the parent type of the tests.
type Product struct {
	ID            string   `bson:"_id"`
	Name          string   `bson:"name"`
	RecentReviews []Review `bson:"recentReviews"`
}

func reviewConfig() Config {
	return Config{Parent: "productId", Time: "at", Array: "recentReviews", Size: size}
}

type fixture struct {
	db       *mongo.Database
	products *mongo.Collection
	reviews  *mongo.Collection
	w        *Window[Product, Review]
}

func newFixture(t testing.TB, cfg Config) *fixture {
	t.Helper()
	return newFixtureIn(t, testenv.Database(t), cfg)
}

// newFixtureIn is newFixture on the database db.
func newFixtureIn(t testing.TB, db *mongo.Database, cfg Config) *fixture {
	t.Helper()
	f := &fixture{db: db, products: db.Collection("products"), reviews: db.Collection("reviews")}
	w, err := New[Product, Review](f.products, f.reviews, cfg)
	if err != nil {
		t.Fatal(err)
	}
	if err := w.EnsureIndexes(context.Background()); err != nil {
		t.Fatal(err)
	}
	f.w = w
	return f
}

func (f *fixture) product(t testing.TB, id string) {
	t.Helper()
	if _, err := f.products.InsertOne(context.Background(), bson.D{{Key: "_id", Value: id}, {Key: "name", Value: "widget " + id}}); err != nil {
		t.Fatal(err)
	}
}

var t0 = time.Date(2025, 3, 1, 0, 0, 0, 0, time.UTC)

// review returns review number n of product p, at t0+n hours.
func review(p string, n int) Review {
	return Review{ID: fmt.Sprintf("%s-r%02d", p, n), ProductID: p, At: t0.Add(time.Duration(n) * time.Hour),
		Stars: int32(n%5 + 1), Text: fmt.Sprintf("review %d", n)}
}

// add adds review number n of product p.
func (f *fixture) add(t testing.TB, p string, n int) string {
	t.Helper()
	r := review(p, n)
	if _, err := f.w.Add(context.Background(), r); err != nil {
		t.Fatal(err)
	}
	return r.ID
}

// stored returns the product's array as stored.
func (f *fixture) stored(t testing.TB, p string) []bson.Raw {
	t.Helper()
	doc, err := f.products.FindOne(context.Background(), bson.D{{Key: "_id", Value: p}}).Raw()
	if err != nil {
		t.Fatal(err)
	}
	arr, ok := doc.Lookup("recentReviews").ArrayOK()
	if !ok {
		return nil
	}
	vals, _ := arr.Values()
	var out []bson.Raw
	for _, v := range vals {
		out = append(out, v.Document())
	}
	return out
}

// verifyOK fails unless Verify finds nothing.
func (f *fixture) verifyOK(t testing.TB) {
	t.Helper()
	rep, err := f.w.Verify(context.Background())
	if err != nil || rep.Found != 0 {
		t.Fatalf("verify: %+v, %v", rep, err)
	}
}

func ids(docs []bson.Raw) []string {
	var out []string
	for _, d := range docs {
		out = append(out, d.Lookup("_id").StringValue())
	}
	return out
}

func reviewIDs(rs []Review) []string {
	var out []string
	for _, r := range rs {
		out = append(out, r.ID)
	}
	return out
}

func TestConfigValidate(t *testing.T) {
	if err := reviewConfig().Validate(); err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		name   string
		change func(*Config)
		want   string
	}{
		{"no parent", func(c *Config) { c.Parent = "" }, "Parent"},
		{"dotted time", func(c *Config) { c.Time = "a.b" }, "Time"},
		{"id array", func(c *Config) { c.Array = "_id" }, "Array"},
		{"same", func(c *Config) { c.Time = c.Parent }, "same field"},
		{"zero size", func(c *Config) { c.Size = 0 }, "Size"},
		{"negative size", func(c *Config) { c.Size = -5 }, "Size"},
		{"field parent", func(c *Config) { c.Fields = []string{"productId"} }, "Fields"},
		{"field twice", func(c *Config) { c.Fields = []string{"a", "a"} }, "Fields"},
		{"bool time", func(c *Config) { c.TimeType = bson.TypeBoolean }, "TimeType"},
		{"null time", func(c *Config) { c.TimeType = bson.TypeNull }, "TimeType"},
		{"policy", func(c *Config) { c.OnParentDelete = Policy(7) }, "OnParentDelete"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			c := reviewConfig()
			tc.change(&c)
			err := c.Validate()
			if err == nil || !strings.Contains(err.Error(), tc.want) || !errors.Is(err, ErrInvalidConfig) {
				t.Fatalf("Validate = %v, want ErrInvalidConfig about %s", err, tc.want)
			}
			if _, err := New[Product, Review](testenv.Database(t).Collection("p"), testenv.Database(t).Collection("c"), c); !errors.Is(err, ErrInvalidConfig) {
				t.Fatalf("New = %v, want ErrInvalidConfig", err)
			}
		})
	}
}

func TestWindowAddKeepsNewest(t *testing.T) {
	ctx := context.Background()
	f := newFixture(t, reviewConfig())
	f.product(t, "p1")
	order := []int{3, 6, 0, 5, 1, 4, 2}
	for _, n := range order {
		f.add(t, "p1", n)
	}
	got := f.stored(t, "p1")
	want := []string{"p1-r06", "p1-r05", "p1-r04", "p1-r03", "p1-r02"}
	if !slices.Equal(ids(got), want) {
		t.Fatalf("stored window %v, want the 5 newest newest-first %v", ids(got), want)
	}
	for _, d := range got {
		if _, err := d.LookupErr("productId"); err == nil {
			t.Fatalf("copy %v carries the parent link", d)
		}
		keys := []string{}
		els, _ := d.Elements()
		for _, e := range els {
			keys = append(keys, e.Key())
		}
		if !slices.Equal(keys, []string{"_id", "at", "stars", "text"}) {
			t.Fatalf("copy fields %v", keys)
		}
	}
	if n, _ := f.reviews.CountDocuments(ctx, bson.D{}); n != 7 {
		t.Fatalf("%d reviews stored, want all 7", n)
	}
	recent, err := f.w.Recent(ctx, "p1")
	if err != nil || !slices.Equal(reviewIDs(recent), want) {
		t.Fatalf("Recent = %v, %v", reviewIDs(recent), err)
	}
	if recent[0] != (Review{ID: "p1-r06", At: t0.Add(6 * time.Hour), Stars: 2, Text: "review 6"}) {
		t.Fatalf("typed copy %+v", recent[0])
	}
	page, err := f.w.Parent(ctx, "p1")
	if err != nil || page.Name != "widget p1" || !slices.Equal(reviewIDs(page.RecentReviews), want) {
		t.Fatalf("Parent = %+v, %v", page, err)
	}
	if _, err := f.w.Parent(ctx, "nope"); !errors.Is(err, ErrParentNotFound) {
		t.Fatalf("Parent of an unknown product: %v", err)
	}
	if _, err := f.w.Recent(ctx, "nope"); !errors.Is(err, ErrParentNotFound) {
		t.Fatalf("Recent of an unknown product: %v", err)
	}
	if _, err := f.w.Add(ctx, review("p1", 3)); !mongo.IsDuplicateKeyError(err) {
		t.Fatalf("second Add of one _id: %v", err)
	}
	f.verifyOK(t)
}

// TestWindowBSOND runs the window with bson.D as both type arguments,
// and checks that a generated _id goes first in the child and its copy.
func TestWindowBSOND(t *testing.T) {
	ctx := context.Background()
	f := newFixture(t, reviewConfig())
	f.product(t, "p1")
	w, err := New[bson.D, bson.D](f.products, f.reviews, reviewConfig())
	if err != nil {
		t.Fatal(err)
	}
	id, err := w.Add(ctx, bson.D{{Key: "productId", Value: "p1"}, {Key: "at", Value: t0.Add(100 * time.Hour)}, {Key: "stars", Value: int32(4)}})
	if err != nil {
		t.Fatal(err)
	}
	child, _ := f.reviews.FindOne(ctx, bson.D{{Key: "_id", Value: id}}).Raw()
	if child.Index(0).Key() != "_id" || f.stored(t, "p1")[0].Lookup("_id").ObjectID() != id.(bson.ObjectID) {
		t.Fatalf("generated _id: child %v, window %v", child, f.stored(t, "p1")[0])
	}
	recent, err := w.Recent(ctx, "p1")
	if err != nil || len(recent) != 1 || recent[0][0].Key != "_id" || recent[0][2] != (bson.E{Key: "stars", Value: int32(4)}) {
		t.Fatalf("Recent = %v, %v", recent, err)
	}
	p, err := w.Parent(ctx, "p1")
	if err != nil || p[0] != (bson.E{Key: "_id", Value: "p1"}) {
		t.Fatalf("Parent = %v, %v", p, err)
	}
	edited, err := w.Edit(ctx, id, bson.D{{Key: "$set", Value: bson.D{{Key: "stars", Value: int32(1)}}}})
	if err != nil || edited[3] != (bson.E{Key: "stars", Value: int32(1)}) {
		t.Fatalf("Edit = %v, %v", edited, err)
	}
	if _, err := w.Add(ctx, bson.D{{Key: "productId", Value: "p1"}}); !errors.Is(err, ErrTimeType) {
		t.Fatalf("Add without a time: %v", err)
	}
	if _, err := w.Add(ctx, bson.D{{Key: "at", Value: t0}}); err == nil {
		t.Fatal("Add without a parent succeeded")
	}
	f.verifyOK(t)
}

// TestPushSliceSignRule pins the server behaviour the pattern depends on.
func TestPushSliceSignRule(t *testing.T) {
	ctx := context.Background()
	db := testenv.Database(t)
	c := db.Collection("p")
	push := func(id int, slice int, each bool) error {
		mods := bson.D{{Key: "$sort", Value: bson.D{{Key: "at", Value: -1}}}, {Key: "$slice", Value: slice}}
		if each {
			mods = append(bson.D{{Key: "$each", Value: bson.A{}}}, mods...)
		}
		_, err := c.UpdateOne(ctx, bson.D{{Key: "_id", Value: id}}, bson.D{{Key: "$push", Value: bson.D{{Key: "a", Value: mods}}}})
		return err
	}
	for id, slice := range map[int]int{1: 5, 2: -5} {
		arr := bson.A{}
		for _, at := range []int32{3, 6, 0, 5, 1, 4, 2} {
			arr = append(arr, bson.D{{Key: "at", Value: at}})
		}
		c.InsertOne(ctx, bson.D{{Key: "_id", Value: id}, {Key: "a", Value: arr}})
		if err := push(id, slice, true); err != nil {
			t.Fatal(err)
		}
		doc, _ := c.FindOne(ctx, bson.D{{Key: "_id", Value: id}}).Raw()
		vals, _ := doc.Lookup("a").Array().Values()
		var got []int32
		for _, v := range vals {
			got = append(got, v.Document().Lookup("at").Int32())
		}
		want := map[int][]int32{1: {6, 5, 4, 3, 2}, 2: {4, 3, 2, 1, 0}}[id]
		if !slices.Equal(got, want) {
			t.Errorf("$sort {at:-1} $slice %d kept %v, want %v", slice, got, want)
		}
	}
	// Without $each, MongoDB 5.0+ pushes {$sort, $slice} as a plain
	// document (nested $-prefixed names are storable), which is why the
	// package always writes the $each form.
}

func TestWindowAddUnknownParent(t *testing.T) {
	ctx := context.Background()
	f := newFixture(t, reviewConfig())
	_, err := f.w.Add(ctx, Review{ID: "r", ProductID: "nope", At: t0})
	if !errors.Is(err, ErrParentNotFound) {
		t.Fatalf("Add = %v, want ErrParentNotFound", err)
	}
	if n, _ := f.reviews.CountDocuments(ctx, bson.D{}); n != 0 {
		t.Fatal("the orphan child stayed in the child collection")
	}
}

func TestWindowEdit(t *testing.T) {
	ctx := context.Background()
	f := newFixture(t, reviewConfig())
	f.product(t, "p1")
	for n := range 7 {
		f.add(t, "p1", n)
	}
	// In the window: copy edited in place.
	got, err := f.w.Edit(ctx, "p1-r05", bson.D{{Key: "$set", Value: bson.D{{Key: "text", Value: "edited"}, {Key: "stars", Value: int32(1)}}}})
	if err != nil || got.Text != "edited" || got.ProductID != "p1" {
		t.Fatalf("Edit = %+v, %v", got, err)
	}
	win := f.stored(t, "p1")
	if win[1].Lookup("text").StringValue() != "edited" || win[1].Lookup("stars").Int32() != 1 {
		t.Fatalf("copy after edit: %v", win[1])
	}
	// A removed field leaves the copy too.
	if _, err := f.w.Edit(ctx, "p1-r05", bson.D{{Key: "$unset", Value: bson.D{{Key: "text", Value: ""}}}}); err != nil {
		t.Fatal(err)
	}
	if _, err := f.stored(t, "p1")[1].LookupErr("text"); err == nil {
		t.Fatal("unset field still in the copy")
	}
	// Not in the window: parent untouched.
	before, _ := f.products.FindOne(ctx, bson.D{{Key: "_id", Value: "p1"}}).Raw()
	if _, err := f.w.Edit(ctx, "p1-r00", bson.D{{Key: "$set", Value: bson.D{{Key: "text", Value: "old and edited"}}}}); err != nil {
		t.Fatal(err)
	}
	after, _ := f.products.FindOne(ctx, bson.D{{Key: "_id", Value: "p1"}}).Raw()
	if string(before) != string(after) {
		t.Fatal("editing a child outside the window changed the parent")
	}
	child, _ := f.reviews.FindOne(ctx, bson.D{{Key: "_id", Value: "p1-r00"}}).Raw()
	if child.Lookup("text").StringValue() != "old and edited" {
		t.Fatal("child not edited")
	}
	// Moving the oldest child to the newest time brings it in.
	if _, err := f.w.Edit(ctx, "p1-r00", bson.D{{Key: "$set", Value: bson.D{{Key: "at", Value: t0.Add(50 * time.Hour)}}}}); err != nil {
		t.Fatal(err)
	}
	if got := ids(f.stored(t, "p1")); !slices.Equal(got, []string{"p1-r00", "p1-r06", "p1-r05", "p1-r04", "p1-r03"}) {
		t.Fatalf("window after retiming: %v", got)
	}
	// A pipeline update works as well.
	if _, err := f.w.Edit(ctx, "p1-r06", bson.A{bson.D{{Key: "$set", Value: bson.D{{Key: "stars", Value: bson.D{{Key: "$add", Value: bson.A{"$stars", 1}}}}}}}}); err != nil {
		t.Fatal(err)
	}
	if _, err := f.w.Edit(ctx, "nope", bson.D{{Key: "$set", Value: bson.D{{Key: "text", Value: "x"}}}}); !errors.Is(err, ErrNotFound) {
		t.Fatalf("Edit of an unknown child = %v", err)
	}
	f.verifyOK(t)
}

func TestWindowDeleteRefills(t *testing.T) {
	ctx := context.Background()
	f := newFixture(t, reviewConfig())
	f.product(t, "p1")
	for n := range 7 {
		f.add(t, "p1", n)
	}
	gone, err := f.w.Delete(ctx, "p1-r04")
	if err != nil || gone != review("p1", 4) {
		t.Fatalf("Delete = %+v, %v", gone, err)
	}
	if got := ids(f.stored(t, "p1")); !slices.Equal(got, []string{"p1-r06", "p1-r05", "p1-r03", "p1-r02", "p1-r01"}) {
		t.Fatalf("after deleting r04 the window is %v, want it refilled with r01", got)
	}
	// Deleting a child outside the window leaves the parent as it was.
	before, _ := f.products.FindOne(ctx, bson.D{{Key: "_id", Value: "p1"}}).Raw()
	if _, err := f.w.Delete(ctx, "p1-r00"); err != nil {
		t.Fatal(err)
	}
	after, _ := f.products.FindOne(ctx, bson.D{{Key: "_id", Value: "p1"}}).Raw()
	if string(before) != string(after) {
		t.Fatal("deleting a child outside the window changed the parent")
	}
	// Down to fewer than N children.
	for _, id := range []string{"p1-r06", "p1-r05", "p1-r03"} {
		if _, err := f.w.Delete(ctx, id); err != nil {
			t.Fatal(err)
		}
	}
	if got := ids(f.stored(t, "p1")); !slices.Equal(got, []string{"p1-r02", "p1-r01"}) {
		t.Fatalf("window %v", got)
	}
	if _, err := f.w.Delete(ctx, "p1-r06"); !errors.Is(err, ErrNotFound) {
		t.Fatalf("second delete = %v", err)
	}
	f.verifyOK(t)
}

func TestWindowPage(t *testing.T) {
	ctx := context.Background()
	f := newFixture(t, reviewConfig())
	f.product(t, "p1")
	f.product(t, "p2")
	// 23 children, several sharing a time, inserted in random order.
	rng := rand.New(rand.NewPCG(1, 2))
	for _, n := range rng.Perm(23) {
		r := Review{ID: fmt.Sprintf("r%02d", n), ProductID: "p1", At: t0.Add(time.Duration(n/3) * time.Hour)}
		if _, err := f.w.Add(ctx, r); err != nil {
			t.Fatal(err)
		}
	}
	f.add(t, "p2", 1)
	var wantIDs []string
	for n := 22; n >= 0; n-- {
		wantIDs = append(wantIDs, fmt.Sprintf("r%02d", n))
	}
	var got []string
	var after Cursor
	pages := 0
	for {
		p, err := f.w.Page(ctx, "p1", after, 5)
		if err != nil {
			t.Fatal(err)
		}
		pages++
		got = append(got, reviewIDs(p.Children)...)
		if p.Children[0].ProductID != "p1" {
			t.Fatalf("page children are not whole: %+v", p.Children[0])
		}
		if p.Next == nil {
			break
		}
		after = *p.Next
	}
	if pages != 5 || !slices.Equal(got, wantIDs) {
		t.Fatalf("%d pages: %v\nwant %v", pages, got, wantIDs)
	}
	if _, err := f.w.Page(ctx, "p1", Cursor{}, 0); err == nil {
		t.Fatal("limit 0 accepted")
	}
	if got := ids(f.stored(t, "p1")); !slices.Equal(got, wantIDs[:size]) {
		t.Fatalf("window %v, want the first page %v", got, wantIDs[:size])
	}
}

func TestWindowIndexUsed(t *testing.T) {
	ctx := context.Background()
	f := newFixture(t, reviewConfig())
	for p := range 10 {
		f.product(t, fmt.Sprint("p", p))
		for n := range 12 {
			f.add(t, fmt.Sprint("p", p), n)
		}
	}
	const index = "productId_1_at_-1__id_-1"
	// The package's own queries: the refill's and the first page's, and
	// a next page's.
	first := bson.D{{Key: "find", Value: "reviews"}, {Key: "filter", Value: f.w.childrenOf("p3")},
		{Key: "sort", Value: f.w.order()}, {Key: "limit", Value: 6}}
	if res := explaintest.Run(t, f.db, first); res.HasStage("COLLSCAN") || res.HasStage("SORT") || !res.Uses(index) {
		t.Fatalf("first page plan %v: want a scan of %s, no COLLSCAN, no SORT", res, index)
	}
	next := bson.D{{Key: "find", Value: "reviews"}, {Key: "filter", Value: bson.D{
		{Key: "productId", Value: "p3"},
		{Key: "at", Value: bson.D{{Key: "$gte", Value: bson.DateTime(math.MinInt64)}, {Key: "$lte", Value: t0.Add(5 * time.Hour)}}},
		{Key: "$nor", Value: bson.A{bson.D{{Key: "at", Value: t0.Add(5 * time.Hour)}, {Key: "_id", Value: bson.D{{Key: "$gte", Value: "p3-r05"}}}}}},
	}}, {Key: "sort", Value: f.w.order()}, {Key: "limit", Value: 6}}
	if res := explaintest.Run(t, f.db, next); res.HasStage("COLLSCAN") || res.HasStage("SORT") || !res.Uses(index) {
		t.Fatalf("next page plan %v: want a scan of %s, no COLLSCAN, no SORT", res, index)
	}

	// Without the index the same page sorts in memory after a scan.
	if err := f.reviews.Indexes().DropOne(ctx, index); err != nil {
		t.Fatal(err)
	}
	if res := explaintest.Run(t, f.db, next); !res.HasStage("COLLSCAN") || !res.HasStage("SORT") {
		t.Fatalf("plan without the index: %v", res)
	}
}

// kinds returns the problems' kinds and parents, as "kind:parent".
func kinds(rep Report) []string {
	var out []string
	for _, p := range rep.Problems {
		s := p.Kind.String() + ":"
		if p.Parent.Type == bson.TypeString {
			s += p.Parent.StringValue()
		} else {
			s += p.Parent.String()
		}
		out = append(out, s)
	}
	return out
}

func TestWindowVerifyRepair(t *testing.T) {
	ctx := context.Background()
	f := newFixture(t, reviewConfig())
	for _, p := range []string{"a", "b", "c", "d", "e", "ok"} {
		f.product(t, p)
		if p != "e" {
			for n := range 7 {
				f.add(t, p, n)
			}
		}
	}
	upd := func(p string, u bson.D) {
		if _, err := f.products.UpdateOne(ctx, bson.D{{Key: "_id", Value: p}}, u); err != nil {
			t.Fatal(err)
		}
	}
	upd("a", bson.D{{Key: "$pull", Value: bson.D{{Key: "recentReviews", Value: bson.D{{Key: "_id", Value: "a-r05"}}}}}})
	upd("b", bson.D{{Key: "$set", Value: bson.D{{Key: "recentReviews.2.text", Value: "stale"}}}})
	upd("c", bson.D{{Key: "$push", Value: bson.D{{Key: "recentReviews", Value: bson.D{{Key: "$each", Value: bson.A{}}, {Key: "$sort", Value: bson.D{{Key: "at", Value: 1}}}}}}}})
	upd("d", bson.D{{Key: "$unset", Value: bson.D{{Key: "recentReviews", Value: ""}}}})

	rep, err := f.w.Verify(ctx)
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"window:a", "window:b", "window:c", "window:d"}
	if rep.Checked != 6 || rep.Found != 4 || !slices.Equal(kinds(rep), want) || rep.OK() {
		t.Fatalf("verify: %+v; want 6 checked and %v", rep, want)
	}
	res, err := f.w.Check(ctx, false)
	if err != nil || res.OK() || res.Problems != 4 || res.Checked != 6 || res.Name != "subset products.recentReviews" ||
		len(res.Details) != 4 || !strings.Contains(res.Details[0], `parent "a"`) {
		t.Fatalf("Check = %+v, %v", res, err)
	}
	rep, err = f.w.Repair(ctx)
	if err != nil || rep.Repaired != 4 || !rep.OK() {
		t.Fatalf("repair: %+v, %v", rep, err)
	}
	for _, p := range []string{"a", "b", "c", "d"} {
		if got := ids(f.stored(t, p)); !slices.Equal(got, []string{p + "-r06", p + "-r05", p + "-r04", p + "-r03", p + "-r02"}) {
			t.Fatalf("%s after repair: %v", p, got)
		}
	}
	f.verifyOK(t)
	if res, err := f.w.Check(ctx, true); err != nil || !res.OK() {
		t.Fatalf("Check(repair) of a consistent window: %+v, %v", res, err)
	}
	if changed, err := f.w.Refill(ctx, "ok"); err != nil || changed {
		t.Fatalf("refill of a correct window: changed %v, %v", changed, err)
	}
	if _, err := f.w.Refill(ctx, "nope"); !errors.Is(err, ErrParentNotFound) {
		t.Fatalf("refill of an unknown parent: %v", err)
	}
}

func TestWindowFields(t *testing.T) {
	ctx := context.Background()
	cfg := reviewConfig()
	cfg.Fields = []string{"stars"}
	f := newFixture(t, cfg)
	f.product(t, "p1")
	f.add(t, "p1", 1)
	got := f.stored(t, "p1")[0]
	want, _ := bson.Marshal(bson.D{{Key: "_id", Value: "p1-r01"}, {Key: "at", Value: t0.Add(time.Hour)}, {Key: "stars", Value: int32(2)}})
	if string(got) != string(want) {
		t.Fatalf("copy %v, want %v", got, bson.Raw(want))
	}
	before, _ := f.products.FindOne(ctx, bson.D{{Key: "_id", Value: "p1"}}).Raw()
	if _, err := f.w.Edit(ctx, "p1-r01", bson.D{{Key: "$set", Value: bson.D{{Key: "text", Value: "uncopied"}}}}); err != nil {
		t.Fatal(err)
	}
	after, _ := f.products.FindOne(ctx, bson.D{{Key: "_id", Value: "p1"}}).Raw()
	if string(before) != string(after) {
		t.Fatal("editing an uncopied field wrote the parent")
	}
	f.verifyOK(t)
}

// TestWindowConcurrent adds, edits and deletes children of one parent
// from many goroutines; the window ends exactly the newest N.
func TestWindowConcurrent(t *testing.T) {
	ctx := context.Background()
	f := newFixture(t, reviewConfig())
	f.product(t, "p1")
	const workers, each = 8, 15
	var wg sync.WaitGroup
	errs := make(chan error, workers)
	for g := range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range each {
				n := g*each + i
				id := fmt.Sprintf("r%03d", n)
				_, err := f.w.Add(ctx, Review{ID: id, ProductID: "p1", At: t0.Add(time.Duration(n%40) * time.Minute)})
				switch {
				case err != nil:
				case i%3 == 0:
					_, err = f.w.Delete(ctx, id)
				case i%3 == 1:
					// Everyone edits the newest children's stars and some times.
					_, err = f.w.Edit(ctx, fmt.Sprintf("r%03d", n-1), bson.D{{Key: "$inc", Value: bson.D{{Key: "stars", Value: 1}}}})
					if err == nil && i%2 == 0 {
						_, err = f.w.Edit(ctx, id, bson.D{{Key: "$set", Value: bson.D{{Key: "at", Value: t0.Add(time.Duration(n%7) * time.Minute)}}}})
					}
				}
				if err != nil && !errors.Is(err, ErrNotFound) {
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
	if n := len(f.stored(t, "p1")); n != size {
		t.Fatalf("window holds %d copies", n)
	}
}

// TestWindowConcurrentEditsOfOneChild races edits of one child's copied
// field: whatever order their window writes land in, the copy ends as
// the child.
func TestWindowConcurrentEditsOfOneChild(t *testing.T) {
	ctx := context.Background()
	f := newFixture(t, reviewConfig())
	f.product(t, "p1")
	for n := range 3 {
		f.add(t, "p1", n)
	}
	var wg sync.WaitGroup
	for g := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range 10 {
				if _, err := f.w.Edit(ctx, "p1-r02", bson.D{{Key: "$set", Value: bson.D{{Key: "text", Value: fmt.Sprint(g, "/", i)}}}}); err != nil {
					t.Error(err)
					return
				}
			}
		}()
	}
	wg.Wait()
	f.verifyOK(t)
}

// TestWindowNullArray: a typed parent inserted with a nil window slice
// stores null there; the first push turns it into the window, and a null
// window of a parent without children is no problem.
func TestWindowNullArray(t *testing.T) {
	ctx := context.Background()
	f := newFixture(t, reviewConfig())
	for _, p := range []string{"p1", "p2"} {
		if _, err := f.products.InsertOne(ctx, Product{ID: p, Name: "typed"}); err != nil {
			t.Fatal(err)
		}
	}
	f.verifyOK(t)
	for n := range 3 {
		f.add(t, "p1", n)
	}
	if _, err := f.w.AddMany(ctx, []Review{review("p2", 1), review("p2", 2)}); err != nil {
		t.Fatal(err)
	}
	if got := ids(f.stored(t, "p1")); !slices.Equal(got, []string{"p1-r02", "p1-r01", "p1-r00"}) {
		t.Fatalf("window %v", got)
	}
	f.verifyOK(t)
}
