package outlier

import (
	"context"
	"fmt"
	"testing"

	"go.mongodb.org/mongo-driver/v2/bson"

	"github.com/formworkdb/formwork/pattern/bucket"
)

// TestOverflowPlan checks that GetAll's overflow read, find({parentId})
// sorted by openedAt ascending, walks the overflow index backwards with
// the parent bound to one point and no SORT stage.
func TestOverflowPlan(t *testing.T) {
	ctx := context.Background()
	s, _, overflow := newStore(t, Config{Threshold: 2, Overflow: bucket.Config{Size: 3}})
	for id := range 5 {
		if err := s.Create(ctx, id, nil); err != nil {
			t.Fatal(err)
		}
		for u := range 20 {
			if _, err := s.Append(ctx, id, fmt.Sprintf("u%d", u)); err != nil {
				t.Fatal(err)
			}
		}
	}
	var res bson.Raw
	err := overflow.Database().RunCommand(ctx, bson.D{
		{Key: "explain", Value: bson.D{
			{Key: "find", Value: overflow.Name()},
			{Key: "filter", Value: bson.D{{Key: "parentId", Value: 3}}},
			{Key: "sort", Value: bson.D{{Key: "openedAt", Value: 1}}},
		}},
		{Key: "verbosity", Value: "executionStats"},
	}).Decode(&res)
	if err != nil {
		t.Fatal(err)
	}
	plan := res.Lookup("queryPlanner", "winningPlan").Document()
	if qp, ok := plan.Lookup("queryPlan").DocumentOK(); ok {
		plan = qp
	}
	var ix bson.Raw
	for st := plan; st != nil; {
		switch st.Lookup("stage").StringValue() {
		case "SORT":
			t.Errorf("overflow read sorts in memory: %s", plan)
		case "IXSCAN":
			ix = st
		}
		next, ok := st.Lookup("inputStage").DocumentOK()
		if !ok {
			break
		}
		st = next
	}
	if ix == nil {
		t.Fatalf("no IXSCAN: %s", plan)
	}
	if got := ix.Lookup("indexName").StringValue(); got != "parentId_1_openedAt_-1" {
		t.Errorf("index %s", got)
	}
	if got := ix.Lookup("direction").StringValue(); got != "backward" {
		t.Errorf("direction %s", got)
	}
	if got := ix.Lookup("indexBounds", "parentId").String(); got != `["[3, 3]"]` {
		t.Errorf("parentId bounds %s", got)
	}
	// 18 overflow elements in buckets of 3: six documents, nothing else.
	if n := res.Lookup("executionStats", "totalDocsExamined").AsInt64(); n != 6 {
		t.Errorf("%d documents examined, want 6", n)
	}
}
