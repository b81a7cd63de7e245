package subset

import (
	"context"
	"testing"

	"go.mongodb.org/mongo-driver/v2/bson"

	"github.com/formworkdb/formwork/pattern"
)

// TestSettleRepairsWriteSkew builds, by hand, each window that two
// concurrent writers touching different documents can leave behind, and
// checks that Settle with the finished change repairs it:
//
//   - an edit of a child outside the window, while a refill brought the
//     child in as it was;
//   - a delete of a child outside the window, while a refill brought the
//     deleted child in;
//   - a delete that refilled the window while another child in it was
//     edited (a Source's delete: Settle does not know what it wrote).
func TestSettleRepairsWriteSkew(t *testing.T) {
	ctx := context.Background()
	f := newFixture(t, reviewConfig())
	if tx, err := pattern.Transactions(ctx, f.db.Client()); err != nil || !tx {
		t.Skipf("Settle acts only where there are transactions (%v)", err)
	}
	f.product(t, "p1")
	for n := range 8 {
		f.add(t, "p1", n)
	}
	f.verifyOK(t)
	raw := func(id string) bson.Raw {
		t.Helper()
		r, err := f.reviews.FindOne(ctx, bson.D{{Key: "_id", Value: id}}).Raw()
		if err != nil {
			t.Fatal(err)
		}
		return r
	}
	// embed sets the window to the newest copies with the given child
	// copies in place of the current ones: a stale refill's result.
	embed := func(stale map[string]bson.Raw) {
		t.Helper()
		top, err := f.w.newest(ctx, "p1")
		if err != nil {
			t.Fatal(err)
		}
		for i, c := range top {
			if s, ok := stale[c.Lookup("_id").StringValue()]; ok {
				cp, err := f.w.copyOf(s)
				if err != nil {
					t.Fatal(err)
				}
				top[i] = cp
			}
		}
		if _, err := f.products.UpdateOne(ctx, bson.D{{Key: "_id", Value: "p1"}},
			bson.D{{Key: "$set", Value: bson.D{{Key: "recentReviews", Value: rawArray(top)}}}}); err != nil {
			t.Fatal(err)
		}
	}
	settle := func(c pattern.Change) {
		t.Helper()
		if rep, _ := f.w.Verify(ctx); rep.Found == 0 {
			t.Fatal("the hand-made window is not stale")
		}
		if err := f.w.Settle(ctx, c); err != nil {
			t.Fatal(err)
		}
		f.verifyOK(t)
	}

	// Edit outside the window; a delete's refill brings it in stale.
	before := raw("p1-r02")
	if _, err := f.reviews.UpdateOne(ctx, bson.D{{Key: "_id", Value: "p1-r02"}}, bson.D{{Key: "$set", Value: bson.D{{Key: "text", Value: "edited"}}}}); err != nil {
		t.Fatal(err)
	}
	after := raw("p1-r02")
	for _, id := range []string{"p1-r07", "p1-r06", "p1-r05"} {
		if _, err := f.reviews.DeleteOne(ctx, bson.D{{Key: "_id", Value: id}}); err != nil {
			t.Fatal(err)
		}
	}
	embed(map[string]bson.Raw{"p1-r02": before})
	settle(pattern.Change{Op: pattern.Update, Before: before, After: after})

	// Delete outside the window; a refill brings the deleted child in.
	gone := raw("p1-r00")
	if _, err := f.reviews.DeleteOne(ctx, bson.D{{Key: "_id", Value: "p1-r00"}}); err != nil {
		t.Fatal(err)
	}
	cp, err := f.w.copyOf(gone)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.products.UpdateOne(ctx, bson.D{{Key: "_id", Value: "p1"}},
		bson.D{{Key: "$push", Value: bson.D{{Key: "recentReviews", Value: cp}}}}); err != nil {
		t.Fatal(err)
	}
	settle(pattern.Change{Op: pattern.Delete, Before: gone})

	// A delete that refilled the window embedded another child as it
	// was before an edit.
	f.add(t, "p1", 9)
	old := raw("p1-r03")
	if _, err := f.reviews.UpdateOne(ctx, bson.D{{Key: "_id", Value: "p1-r03"}}, bson.D{{Key: "$set", Value: bson.D{{Key: "text", Value: "edited too"}}}}); err != nil {
		t.Fatal(err)
	}
	deleted := raw("p1-r09")
	if _, err := f.reviews.DeleteOne(ctx, bson.D{{Key: "_id", Value: "p1-r09"}}); err != nil {
		t.Fatal(err)
	}
	embed(map[string]bson.Raw{"p1-r03": old})
	settle(pattern.Change{Op: pattern.Delete, Before: deleted})
}
