package bucket

import (
	"context"
	"testing"

	"go.mongodb.org/mongo-driver/v2/bson"
)

// TestPagePlan checks that the page read, the newest page and a keyset
// page, is an IXSCAN on {owner: 1, openedAt: -1} with the owner bound to
// one point and no blocking SORT stage.
func TestPagePlan(t *testing.T) {
	ctx := context.Background()
	s, coll := newStore(t, Config{Size: 50})
	for _, owner := range []int{122, 123, 124} {
		fill(t, s, owner, 0, 260)
	}
	first, err := s.Page(ctx, 123, Cursor{})
	if err != nil {
		t.Fatal(err)
	}
	for name, cur := range map[string]Cursor{"newest": {}, "keyset": first.Next} {
		t.Run(name, func(t *testing.T) {
			res := explain(t, coll.Database(), bson.D{
				{Key: "find", Value: coll.Name()},
				{Key: "filter", Value: s.PageFilter(123, cur)},
				{Key: "sort", Value: s.PageSort()},
				{Key: "limit", Value: 1},
			})
			stages := planStages(t, res)
			if stageNamed(stages, "SORT") != nil {
				t.Errorf("plan has a SORT stage: %s", res.Lookup("queryPlanner", "winningPlan"))
			}
			ix := stageNamed(stages, "IXSCAN")
			if ix == nil {
				t.Fatalf("plan has no IXSCAN: %s", res.Lookup("queryPlanner", "winningPlan"))
			}
			if got := ix.Lookup("indexName").StringValue(); got != "owner_1_openedAt_-1" {
				t.Errorf("IXSCAN on %s", got)
			}
			if got := ix.Lookup("indexBounds", "owner").String(); got != `["[123, 123]"]` {
				t.Errorf("owner bounds %s", got)
			}
			if name == "keyset" {
				b := ix.Lookup("indexBounds", "openedAt").Array().Index(0).StringValue()
				want := "[new Date(" // [t, MinKey]: the keyset is a bound, not a filter
				if len(b) < len(want) || b[:len(want)] != want {
					t.Errorf("openedAt bounds %s, want from the cursor's date down", b)
				}
			}
			// One bucket returned, whatever the history length. The keyset
			// also examines the boundary bucket it excludes with $nin
			// (see Cursor): the price of not skipping openedAt ties.
			want := int64(1)
			if name == "keyset" {
				want = 2
			}
			if n := res.Lookup("executionStats", "totalDocsExamined").AsInt64(); n != want {
				t.Errorf("%d documents examined, want %d", n, want)
			}
			if n := res.Lookup("executionStats", "nReturned").AsInt64(); n != 1 {
				t.Errorf("%d documents returned, want 1", n)
			}
		})
	}
}

// TestFindPlan checks that Find uses the element index.
func TestFindPlan(t *testing.T) {
	s, coll := newStore(t, Config{Size: 10, ElementID: "id"})
	fill(t, s, 1, 0, 100)
	res := explain(t, coll.Database(), bson.D{
		{Key: "find", Value: coll.Name()},
		{Key: "filter", Value: s.elementFilter(1, "t42")},
		{Key: "projection", Value: bson.D{{Key: "elements.$", Value: 1}}},
	})
	ix := stageNamed(planStages(t, res), "IXSCAN")
	if ix == nil || ix.Lookup("indexName").StringValue() != "owner_1_elements.id_1" {
		t.Fatalf("plan %s", res.Lookup("queryPlanner", "winningPlan"))
	}
	if got := ix.Lookup("indexBounds", "elements.id").String(); got != `["[\"t42\", \"t42\"]"]` {
		t.Errorf("elements.id bounds %s", got)
	}
	if n := res.Lookup("executionStats", "totalDocsExamined").AsInt64(); n != 1 {
		t.Errorf("%d documents examined, want 1", n)
	}
}
