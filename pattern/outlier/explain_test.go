package outlier

import (
	"context"
	"fmt"
	"slices"
	"testing"

	"go.mongodb.org/mongo-driver/v2/bson"

	"github.com/formworkdb/formwork/internal/explaintest"
	"github.com/formworkdb/formwork/pattern/bucket"
)

// TestOverflowPlan checks that GetAll's overflow read, find({parentId})
// sorted by openedAt ascending, walks the overflow index backwards with
// the parent bound to one point and no SORT stage.
func TestOverflowPlan(t *testing.T) {
	ctx := context.Background()
	s, _, overflow := newStore(t, Config{Threshold: 2, Overflow: bucket.Config{Size: 3}})
	for id := range 5 {
		if err := mk(ctx, s, id, nil); err != nil {
			t.Fatal(err)
		}
		for u := range 20 {
			if _, err := s.Append(ctx, id, fmt.Sprintf("u%d", u)); err != nil {
				t.Fatal(err)
			}
		}
	}
	res := explaintest.Run(t, overflow.Database(), bson.D{
		{Key: "find", Value: overflow.Name()},
		{Key: "filter", Value: bson.D{{Key: "parentId", Value: 3}}},
		{Key: "sort", Value: bson.D{{Key: "openedAt", Value: 1}}},
	})
	if res.HasStage("SORT") {
		t.Errorf("overflow read sorts in memory: %v", res)
	}
	ix := res.MustStage("IXSCAN")
	if ix.Index != "parentId_1_openedAt_-1" {
		t.Errorf("index %s", ix.Index)
	}
	if got, _ := ix.Doc.Lookup("direction").StringValueOK(); got != "backward" {
		t.Errorf("direction %q", got)
	}
	if got := ix.Bounds("parentId"); !slices.Equal(got, []string{"[3, 3]"}) {
		t.Errorf("parentId bounds %q", got)
	}
	// 18 overflow elements in buckets of 3: six documents, nothing else.
	if n := res.DocsExamined(); n != 6 {
		t.Errorf("%d documents examined, want 6", n)
	}
}
