package versioning

import (
	"context"
	"strings"
	"testing"

	"go.mongodb.org/mongo-driver/v2/bson"
)

// TestCheck checks that Verify names the unreadable documents and counts
// the outdated ones, and that Check with repair migrates the outdated.
func TestCheck(t *testing.T) {
	ctx := context.Background()
	s, coll := contacts(t, Config{})
	seed(t, coll, 6)
	if _, err := coll.InsertMany(ctx, []any{
		bson.D{{Key: "_id", Value: 100}, {Key: "schemaVersion", Value: 9}},
		bson.D{{Key: "_id", Value: 101}, {Key: "schemaVersion", Value: "two"}},
		bson.D{{Key: "_id", Value: 102}, {Key: "schemaVersion", Value: 3}, {Key: "name", Value: 5}},
	}); err != nil {
		t.Fatal(err)
	}
	r, err := s.Verify(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if r.Checked != 9 || r.Problems != 3 || len(r.Details) != 4 || !strings.Contains(r.Details[3], "6 documents below version 3") {
		t.Fatalf("%+v", r)
	}
	r, err = s.Check(ctx, true)
	if err != nil {
		t.Fatal(err)
	}
	if r.Repaired != 6 || r.Problems != 3 || len(r.Details) != 3 {
		t.Errorf("repair %+v", r)
	}
}
