package pattern_test

import (
	"context"
	"errors"
	"sync"
	"testing"

	"go.mongodb.org/mongo-driver/v2/bson"

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
