package pattern_test

import (
	"context"
	"errors"
	"sync"
	"testing"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo"

	"github.com/formworkdb/formwork/internal/testenv"
	"github.com/formworkdb/formwork/pattern"
)

// recorder is a Dependent that keeps the sum of field n over the source,
// from the changes alone.
type recorder struct {
	mu  sync.Mutex
	sum int64
	ops map[pattern.Op]int
}

func (r *recorder) Name() string                            { return "recorder" }
func (r *recorder) EnsureIndexes(ctx context.Context) error { return nil }
func (r *recorder) Check(ctx context.Context, repair bool) (pattern.Result, error) {
	return pattern.Result{Name: r.Name()}, nil
}

func (r *recorder) Apply(ctx context.Context, c pattern.Change) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.ops == nil {
		r.ops = map[pattern.Op]int{}
	}
	r.ops[c.Op]++
	if c.Before != nil {
		r.sum -= c.Before.Lookup("n").AsInt64()
	}
	if c.After != nil {
		r.sum += c.After.Lookup("n").AsInt64()
	}
	return nil
}

type item struct {
	ID any   `bson:"_id,omitempty"`
	N  int64 `bson:"n"`
}

// TestSourceChanges checks that every write hands its exact before and
// after images to the Dependent, even under concurrent updates of one
// document: the running sum kept from the changes equals the real sum.
func TestSourceChanges(t *testing.T) {
	ctx := context.Background()
	db := testenv.Database(t)
	rec := &recorder{}
	src := pattern.NewSource[item](db.Collection("items"), rec)
	id, err := src.Insert(ctx, item{N: 5})
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := id.(bson.ObjectID); !ok {
		t.Fatalf("generated _id %T, want ObjectID", id)
	}
	if _, err := src.InsertMany(ctx, []item{{ID: "a", N: 1}, {ID: "b", N: 2}}); err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	for range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for range 10 {
				if _, err := src.Update(ctx, "a", bson.D{{Key: "$inc", Value: bson.D{{Key: "n", Value: 3}}}}); err != nil {
					t.Error(err)
					return
				}
			}
		}()
	}
	wg.Wait()
	got, err := src.Get(ctx, "a")
	if err != nil || got.N != 241 {
		t.Fatalf("a = %+v, %v; want n 241", got, err)
	}
	if err := src.Replace(ctx, "b", item{ID: "b", N: 10}); err != nil {
		t.Fatal(err)
	}
	if gone, err := src.Delete(ctx, id); err != nil || gone.N != 5 {
		t.Fatalf("delete: %+v, %v", gone, err)
	}
	if _, err := src.Delete(ctx, id); !errors.Is(err, pattern.ErrNotFound) {
		t.Fatalf("second delete: %v, want ErrNotFound", err)
	}
	if _, err := src.Update(ctx, "zz", bson.D{{Key: "$set", Value: bson.D{{Key: "n", Value: 1}}}}); !errors.Is(err, pattern.ErrNotFound) {
		t.Fatalf("update of a missing document: %v, want ErrNotFound", err)
	}
	if rec.sum != 251 {
		t.Fatalf("sum from changes %d, want 251", rec.sum)
	}
	if rec.ops[pattern.Insert] != 3 || rec.ops[pattern.Update] != 81 || rec.ops[pattern.Delete] != 1 {
		t.Fatalf("ops %v", rec.ops)
	}
}

// settler is a recorder that is also a Settler: it records the changes
// settled, and whether each came inside a session (it must not).
type settler struct {
	recorder
	settled   []pattern.Op
	inSession int
}

func (s *settler) Settle(ctx context.Context, c pattern.Change) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.settled = append(s.settled, c.Op)
	if mongo.SessionFromContext(ctx) != nil {
		s.inSession++
	}
	return nil
}

// TestSourceSettles checks that every write of a Source, and Applied,
// hands its change to a Settler once the write is over, outside the
// transaction, and that Applied inside the caller's session leaves the
// settling to the caller.
func TestSourceSettles(t *testing.T) {
	ctx := context.Background()
	db := testenv.Database(t)
	st := &settler{}
	src := pattern.NewSource[item](db.Collection("items"), st)
	if _, err := src.Insert(ctx, item{ID: "a", N: 1}); err != nil {
		t.Fatal(err)
	}
	if _, err := src.Update(ctx, "a", bson.D{{Key: "$inc", Value: bson.D{{Key: "n", Value: 1}}}}); err != nil {
		t.Fatal(err)
	}
	if err := src.Replace(ctx, "a", item{ID: "a", N: 7}); err != nil {
		t.Fatal(err)
	}
	if _, err := src.Delete(ctx, "a"); err != nil {
		t.Fatal(err)
	}
	if err := src.Applied(ctx, pattern.Change{Op: pattern.Delete, Before: bson.Raw(mustMarshal(t, item{ID: "b"}))}); err != nil {
		t.Fatal(err)
	}
	sess, err := db.Client().StartSession()
	if err != nil {
		t.Fatal(err)
	}
	defer sess.EndSession(ctx)
	if err := src.Applied(mongo.NewSessionContext(ctx, sess), pattern.Change{Op: pattern.Delete, Before: bson.Raw(mustMarshal(t, item{ID: "c"}))}); err != nil {
		t.Fatal(err)
	}
	want := []pattern.Op{pattern.Update, pattern.Update, pattern.Delete, pattern.Delete}
	if len(st.settled) != len(want) || st.inSession != 0 {
		t.Fatalf("settled %v (%d in a session), want %v outside", st.settled, st.inSession, want)
	}
	for i := range want {
		if st.settled[i] != want[i] {
			t.Fatalf("settled %v, want %v", st.settled, want)
		}
	}
}

func mustMarshal(t *testing.T, v any) []byte {
	t.Helper()
	b, err := bson.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return b
}
