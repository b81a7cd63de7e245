package bucket

import (
	"context"
	"slices"
	"strings"
	"testing"

	"go.mongodb.org/mongo-driver/v2/bson"

	"github.com/formworkdb/formwork/internal/explaintest"
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
			res := explaintest.Run(t, coll.Database(), bson.D{
				{Key: "find", Value: coll.Name()},
				{Key: "filter", Value: s.PageFilter(123, cur)},
				{Key: "sort", Value: s.PageSort()},
				{Key: "limit", Value: 1},
			})
			if res.HasStage("SORT") {
				t.Errorf("plan has a SORT stage: %v", res)
			}
			ix := res.MustStage("IXSCAN")
			if ix.Index != "owner_1_openedAt_-1" {
				t.Errorf("IXSCAN on %s", ix.Index)
			}
			if got := ix.Bounds("owner"); !slices.Equal(got, []string{"[123, 123]"}) {
				t.Errorf("owner bounds %q", got)
			}
			if name == "keyset" {
				b := ix.Bounds("openedAt")
				// [t, MinKey]: the keyset is a bound, not a filter.
				if len(b) == 0 || !strings.HasPrefix(b[0], "[new Date(") {
					t.Errorf("openedAt bounds %q, want from the cursor's date down", b)
				}
			}
			// One bucket returned, whatever the history length. The keyset
			// also examines the boundary bucket it excludes with $nin
			// (see Cursor): the price of not skipping openedAt ties.
			want := int64(1)
			if name == "keyset" {
				want = 2
			}
			if n := res.DocsExamined(); n != want {
				t.Errorf("%d documents examined, want %d", n, want)
			}
			if n := res.NReturned(); n != 1 {
				t.Errorf("%d documents returned, want 1", n)
			}
		})
	}
}

// TestFindPlan checks that Find uses the element index.
func TestFindPlan(t *testing.T) {
	s, coll := newStore(t, Config{Size: 10, ElementID: "id"})
	fill(t, s, 1, 0, 100)
	res := explaintest.Run(t, coll.Database(), bson.D{
		{Key: "find", Value: coll.Name()},
		{Key: "filter", Value: s.elementFilter(1, "t42")},
		{Key: "projection", Value: bson.D{{Key: "elements.$", Value: 1}}},
	})
	ix, ok := res.Stage("IXSCAN")
	if !ok || ix.Index != "owner_1_elements.id_1" {
		t.Fatalf("plan %v", res)
	}
	if got := ix.Bounds("elements.id"); !slices.Equal(got, []string{`["t42", "t42"]`}) {
		t.Errorf("elements.id bounds %q", got)
	}
	if n := res.DocsExamined(); n != 1 {
		t.Errorf("%d documents examined, want 1", n)
	}
}
