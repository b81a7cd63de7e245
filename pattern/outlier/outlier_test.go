package outlier

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo"
	"go.mongodb.org/mongo-driver/v2/mongo/options"

	"github.com/formworkdb/formwork/internal/testenv"
	"github.com/formworkdb/formwork/pattern/bucket"
)

// tickClock advances one second per call; safe for concurrent use.
func tickClock() func() time.Time {
	base := time.Date(2025, 5, 1, 0, 0, 0, 0, time.UTC)
	var n atomic.Int64
	return func() time.Time { return base.Add(time.Duration(n.Add(1)) * time.Second) }
}

// newStore returns a Store of strings (buyer names) over fresh
// collections "books" and "bookBuyersOverflow", indexes made.
func newStore(t testing.TB, cfg Config) (*Store[bson.D, string], *mongo.Collection, *mongo.Collection) {
	t.Helper()
	db := testenv.Database(t)
	parents, overflow := db.Collection("books"), db.Collection("bookBuyersOverflow")
	if cfg.Overflow.Clock == nil {
		cfg.Overflow.Clock = tickClock()
	}
	s, err := New[bson.D, string](parents, overflow, cfg)
	if err != nil {
		t.Fatal(err)
	}
	if err := s.EnsureIndexes(context.Background()); err != nil {
		t.Fatal(err)
	}
	return s, parents, overflow
}

// raw reads one document by filter.
func raw(t testing.TB, coll *mongo.Collection, filter any) bson.Raw {
	t.Helper()
	var d bson.Raw
	if err := coll.FindOne(context.Background(), filter).Decode(&d); err != nil {
		t.Fatalf("%s %v: %v", coll.Name(), filter, err)
	}
	return d
}

// all reads the documents filter selects, in sort order.
func all(t testing.TB, coll *mongo.Collection, filter any, sort bson.D) []bson.Raw {
	t.Helper()
	ctx := context.Background()
	c, err := coll.Find(ctx, filter, options.Find().SetSort(sort))
	if err != nil {
		t.Fatal(err)
	}
	var out []bson.Raw
	if err := c.All(ctx, &out); err != nil {
		t.Fatal(err)
	}
	return out
}

// strs returns the string elements of the array at key.
func strs(t testing.TB, doc bson.Raw, key string) []string {
	t.Helper()
	arr, ok := doc.Lookup(key).ArrayOK()
	if !ok {
		t.Fatalf("%s is not an array in %s", key, doc)
	}
	vals, _ := arr.Values()
	out := []string{}
	for _, v := range vals {
		out = append(out, v.StringValue())
	}
	return out
}

// users returns "u<from>" … "u<to-1>".
func users(from, to int) []string {
	out := []string{}
	for i := from; i < to; i++ {
		out = append(out, fmt.Sprintf("u%d", i))
	}
	return out
}

func TestConfigValidate(t *testing.T) {
	for _, c := range []struct {
		cfg  Config
		want string
	}{
		{Config{Threshold: 50}, ""},
		{Config{Threshold: 1, List: "buyers", Count: "buyerCount", Overflow: bucket.Config{Owner: "bookId", Size: 10}}, ""},
		{Config{}, "Threshold must be at least 1"},
		{Config{Threshold: 5, List: "a.b"}, "not a plain field name"},
		{Config{Threshold: 5, Flag: "$f"}, "not a plain field name"},
		{Config{Threshold: 5, Count: "items"}, `List and Count are both "items"`},
		{Config{Threshold: 5, Overflow: bucket.Config{Size: -1}}, "Overflow"},
		{Config{Threshold: 5, Overflow: bucket.Config{Owner: "count"}}, "Overflow"},
	} {
		err := c.cfg.Validate()
		if c.want == "" && err != nil {
			t.Errorf("%+v: %v", c.cfg, err)
		}
		if c.want != "" && (err == nil || !strings.Contains(err.Error(), c.want)) {
			t.Errorf("%+v: got %v, want %q", c.cfg, err, c.want)
		}
	}
	db := testenv.Database(t)
	if _, err := New[bson.D, string](db.Collection("a"), db.Collection("a"), Config{Threshold: 1}); err == nil {
		t.Error("New with one collection for both succeeded")
	}
	if _, err := New[bson.D, string](nil, db.Collection("a"), Config{Threshold: 1}); err == nil {
		t.Error("New with a nil collection succeeded")
	}
}

func TestCreate(t *testing.T) {
	ctx := context.Background()
	s, parents, _ := newStore(t, Config{Threshold: 3})
	if err := mk(ctx, s, 7, bson.D{{Key: "title", Value: "Invisible Cities"}}); err != nil {
		t.Fatal(err)
	}
	got := raw(t, parents, bson.D{{Key: "_id", Value: 7}}).String()
	want := `{"_id": {"$numberInt":"7"},"title": "Invisible Cities","count": {"$numberInt":"0"},"hasOverflow": false,"items": []}`
	if got != want {
		t.Errorf("stored %s\nwant    %s", got, want)
	}
	if err := mk(ctx, s, 7, nil); !mongo.IsDuplicateKeyError(err) {
		t.Errorf("second Create: %v", err)
	}
	// The pattern's fields are the Store's: Create resets them.
	if err := mk(ctx, s, 8, bson.D{{Key: "count", Value: 5}, {Key: "items", Value: bson.A{"x"}}}); err != nil {
		t.Fatal(err)
	}
	if got := raw(t, parents, bson.D{{Key: "_id", Value: 8}}).String(); got != `{"_id": {"$numberInt":"8"},"count": {"$numberInt":"0"},"hasOverflow": false,"items": []}` {
		t.Errorf("stored %s", got)
	}
	// A typed parent: its _id, its fields, and read back typed.
	type book struct {
		ID     string   `bson:"_id"`
		Title  string   `bson:"title"`
		Pages  int      `bson:"pages"`
		Buyers []string `bson:"items"`
		Count  int      `bson:"count"`
	}
	db := parents.Database()
	typed, err := New[book, string](db.Collection("typedBooks"), db.Collection("typedOverflow"), Config{Threshold: 1})
	if err != nil {
		t.Fatal(err)
	}
	id, err := typed.Create(ctx, book{ID: "b9", Title: "Cosmicomics", Pages: 153, Count: 99})
	if err != nil || id != "b9" {
		t.Fatalf("Create: %v, %v", id, err)
	}
	for _, u := range []string{"ann", "bob"} {
		if _, err := typed.Append(ctx, "b9", u); err != nil {
			t.Fatal(err)
		}
	}
	p, err := typed.Get(ctx, "b9")
	if err != nil {
		t.Fatal(err)
	}
	if p.Doc.Title != "Cosmicomics" || p.Doc.Pages != 153 || p.Doc.Count != 2 || !slices.Equal(p.Doc.Buyers, []string{"ann"}) || !p.HasOverflow {
		t.Errorf("typed Get: %+v", p)
	}
	// Without an _id, Create makes an ObjectID.
	noID, err := New[bson.D, string](db.Collection("noID"), db.Collection("noIDOverflow"), Config{Threshold: 1})
	if err != nil {
		t.Fatal(err)
	}
	oid, err := noID.Create(ctx, bson.D{{Key: "title", Value: "y"}})
	if _, ok := oid.(bson.ObjectID); err != nil || !ok {
		t.Errorf("Create without _id: %T %v, %v", oid, oid, err)
	}
}

// TestAppendOverflow checks the catalogue's assertions with Threshold 50:
// the 51st element lands in overflow and sets the flag; the embedded list
// never exceeds 50; the counter is the total.
func TestAppendOverflow(t *testing.T) {
	ctx := context.Background()
	s, parents, overflow := newStore(t, Config{Threshold: 50, Overflow: bucket.Config{Size: 20}})
	if err := mk(ctx, s, 7, nil); err != nil {
		t.Fatal(err)
	}
	for i := range 95 {
		where, err := s.Append(ctx, 7, fmt.Sprintf("u%d", i))
		if err != nil {
			t.Fatal(err)
		}
		want := Embedded
		if i >= 50 {
			want = Overflowed
		}
		if where != want {
			t.Fatalf("element %d %v, want %v", i, where, want)
		}
		p := raw(t, parents, bson.D{{Key: "_id", Value: 7}})
		if n := len(strs(t, p, "items")); n > 50 {
			t.Fatalf("parent embeds %d", n)
		}
		if got := p.Lookup("hasOverflow").Boolean(); got != (i >= 50) {
			t.Fatalf("after element %d hasOverflow %v", i, got)
		}
		if got := p.Lookup("count").Int32(); got != int32(i+1) {
			t.Fatalf("after element %d count %d", i, got)
		}
	}
	p := raw(t, parents, bson.D{{Key: "_id", Value: 7}})
	if !slices.Equal(strs(t, p, "items"), users(0, 50)) {
		t.Errorf("embedded %v", strs(t, p, "items"))
	}
	buckets := all(t, overflow, bson.D{}, bson.D{{Key: "openedAt", Value: 1}})
	if len(buckets) != 3 {
		t.Fatalf("%d overflow buckets, want 3 (20, 20, 5)", len(buckets))
	}
	var spill []string
	for i, b := range buckets {
		if got := b.Lookup("parentId").Int32(); got != 7 {
			t.Errorf("bucket %d parentId %d", i, got)
		}
		items := strs(t, b, "items")
		if int(b.Lookup("count").Int32()) != len(items) || len(items) != []int{20, 20, 5}[i] {
			t.Errorf("bucket %d: count %v, %d items", i, b.Lookup("count"), len(items))
		}
		spill = append(spill, items...)
	}
	if !slices.Equal(spill, users(50, 95)) {
		t.Errorf("overflow %v", spill)
	}

	head, err := s.Get(ctx, 7)
	if err != nil {
		t.Fatal(err)
	}
	if head.Count != 95 || !head.HasOverflow || head.OverflowRead || !slices.Equal(head.Elements, users(0, 50)) {
		t.Errorf("Get: count %d flag %v read %v %d elements", head.Count, head.HasOverflow, head.OverflowRead, len(head.Elements))
	}
	full, err := s.GetAll(ctx, 7)
	if err != nil {
		t.Fatal(err)
	}
	if !full.OverflowRead || !slices.Equal(full.Elements, users(0, 95)) {
		t.Errorf("GetAll: read %v, %v", full.OverflowRead, full.Elements)
	}
}

// TestAppendNoParentNoCounter checks that a failed conditional update is
// followed by the right check: a missing parent and a counter that is not
// a number are errors, and nothing is diverted to overflow for them.
func TestAppendNoParentNoCounter(t *testing.T) {
	ctx := context.Background()
	s, parents, overflow := newStore(t, Config{Threshold: 2})
	if _, err := s.Append(ctx, 404, "u1"); !errors.Is(err, ErrParentNotFound) {
		t.Errorf("append to a missing parent: %v", err)
	}
	if _, err := parents.InsertOne(ctx, bson.D{{Key: "_id", Value: 2}, {Key: "count", Value: "3"}}); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Append(ctx, 2, "u1"); !errors.Is(err, ErrNoCounter) {
		t.Errorf("append to a parent with a string counter: %v", err)
	}
	if _, err := parents.InsertOne(ctx, bson.D{{Key: "_id", Value: 3}, {Key: "items", Value: "oops"}}); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Append(ctx, 3, "u1"); err == nil || !strings.Contains(err.Error(), "not an array") {
		t.Errorf("append to a parent whose list is a string: %v", err)
	}
	if n, _ := overflow.CountDocuments(ctx, bson.D{}); n != 0 {
		t.Errorf("%d overflow buckets written for bad parents", n)
	}
	if _, err := s.Get(ctx, 404); !errors.Is(err, ErrParentNotFound) {
		t.Errorf("Get of a missing parent: %v", err)
	}
	if _, err := s.GetAll(ctx, 404); !errors.Is(err, ErrParentNotFound) {
		t.Errorf("GetAll of a missing parent: %v", err)
	}
}

// TestAppendInitialisesPlainParent is the regression test for parents
// inserted by the application rather than Create: {count: {$lt: T}} does
// not match a document without the counter, and Append used to fail with
// ErrNoCounter. Now the first Append initialises counter, list and flag
// (counting a list the parent already holds), also when several race.
func TestAppendInitialisesPlainParent(t *testing.T) {
	ctx := context.Background()
	s, parents, _ := newStore(t, Config{Threshold: 2})
	if _, err := parents.InsertMany(ctx, []any{
		bson.D{{Key: "_id", Value: 1}, {Key: "title", Value: "plain"}},
		bson.D{{Key: "_id", Value: 2}, {Key: "items", Value: bson.A{"old"}}},
		bson.D{{Key: "_id", Value: 3}},
	}); err != nil {
		t.Fatal(err)
	}
	for _, u := range []string{"u1", "u2", "u3"} {
		if _, err := s.Append(ctx, 1, u); err != nil {
			t.Fatalf("append %s to a plain parent: %v", u, err)
		}
	}
	if got := raw(t, parents, bson.D{{Key: "_id", Value: 1}}).String(); got != `{"_id": {"$numberInt":"1"},"title": "plain","items": ["u1","u2"],"hasOverflow": true,"count": {"$numberInt":"3"}}` {
		t.Errorf("plain parent after three appends: %s", got)
	}
	if where, err := s.Append(ctx, 2, "new"); err != nil || where != Embedded {
		t.Fatalf("append to a parent with a list: %v, %v", where, err)
	}
	if got := raw(t, parents, bson.D{{Key: "_id", Value: 2}}).String(); got != `{"_id": {"$numberInt":"2"},"items": ["old","new"],"hasOverflow": false,"count": {"$numberInt":"2"}}` {
		t.Errorf("parent with a list: %s", got)
	}
	// Racing first appends initialise once and lose nothing.
	var wg sync.WaitGroup
	for w := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if _, err := s.Append(ctx, 3, fmt.Sprintf("w%d", w)); err != nil {
				t.Error(err)
			}
		}()
	}
	wg.Wait()
	p, err := s.GetAll(ctx, 3)
	if err != nil || p.Count != 8 || len(p.Elements) != 8 {
		t.Errorf("raced parent: count %d, %d elements, %v", p.Count, len(p.Elements), err)
	}
	if r, err := s.Verify(ctx); err != nil || len(r.Problems) != 0 {
		t.Errorf("Verify: %+v, %v", r, err)
	}
}

// TestGetAllConsultsOverflowOnlyWhenFlagged plants an overflow bucket for
// a parent whose flag is false: GetAll does not query the overflow, so it
// does not see it (and Verify reports the flag).
func TestGetAllConsultsOverflowOnlyWhenFlagged(t *testing.T) {
	ctx := context.Background()
	s, _, _ := newStore(t, Config{Threshold: 5})
	if err := mk(ctx, s, 1, nil); err != nil {
		t.Fatal(err)
	}
	for _, u := range users(0, 3) {
		if _, err := s.Append(ctx, 1, u); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := s.Overflow().Append(ctx, 1, "planted"); err != nil {
		t.Fatal(err)
	}
	p, err := s.GetAll(ctx, 1)
	if err != nil {
		t.Fatal(err)
	}
	if p.OverflowRead || !slices.Equal(p.Elements, users(0, 3)) {
		t.Errorf("GetAll of an unflagged parent: read %v, %v", p.OverflowRead, p.Elements)
	}
	r, err := s.Verify(ctx)
	if err != nil {
		t.Fatal(err)
	}
	var kinds []Kind
	for _, pr := range r.Problems {
		kinds = append(kinds, pr.Kind)
	}
	if !slices.Equal(kinds, []Kind{KindCount, KindFlag}) {
		t.Errorf("Verify: %+v", r.Problems)
	}
}

// TestStructElements uses documents as elements and the catalogue's names.
func TestStructElements(t *testing.T) {
	ctx := context.Background()
	type buyer struct {
		User string `bson:"user"`
		Qty  int    `bson:"qty"`
	}
	db := testenv.Database(t)
	s, err := New[bson.D, buyer](db.Collection("books"), db.Collection("bookBuyersOverflow"), Config{
		Threshold: 2, List: "buyers", Count: "buyerCount",
		Overflow: bucket.Config{Owner: "bookId", Size: 10, ElementID: "user"},
	})
	if err != nil {
		t.Fatal(err)
	}
	if err := s.EnsureIndexes(ctx); err != nil {
		t.Fatal(err)
	}
	if err := mk(ctx, s, 7, nil); err != nil {
		t.Fatal(err)
	}
	for i := range 4 {
		if _, err := s.Append(ctx, 7, buyer{User: fmt.Sprintf("u%d", i), Qty: i}); err != nil {
			t.Fatal(err)
		}
	}
	got := raw(t, db.Collection("books"), bson.D{}).String()
	want := `{"_id": {"$numberInt":"7"},"buyerCount": {"$numberInt":"4"},"hasOverflow": true,"buyers": [{"user": "u0","qty": {"$numberInt":"0"}},{"user": "u1","qty": {"$numberInt":"1"}}]}`
	if got != want {
		t.Errorf("parent %s\nwant   %s", got, want)
	}
	b, _, err := s.Overflow().Find(ctx, 7, "u3")
	if err != nil || b.Qty != 3 {
		t.Errorf("overflow Find: %+v, %v", b, err)
	}
	ov := raw(t, db.Collection("bookBuyersOverflow"), bson.D{})
	if vals, _ := ov.Lookup("buyers").Array().Values(); ov.Lookup("bookId").Int32() != 7 || len(vals) != 2 {
		t.Errorf("overflow bucket %s", ov)
	}
}

// mk creates the parent id with fields through Create.
func mk[E any](ctx context.Context, s *Store[bson.D, E], id any, fields bson.D) error {
	_, err := s.Create(ctx, append(bson.D{{Key: "_id", Value: id}}, fields...))
	return err
}
