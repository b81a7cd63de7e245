package attribute

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"

	"go.mongodb.org/mongo-driver/v2/bson"

	"github.com/formworkdb/formwork/internal/testenv"
	"github.com/formworkdb/formwork/pattern"
)

// book is a typed document holding its specs as []Attr.
type book struct {
	ID    bson.ObjectID `bson:"_id,omitempty"`
	Title string        `bson:"title"`
	Specs []Attr        `bson:"specs"`
	Price float64       `bson:"price"`
}

// bookStore returns a Store[book] on a monitored client.
func bookStore(t *testing.T, cfg Config) (*Store[book], *testenv.Counter) {
	t.Helper()
	db, count := testenv.Monitored(t)
	if cfg.Field == "" {
		cfg.Field = "specs"
	}
	s, err := New[book](db.Collection("books"), cfg)
	if err != nil {
		t.Fatal(err)
	}
	if err := s.EnsureIndexes(context.Background()); err != nil {
		t.Fatal(err)
	}
	return s, count
}

func TestTypedStore(t *testing.T) {
	ctx := context.Background()
	s, _ := bookStore(t, Config{Kinds: map[string]Kind{"pages": Number}, NumericStrings: Normalize})
	b, err := s.Insert(ctx, book{Title: "Dune", Specs: []Attr{{"format", "paperback"}}, Price: 9.5}, Attr{"pages", "896"})
	if err != nil {
		t.Fatal(err)
	}
	if b.ID.IsZero() || len(b.Specs) != 2 || b.Specs[1] != (Attr{"pages", int64(896)}) {
		t.Fatalf("Insert returned %+v, want an _id and the normalized pages", b)
	}
	got, err := s.Get(ctx, b.ID)
	if err != nil || got.Title != "Dune" || got.Price != 9.5 || len(got.Specs) != 2 {
		t.Fatalf("Get: %+v, %v", got, err)
	}
	// Fields keep their place: the attribute field stays where the struct has it.
	raw, _ := s.Collection().FindOne(ctx, bson.D{}).Raw()
	elems, _ := raw.Elements()
	if len(elems) != 4 || elems[2].Key() != "specs" {
		t.Fatalf("stored %v", raw)
	}
	// A nil slice (null) holds no attributes.
	empty, err := s.Insert(ctx, book{Title: "Blank"})
	if err != nil || len(empty.Specs) != 0 {
		t.Fatalf("Insert without specs: %+v, %v", empty, err)
	}
	if err := s.Add(ctx, empty.ID, "format", "ebook"); err != nil {
		t.Fatal(err)
	}
	for _, bad := range []book{
		{Specs: []Attr{{"format", "a"}, {"format", "b"}}},
		{Specs: []Attr{{"pages", "many"}}},
		{Specs: []Attr{{"", 1}}},
		{Specs: []Attr{{"x", []int{1}}}},
	} {
		if _, err := s.Insert(ctx, bad); err == nil {
			t.Errorf("Insert of %+v succeeded", bad)
		}
	}
	found, err := s.Find(ctx, All(Where("pages").Gte(800)))
	if err != nil || len(found) != 1 || found[0].Title != "Dune" {
		t.Fatalf("Find: %+v, %v", found, err)
	}

	// A custom element shape is checked against the struct's.
	custom, err := New[book](s.Collection(), Config{Field: "specs", Key: "name", Value: "value"})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := custom.Insert(ctx, book{Specs: []Attr{{"format", "x"}}}); err == nil {
		t.Error("custom Key/Value: an element stored as {k, v} was accepted")
	}
}

func TestValueAndErrors(t *testing.T) {
	ctx := context.Background()
	for _, wildcard := range []bool{false, true} {
		s, _ := newStore(t, wildcard, Config{})
		if _, err := s.Insert(ctx, bson.D{{Key: "_id", Value: 1}}, Attr{"color", "blue"}, Attr{"size", 3}); err != nil {
			t.Fatal(err)
		}
		if v, err := s.Value(ctx, 1, "size"); err != nil || v != int32(3) {
			t.Errorf("wildcard=%v: Value size = %v, %v", wildcard, v, err)
		}
		_, err := s.Value(ctx, 1, "weight")
		if !errors.Is(err, ErrMissing) || !errors.Is(err, pattern.ErrNotFound) {
			t.Errorf("wildcard=%v: Value of a missing attribute: %v, want ErrMissing (an ErrNotFound)", wildcard, err)
		}
		_, err = s.Value(ctx, 404, "size")
		if !errors.Is(err, ErrNotFound) || errors.Is(err, ErrMissing) {
			t.Errorf("wildcard=%v: Value of a missing document: %v, want ErrNotFound only", wildcard, err)
		}
		if err := s.Remove(ctx, 1, "weight"); !errors.Is(err, ErrMissing) {
			t.Errorf("Remove: %v", err)
		}
		if err := s.Remove(ctx, 404, "weight"); !errors.Is(err, ErrNotFound) || errors.Is(err, ErrMissing) {
			t.Errorf("Remove of a missing document: %v", err)
		}
	}
	if err := (Config{Field: "a.b"}).Validate(); !errors.Is(err, ErrInvalidConfig) || !errors.Is(err, pattern.ErrInvalidConfig) {
		t.Errorf("Validate: %v, want ErrInvalidConfig", err)
	}
}

// TestInsertManyOneWrite checks the bulk load: every document checked
// first, then one insert command.
func TestInsertManyOneWrite(t *testing.T) {
	ctx := context.Background()
	s, count := bookStore(t, Config{Kinds: map[string]Kind{"pages": Number}})
	var docs []book
	for i := range 300 {
		docs = append(docs, book{Title: fmt.Sprint("b", i), Specs: []Attr{{"pages", 100 + i}, {"format", []string{"ebook", "paperback"}[i%2]}}})
	}
	count.Reset()
	got, err := s.InsertMany(ctx, docs)
	if err != nil || len(got) != 300 || got[299].ID.IsZero() {
		t.Fatalf("InsertMany: %d, %v", len(got), err)
	}
	if n := count.Commands(); n != 1 {
		t.Errorf("%d commands, want one insert", n)
	}
	if n, _ := s.Count(ctx, All(Where("format").Eq("ebook"), Where("pages").Lt(200))); n != 50 {
		t.Errorf("ebooks under 200 pages: %d, want 50", n)
	}
	docs[7].Specs = append(docs[7].Specs, Attr{"pages", "12"})
	count.Reset()
	if _, err := s.InsertMany(ctx, docs); !errors.Is(err, ErrExists) {
		t.Errorf("InsertMany with a duplicate attribute: %v", err)
	}
	if n := count.Commands(); n != 0 {
		t.Errorf("a refused load sent %d commands", n)
	}
	if got, err := s.InsertMany(ctx, nil); err != nil || got != nil {
		t.Errorf("empty load: %v, %v", got, err)
	}
}

// TestConcurrentSetRemove races Sets and Removes of one attribute with
// Sets of others: no key is ever stored twice, and every other
// attribute set survives.
func TestConcurrentSetRemove(t *testing.T) {
	ctx := context.Background()
	s, _ := bookStore(t, Config{})
	b, err := s.Insert(ctx, book{Title: "Dune"})
	if err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	errs := make(chan error, 8)
	for w := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range 15 {
				var err error
				switch {
				case w%2 == 0:
					err = s.Set(ctx, b.ID, "format", fmt.Sprint(w, i))
				case i%2 == 0:
					err = s.Remove(ctx, b.ID, "format")
					if errors.Is(err, ErrMissing) {
						err = nil
					}
				default:
					err = s.Set(ctx, b.ID, fmt.Sprint("k", w), i)
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
	attrs, err := s.Attrs(ctx, b.ID)
	if err != nil {
		t.Fatal(err)
	}
	seen := map[string]int{}
	for _, a := range attrs {
		seen[a.Name]++
	}
	for name, n := range seen {
		if n != 1 {
			t.Errorf("%q stored %d times", name, n)
		}
	}
	for _, w := range []int{1, 3, 5, 7} {
		if v, err := s.Value(ctx, b.ID, fmt.Sprint("k", w)); err != nil || v != int32(13) {
			t.Errorf("k%d = %v, %v; want its last Set, 13", w, v, err)
		}
	}
}
