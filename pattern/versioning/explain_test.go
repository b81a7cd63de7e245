package versioning

import (
	"context"
	"testing"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo"

	"github.com/formworkdb/formwork/internal/explaintest"
)

// TestAnyOfPlan checks the read path during a migration: a condition on a
// field that lives at two paths compiles to $or, answered with one IXSCAN
// per path when both indexes exist, and with a collection scan when the
// old path's index is missing.
func TestAnyOfPlan(t *testing.T) {
	ctx := context.Background()
	_, coll := contacts(t, Config{})
	seed(t, coll, 300)
	if _, err := coll.Indexes().CreateOne(ctx, mongo.IndexModel{Keys: bson.D{{Key: "contactInfo.work", Value: 1}}}); err != nil {
		t.Fatal(err)
	}
	f := AnyOf("w7", "work", "contactInfo.work")
	explain := func() explaintest.Result {
		return explaintest.Run(t, coll.Database(), bson.D{{Key: "find", Value: coll.Name()}, {Key: "filter", Value: f}})
	}
	res := explain()
	if !res.HasStage("COLLSCAN") || res.NReturned() != 1 {
		t.Errorf("with one index: %s", res)
	}
	if _, err := coll.Indexes().CreateOne(ctx, mongo.IndexModel{Keys: bson.D{{Key: "work", Value: 1}}}); err != nil {
		t.Fatal(err)
	}
	res = explain()
	if !res.HasStage("OR") || !res.Uses("work_1") || !res.Uses("contactInfo.work_1") || res.HasStage("COLLSCAN") {
		t.Errorf("with both indexes: %s", res)
	}
	if res.NReturned() != 1 || res.DocsExamined() != 1 {
		t.Errorf("returned %d, examined %d", res.NReturned(), res.DocsExamined())
	}
}

// TestBatchQueryPlan checks Migrate's batch query: a walk of the _id index
// from the last _id done, with no sort stage, examining about a batch of
// documents rather than the collection.
func TestBatchQueryPlan(t *testing.T) {
	s, coll := contacts(t, Config{})
	seed(t, coll, 600)
	last := bson.RawValue{Type: bson.TypeInt32, Value: bsoncoreInt32(299)}
	res := explaintest.Run(t, coll.Database(), bson.D{{Key: "find", Value: coll.Name()}, {Key: "filter", Value: s.batchFilter(last)},
		{Key: "sort", Value: byID}, {Key: "hint", Value: byID}, {Key: "limit", Value: 50}})
	ix := res.MustStage("IXSCAN")
	if ix.Index != "_id_" || res.HasStage("SORT") || res.HasStage("COLLSCAN") {
		t.Errorf("plan %s", res)
	}
	if b := ix.Bounds("_id"); len(b) != 1 || b[0] != "(299, inf.0]" {
		t.Errorf("bounds %v", b)
	}
	if d := res.DocsExamined(); d > 60 {
		t.Errorf("%d documents examined for a batch of 50", d)
	}
}

// bsoncoreInt32 encodes v as a BSON int32 value.
func bsoncoreInt32(v int32) []byte {
	return []byte{byte(v), byte(v >> 8), byte(v >> 16), byte(v >> 24)}
}
