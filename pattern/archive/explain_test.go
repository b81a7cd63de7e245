package archive_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"go.mongodb.org/mongo-driver/v2/bson"

	"github.com/formworkdb/formwork/internal/explaintest"
	"github.com/formworkdb/formwork/pattern/archive"
)

// TestSliceUsesIndex: a slice's copy $match and its delete scan the
// {createdAt: 1} index over exactly the slice's range, and examine no
// more keys than the slice holds.
func TestSliceUsesIndex(t *testing.T) {
	a := newArchiver(t, archive.Config{})
	loadOrders(t, a.Live(), 200)
	db := a.Live().Database()
	from, to := day0.Truncate(3*24*time.Hour), day0.Truncate(3*24*time.Hour).Add(3*24*time.Hour)
	f := bson.D{{Key: "createdAt", Value: bson.D{{Key: "$gte", Value: from}, {Key: "$lt", Value: to}}}}
	n, err := a.Live().CountDocuments(context.Background(), f)
	if err != nil {
		t.Fatal(err)
	}
	for name, cmd := range map[string]bson.D{
		"copy":   {{Key: "aggregate", Value: "orders"}, {Key: "pipeline", Value: bson.A{bson.D{{Key: "$match", Value: f}}}}, {Key: "cursor", Value: bson.D{}}},
		"delete": {{Key: "delete", Value: "orders"}, {Key: "deletes", Value: bson.A{bson.D{{Key: "q", Value: f}, {Key: "limit", Value: 0}}}}},
	} {
		r := explaintest.Run(t, db, cmd)
		if r.HasStage("COLLSCAN") || !r.Uses("createdAt_1") {
			t.Fatalf("%s: plan %s, want an IXSCAN of createdAt_1", name, r)
		}
		b := r.Bounds("createdAt_1", "createdAt")
		if len(b) != 1 || !strings.HasPrefix(b[0], "[new Date(") || !strings.HasSuffix(b[0], ")") || strings.HasSuffix(b[0], "])") {
			t.Fatalf("%s: bounds %q, want one [from, to) date interval", name, b)
		}
		if k := r.KeysExamined(); k > n+1 {
			t.Fatalf("%s: %d keys examined for a slice of %d", name, k, n)
		}
	}
}
