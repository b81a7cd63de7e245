package attribute

import (
	"context"
	"errors"
	"strings"
	"sync"
	"testing"
	"time"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo"

	"github.com/formworkdb/formwork/internal/testenv"
)

// newStore returns a Store of the given form over a fresh "products"
// collection, index made.
func newStore(t testing.TB, wildcard bool, cfg Config) (*Store[bson.D], *mongo.Collection) {
	t.Helper()
	coll := testenv.Database(t).Collection("products")
	mk := New[bson.D]
	if wildcard {
		mk = NewWildcard[bson.D]
	}
	s, err := mk(coll, cfg)
	if err != nil {
		t.Fatal(err)
	}
	if err := s.EnsureIndexes(context.Background()); err != nil {
		t.Fatal(err)
	}
	return s, coll
}

// stored returns the document _id id as stored, in canonical extended
// JSON without _id.
func stored(t testing.TB, coll *mongo.Collection, id any) string {
	t.Helper()
	var d bson.D
	if err := coll.FindOne(context.Background(), bson.D{{Key: "_id", Value: id}}).Decode(&d); err != nil {
		t.Fatal(err)
	}
	raw, err := bson.Marshal(d[1:])
	if err != nil {
		t.Fatal(err)
	}
	return bson.Raw(raw).String()
}

// names returns the names of the documents a filter finds, sorted by name.
func names(t testing.TB, s *Store[bson.D], f Filter) []string {
	t.Helper()
	ctx := context.Background()
	c, err := s.Cursor(ctx, f)
	if err != nil {
		t.Fatal(err)
	}
	var docs []struct {
		Name string `bson:"name"`
	}
	if err := c.All(ctx, &docs); err != nil {
		t.Fatal(err)
	}
	out := []string{}
	for _, d := range docs {
		out = append(out, d.Name)
	}
	return sorted(out)
}

func sorted(s []string) []string {
	for i := 1; i < len(s); i++ {
		for j := i; j > 0 && s[j] < s[j-1]; j-- {
			s[j], s[j-1] = s[j-1], s[j]
		}
	}
	return s
}

func TestConfigValidate(t *testing.T) {
	for _, c := range []struct {
		cfg      Config
		wildcard bool
		want     string
	}{
		{Config{}, false, ""},
		{Config{}, true, ""},
		{Config{Field: "specs", Key: "name", Value: "val", Kinds: map[string]Kind{"a.b": Number}}, false, ""},
		{Config{Kinds: map[string]Kind{"a.b": Number}}, true, "cannot be a field name"},
		{Config{Key: "k"}, true, "array form only"},
		{Config{Field: "a.b"}, false, "not a plain field name"},
		{Config{Key: "x", Value: "x"}, false, "both"},
		{Config{Kinds: map[string]Kind{"a": 9}}, false, "unknown"},
		{Config{Kinds: map[string]Kind{"": String}}, false, "empty"},
		{Config{NumericStrings: 7}, false, "policy"},
	} {
		err := c.cfg.validate(c.wildcard)
		if c.want == "" && err != nil {
			t.Errorf("%+v: %v", c.cfg, err)
		}
		if c.want != "" && (err == nil || !strings.Contains(err.Error(), c.want)) {
			t.Errorf("%+v wildcard=%v: got %v, want %q", c.cfg, c.wildcard, err, c.want)
		}
	}
	if _, err := New[bson.D](nil, Config{}); err == nil {
		t.Error("New(nil) succeeded")
	}
}

func TestInsertStoredShape(t *testing.T) {
	ctx := context.Background()
	at := time.Date(1977, 5, 20, 0, 0, 0, 0, time.UTC)
	for _, wildcard := range []bool{false, true} {
		s, coll := newStore(t, wildcard, Config{Kinds: map[string]Kind{"released": Date}})
		doc, err := s.Insert(ctx, bson.D{{Key: "_id", Value: 1}, {Key: "name", Value: "Water bottle"}},
			Attr{"color", "blue"}, Attr{"volumeMl", 500}, Attr{"weightKg", 0.2}, Attr{"released", at}, Attr{"dishwasher", true})
		if err != nil {
			t.Fatal(err)
		}
		if doc[0].Value != int32(1) || len(doc) != 3 || doc[2].Key != s.cfg.Field {
			t.Errorf("Insert returned %v", doc)
		}
		want := `{"name": "Water bottle","attrs": [{"k": "color","v": "blue"},{"k": "volumeMl","v": {"$numberInt":"500"}},{"k": "weightKg","v": {"$numberDouble":"0.2"}},{"k": "released","v": {"$date":{"$numberLong":"232934400000"}}},{"k": "dishwasher","v": true}]}`
		if wildcard {
			want = `{"name": "Water bottle","props": {"color": "blue","volumeMl": {"$numberInt":"500"},"weightKg": {"$numberDouble":"0.2"},"released": {"$date":{"$numberLong":"232934400000"}},"dishwasher": true}}`
		}
		if got := stored(t, coll, 1); got != want {
			t.Errorf("wildcard=%v stored\n%s\nwant\n%s", wildcard, got, want)
		}
		attrs, err := s.Attrs(ctx, 1)
		if err != nil {
			t.Fatal(err)
		}
		if len(attrs) != 5 || attrs[0] != (Attr{"color", "blue"}) || attrs[1] != (Attr{"volumeMl", int32(500)}) || attrs[3].Value != bson.DateTime(232934400000) {
			t.Errorf("Get: %#v", attrs)
		}
		for _, bad := range [][]Attr{
			{{"color", "blue"}, {"color", "red"}},
			{{"volumeMl", "500"}},
			{{"released", "1977-05-20"}},
			{{"nested", bson.D{{Key: "a", Value: 1}}}},
			{{"list", []int{1}}},
			{{"nothing", nil}},
		} {
			if _, err := s.Insert(ctx, bson.D{{Key: "name", Value: "bad"}}, bad...); err == nil {
				t.Errorf("wildcard=%v: Insert %v succeeded", wildcard, bad)
			}
		}
		if _, err := s.Insert(ctx, bson.D{{Key: s.cfg.Field, Value: 1}}); err == nil {
			t.Error("Insert of a document setting the attribute field succeeded")
		}
		if n, _ := coll.CountDocuments(ctx, bson.D{}); n != 1 {
			t.Errorf("%d documents after rejected inserts", n)
		}
	}
}

// TestElemMatchOnly shows the false positive the builder rules out: the
// separate form matches a red bottle because another attribute is "blue".
func TestElemMatchOnly(t *testing.T) {
	ctx := context.Background()
	s, coll := newStore(t, false, Config{})
	mustInsert := func(name string, attrs ...Attr) {
		t.Helper()
		if _, err := s.Insert(ctx, bson.D{{Key: "name", Value: name}}, attrs...); err != nil {
			t.Fatal(err)
		}
	}
	mustInsert("blue bottle", Attr{"color", "blue"}, Attr{"cap", "black"})
	mustInsert("red bottle", Attr{"color", "red"}, Attr{"cap", "blue"})
	mustInsert("capless", Attr{"color", "green"})

	n, err := coll.CountDocuments(ctx, bson.D{{Key: "attrs.k", Value: "color"}, {Key: "attrs.v", Value: "blue"}})
	if err != nil || n != 2 {
		t.Fatalf("separate form matched %d (%v); the false positive is the point", n, err)
	}
	if got := names(t, s, All(Where("color").Eq("blue"))); len(got) != 1 || got[0] != "blue bottle" {
		t.Errorf("color = blue: %v", got)
	}
	q, err := s.Filter(All(Where("color").Eq("blue")))
	if err != nil {
		t.Fatal(err)
	}
	raw, _ := bson.Marshal(q)
	if got := bson.Raw(raw).String(); got != `{"attrs": {"$elemMatch": {"k": "color","v": {"$eq": "blue"}}}}` {
		t.Errorf("compiled %s", got)
	}
	cases := []struct {
		f    Filter
		want []string
	}{
		{All(Where("cap")), []string{"blue bottle", "red bottle"}},
		{All(Where("cap").Ne("black")), []string{"red bottle"}},
		{All(Where("color").In("red", "green")), []string{"capless", "red bottle"}},
		{All(Where("color").Eq("red"), Where("cap").Eq("blue")), []string{"red bottle"}},
		{All(Where("color").Eq("blue"), Where("cap").Eq("blue")), []string{}},
		{Any(Where("color").Eq("green"), Where("cap").Eq("black")), []string{"blue bottle", "capless"}},
		{All(Where("color").Gte("c").Lt("h")), []string{"capless"}},
	}
	for _, c := range cases {
		if got := names(t, s, c.f); strings.Join(got, ",") != strings.Join(c.want, ",") {
			t.Errorf("%+v: %v, want %v", c.f, got, c.want)
		}
	}
	if _, err := s.Filter(All()); err == nil {
		t.Error("empty filter compiled")
	}
	if _, err := s.Filter(All(Where(""))); err == nil {
		t.Error("condition without a name compiled")
	}
	if _, err := s.Filter(All(Where("x").In())); err == nil {
		t.Error("$in without values compiled")
	}
	if c, err := s.Count(ctx, All(Where("color"))); err != nil || c != 3 {
		t.Errorf("Count: %d, %v", c, err)
	}
}

// TestTypedValues checks that a number given as a string is rejected or
// normalized, in writes and in queries, and never silently unmatched.
func TestTypedValues(t *testing.T) {
	ctx := context.Background()
	kinds := map[string]Kind{"volumeMl": Number, "zip": String, "color": String}

	strict, coll := newStore(t, false, Config{Kinds: kinds})
	if _, err := strict.Insert(ctx, bson.D{{Key: "_id", Value: 1}}, Attr{"volumeMl", "500"}); !errors.Is(err, ErrValue) {
		t.Errorf("Reject: insert of \"500\": %v", err)
	}
	if _, err := strict.Insert(ctx, bson.D{{Key: "_id", Value: 1}}, Attr{"undeclaredSize", " 42 "}); !errors.Is(err, ErrValue) {
		t.Errorf("Reject: undeclared numeric string: %v", err)
	}
	if _, err := strict.Insert(ctx, bson.D{{Key: "_id", Value: 1}}, Attr{"zip", "02134"}, Attr{"volumeMl", 500}, Attr{"code", "NaN"}); err != nil {
		t.Fatalf("a declared String keeps digits; NaN is no number: %v", err)
	}
	if _, err := strict.Filter(All(Where("volumeMl").Gte("400"))); !errors.Is(err, ErrValue) {
		t.Errorf("Reject: query with \"400\": %v", err)
	}
	if _, err := strict.Filter(All(Where("color").Eq(3))); !errors.Is(err, ErrValue) {
		t.Errorf("query of a String with a number: %v", err)
	}
	if err := strict.Replace(ctx, 1, "volumeMl", "600"); !errors.Is(err, ErrValue) {
		t.Errorf("Reject: replace with \"600\": %v", err)
	}
	if got := stored(t, coll, 1); got != `{"attrs": [{"k": "zip","v": "02134"},{"k": "volumeMl","v": {"$numberInt":"500"}},{"k": "code","v": "NaN"}]}` {
		t.Errorf("stored %s", got)
	}

	// What the checks prevent: a number stored as a string is invisible
	// to a range query.
	if _, err := coll.InsertOne(ctx, bson.D{{Key: "_id", Value: 2}, {Key: "attrs", Value: bson.A{bson.D{{Key: "k", Value: "volumeMl"}, {Key: "v", Value: "700"}}}}}); err != nil {
		t.Fatal(err)
	}
	if n, err := strict.Count(ctx, All(Where("volumeMl").Gte(400))); err != nil || n != 1 {
		t.Errorf("range over a string-typed number: %d (%v), want only the number", n, err)
	}

	norm, ncoll := newStore(t, false, Config{Kinds: kinds, NumericStrings: Normalize})
	if _, err := norm.Insert(ctx, bson.D{{Key: "_id", Value: 1}}, Attr{"volumeMl", "500"}, Attr{"weightKg", "0.25"}, Attr{"zip", "02134"}); err != nil {
		t.Fatal(err)
	}
	if got := stored(t, ncoll, 1); got != `{"attrs": [{"k": "volumeMl","v": {"$numberLong":"500"}},{"k": "weightKg","v": {"$numberDouble":"0.25"}},{"k": "zip","v": "02134"}]}` {
		t.Errorf("Normalize stored %s", got)
	}
	if n, err := norm.Count(ctx, All(Where("volumeMl").Gte("400"), Where("weightKg").Lt("1e0"))); err != nil || n != 1 {
		t.Errorf("Normalize query: %d, %v", n, err)
	}
	if err := norm.Replace(ctx, 1, "volumeMl", "-2.5e2"); err != nil {
		t.Fatal(err)
	}
	if n, _ := norm.Count(ctx, All(Where("volumeMl").Eq(-250))); n != 1 {
		t.Error("normalized replace not found as a number")
	}
	if _, err := norm.Insert(ctx, bson.D{}, Attr{"volumeMl", "lots"}); !errors.Is(err, ErrValue) {
		t.Errorf("non-numeric string for a Number: %v", err)
	}

	st, _ := newStore(t, false, Config{Kinds: kinds, Strict: true})
	if _, err := st.Insert(ctx, bson.D{}, Attr{"other", "x"}); !errors.Is(err, ErrUndeclared) {
		t.Errorf("Strict insert: %v", err)
	}
	if _, err := st.Filter(All(Where("other"))); !errors.Is(err, ErrUndeclared) {
		t.Errorf("Strict query: %v", err)
	}
}

func TestWriteVerbs(t *testing.T) {
	ctx := context.Background()
	for _, wildcard := range []bool{false, true} {
		s, coll := newStore(t, wildcard, Config{})
		if _, err := s.Insert(ctx, bson.D{{Key: "_id", Value: 1}}, Attr{"color", "blue"}); err != nil {
			t.Fatal(err)
		}
		steps := []struct {
			do   func() error
			want error
		}{
			{func() error { return s.Add(ctx, 1, "size", "L") }, nil},
			{func() error { return s.Add(ctx, 1, "size", "M") }, ErrExists},
			{func() error { return s.Replace(ctx, 1, "color", "red") }, nil},
			{func() error { return s.Replace(ctx, 1, "weight", 2) }, ErrMissing},
			{func() error { return s.Set(ctx, 1, "weight", 2) }, nil},
			{func() error { return s.Set(ctx, 1, "weight", 3) }, nil},
			{func() error { return s.Remove(ctx, 1, "size") }, nil},
			{func() error { return s.Remove(ctx, 1, "size") }, ErrMissing},
			{func() error { return s.Add(ctx, 404, "size", "L") }, ErrNotFound},
			{func() error { return s.Replace(ctx, 404, "size", "L") }, ErrNotFound},
			{func() error { return s.Remove(ctx, 404, "size") }, ErrNotFound},
			{func() error { return s.Set(ctx, 404, "size", "L") }, ErrNotFound},
			{func() error { return s.Add(ctx, 1, "n", "12") }, ErrValue},
		}
		for i, st := range steps {
			err := st.do()
			if st.want == nil && err != nil || st.want != nil && !errors.Is(err, st.want) {
				t.Errorf("wildcard=%v step %d: %v, want %v", wildcard, i, err, st.want)
			}
		}
		want := `{"attrs": [{"k": "color","v": "red"},{"k": "weight","v": {"$numberInt":"3"}}]}`
		if wildcard {
			want = `{"props": {"color": "red","weight": {"$numberInt":"3"}}}`
		}
		if got := stored(t, coll, 1); got != want {
			t.Errorf("wildcard=%v stored %s, want %s", wildcard, got, want)
		}
		if _, err := s.Get(ctx, 404); !errors.Is(err, ErrNotFound) {
			t.Errorf("Get of a missing document: %v", err)
		}
		if _, err := s.Attrs(ctx, 404); !errors.Is(err, ErrNotFound) {
			t.Errorf("Attrs of a missing document: %v", err)
		}
		// A document without attributes yet takes its first one.
		if _, err := coll.InsertOne(ctx, bson.D{{Key: "_id", Value: 2}}); err != nil {
			t.Fatal(err)
		}
		if err := s.Add(ctx, 2, "color", "blue"); err != nil {
			t.Fatal(err)
		}
		if n, _ := s.Count(ctx, All(Where("color").Eq("blue"))); n != 1 {
			t.Errorf("wildcard=%v: first attribute not found", wildcard)
		}
	}
}

// TestConcurrentAddsMakeNoDuplicate races Adds and Sets of one attribute:
// exactly one Add wins and the array holds one element for the key.
func TestConcurrentAddsMakeNoDuplicate(t *testing.T) {
	ctx := context.Background()
	s, coll := newStore(t, false, Config{})
	if _, err := s.Insert(ctx, bson.D{{Key: "_id", Value: 1}}); err != nil {
		t.Fatal(err)
	}
	const writers = 16
	var wg sync.WaitGroup
	var mu sync.Mutex
	wins, exists := 0, 0
	for w := range writers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			var err error
			if w%2 == 0 {
				err = s.Add(ctx, 1, "color", "blue")
			} else {
				err = s.Set(ctx, 1, "size", w)
			}
			mu.Lock()
			defer mu.Unlock()
			switch {
			case w%2 == 1 && err != nil:
				t.Errorf("Set: %v", err)
			case w%2 == 1:
			case err == nil:
				wins++
			case errors.Is(err, ErrExists):
				exists++
			default:
				t.Errorf("Add: %v", err)
			}
		}()
	}
	wg.Wait()
	if wins != 1 || exists != writers/2-1 {
		t.Errorf("%d Adds won, %d saw ErrExists", wins, exists)
	}
	attrs, err := s.Attrs(ctx, 1)
	if err != nil {
		t.Fatal(err)
	}
	count := map[string]int{}
	for _, a := range attrs {
		count[a.Name]++
	}
	if count["color"] != 1 || count["size"] != 1 || len(attrs) != 2 {
		t.Errorf("stored %s", stored(t, coll, 1))
	}
}

func TestEnsureIndexes(t *testing.T) {
	ctx := context.Background()
	for _, wildcard := range []bool{false, true} {
		s, coll := newStore(t, wildcard, Config{})
		if err := s.EnsureIndexes(ctx); err != nil { // idempotent
			t.Fatal(err)
		}
		c, err := coll.Indexes().List(ctx)
		if err != nil {
			t.Fatal(err)
		}
		var specs []bson.Raw
		if err := c.All(ctx, &specs); err != nil {
			t.Fatal(err)
		}
		want := `{"attrs.k": {"$numberInt":"1"},"attrs.v": {"$numberInt":"1"}}`
		if wildcard {
			want = `{"props.$**": {"$numberInt":"1"}}`
		}
		if len(specs) != 2 || specs[1].Lookup("key").String() != want {
			t.Errorf("wildcard=%v: indexes %v", wildcard, specs)
		}
	}
}
