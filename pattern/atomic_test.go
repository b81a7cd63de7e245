package pattern_test

import (
	"context"
	"errors"
	"testing"

	"go.mongodb.org/mongo-driver/v2/bson"

	"github.com/formworkdb/formwork/internal/testenv"
	"github.com/formworkdb/formwork/pattern"
)

// TestAtomic checks that Atomic runs its function once, and in a
// transaction exactly when the deployment has them.
func TestAtomic(t *testing.T) {
	ctx := context.Background()
	db := testenv.Database(t)
	want, err := pattern.Transactions(ctx, db.Client())
	if err != nil {
		t.Fatal(err)
	}
	runs := 0
	transacted, err := pattern.Atomic(ctx, db.Client(), func(ctx context.Context) error {
		runs++
		_, err := db.Collection("c").InsertOne(ctx, bson.D{{Key: "_id", Value: 1}})
		return err
	})
	if err != nil || runs != 1 || transacted != want {
		t.Fatalf("Atomic: transacted %v (want %v), runs %d, err %v", transacted, want, runs, err)
	}
	if n, _ := db.Collection("c").CountDocuments(ctx, bson.D{}); n != 1 {
		t.Fatalf("count %d after Atomic, want 1", n)
	}
	boom := errors.New("boom")
	if _, err := pattern.Atomic(ctx, db.Client(), func(context.Context) error { return boom }); !errors.Is(err, boom) {
		t.Fatalf("Atomic error %v, want boom", err)
	}
}
