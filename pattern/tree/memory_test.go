package tree_test

import (
	"context"
	"errors"
	"testing"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo"

	"github.com/formworkdb/formwork/pattern/tree"
)

// TestDescendantsMemoryLimit: $graphLookup holds its visited set in
// memory; past internalDocumentSourceGraphLookupMaxMemoryBytes MongoDB
// 7.0 fails with 40099 whatever allowDiskUse says. Descendants reports
// the server's error rather than a partial subtree.
func TestDescendantsMemoryLimit(t *testing.T) {
	ctx := context.Background()
	tr := books(t, tree.Config{})
	admin := tr.Collection().Database().Client().Database("admin")
	set := func(n int64) error {
		return admin.RunCommand(ctx, bson.D{{Key: "setParameter", Value: 1}, {Key: "internalDocumentSourceGraphLookupMaxMemoryBytes", Value: n}}).Err()
	}
	if err := set(100); err != nil {
		t.Fatal(err)
	}
	defer set(100 * 1024 * 1024)
	_, err := tr.Descendants(ctx, "Books", tree.Walk{})
	var se mongo.ServerError
	if !errors.As(err, &se) || !se.HasErrorCode(40099) {
		t.Fatalf("descendants over the memory limit: %v, want 40099", err)
	}
}
