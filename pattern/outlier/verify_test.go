package outlier

import (
	"context"
	"slices"
	"testing"

	"go.mongodb.org/mongo-driver/v2/bson"

	"github.com/formworkdb/formwork/pattern/bucket"
)

// TestVerifyRepair breaks parents and overflow the ways the package
// documentation names, then checks Verify's findings and what Repair
// stores.
func TestVerifyRepair(t *testing.T) {
	ctx := context.Background()
	s, parents, overflow := newStore(t, Config{Threshold: 3, Overflow: bucket.Config{Size: 4}})
	for _, id := range []int{1, 2, 3, 4} {
		if err := mk(ctx, s, id, nil); err != nil {
			t.Fatal(err)
		}
	}
	for _, id := range []int{1, 2, 3, 4} {
		for _, u := range users(0, 6) {
			if _, err := s.Append(ctx, id, u); err != nil {
				t.Fatal(err)
			}
		}
	}
	r, err := s.Verify(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if len(r.Problems) != 0 || !r.OK() || r.Parents != 4 || r.Overflow.Elements != 12 {
		t.Fatalf("clean: %+v", r)
	}
	set := func(id int, upd bson.D) {
		t.Helper()
		if _, err := parents.UpdateOne(ctx, bson.D{{Key: "_id", Value: id}}, upd); err != nil {
			t.Fatal(err)
		}
	}
	// 1: a crash between the parent update and the overflow append.
	set(1, bson.D{{Key: "$inc", Value: bson.D{{Key: "count", Value: 1}}}})
	// 2: flag lost, which hides the overflow from GetAll.
	set(2, bson.D{{Key: "$set", Value: bson.D{{Key: "hasOverflow", Value: false}}}})
	// 3: an overflow bucket's count drifted; the parent is fine.
	if _, err := overflow.UpdateOne(ctx, bson.D{{Key: "parentId", Value: 3}}, bson.D{{Key: "$inc", Value: bson.D{{Key: "count", Value: 5}}}}); err != nil {
		t.Fatal(err)
	}
	// 4: embeds too many.
	set(4, bson.D{{Key: "$push", Value: bson.D{{Key: "items", Value: "extra"}}}, {Key: "$inc", Value: bson.D{{Key: "count", Value: 1}}}})
	// 5: a legacy parent without counter and flag, with overflow.
	if _, err := parents.InsertOne(ctx, bson.D{{Key: "_id", Value: 5}, {Key: "items", Value: bson.A{"a", "b", "c"}}}); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Overflow().AppendMany(ctx, 5, []string{"d", "e"}); err != nil {
		t.Fatal(err)
	}
	// 6: a legacy parent without list, counter or flag.
	if _, err := parents.InsertOne(ctx, bson.D{{Key: "_id", Value: 6}, {Key: "title", Value: "x"}}); err != nil {
		t.Fatal(err)
	}
	// 7: list is not an array.
	if _, err := parents.InsertOne(ctx, bson.D{{Key: "_id", Value: 7}, {Key: "items", Value: "oops"}, {Key: "count", Value: 0}, {Key: "hasOverflow", Value: false}}); err != nil {
		t.Fatal(err)
	}
	// 99: overflow without parent.
	if _, err := s.Overflow().Append(ctx, 99, "ghost"); err != nil {
		t.Fatal(err)
	}

	r, err = s.Verify(ctx)
	if err != nil {
		t.Fatal(err)
	}
	got := map[int32][]Kind{}
	for _, p := range r.Problems {
		got[p.Parent.Int32()] = append(got[p.Parent.Int32()], p.Kind)
	}
	want := map[int32][]Kind{
		1:  {KindCount},
		2:  {KindFlag},
		4:  {KindOverThreshold},
		5:  {KindCount, KindFlag},
		6:  {KindCount, KindFlag},
		7:  {KindShape},
		99: {KindOrphan},
	}
	for id, w := range want {
		if !slices.Equal(got[id], w) {
			t.Errorf("parent %d: problems %v, want %v", id, got[id], w)
		}
	}
	if len(got) != len(want) {
		t.Errorf("problems %v", got)
	}
	if len(r.Overflow.Problems) != 1 || r.Overflow.Problems[0].Kind != bucket.KindCount {
		t.Errorf("overflow problems %+v", r.Overflow.Problems)
	}

	r, err = s.Repair(ctx)
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range r.Problems {
		fixable := p.Kind == KindCount || p.Kind == KindFlag || p.Kind == KindOverThreshold
		if p.Repaired != fixable {
			t.Errorf("Repair: parent %v %v repaired %v", p.Parent, p.Kind, p.Repaired)
		}
	}
	if !r.Overflow.OK() {
		t.Errorf("overflow not repaired: %+v", r.Overflow.Problems)
	}
	// As stored.
	wantStored := map[int32]string{
		1: `{"count": {"$numberInt":"6"},"hasOverflow": true}`,
		2: `{"count": {"$numberInt":"6"},"hasOverflow": true}`,
		5: `{"count": {"$numberInt":"5"},"hasOverflow": true}`,
		6: `{"count": {"$numberInt":"0"},"hasOverflow": false,"items": []}`,
	}
	for id, w := range wantStored {
		d := raw(t, parents, bson.D{{Key: "_id", Value: id}})
		var g bson.D
		for _, k := range []string{"count", "hasOverflow", "items"} {
			if v, err := d.LookupErr(k); err == nil && (id == 6 || k != "items") {
				g = append(g, bson.E{Key: k, Value: v})
			}
		}
		raw, _ := bson.Marshal(g)
		if bson.Raw(raw).String() != w {
			t.Errorf("parent %d stored %s, want %s", id, bson.Raw(raw), w)
		}
	}
	p5, err := s.GetAll(ctx, 5)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(p5.Elements, []string{"a", "b", "c", "d", "e"}) {
		t.Errorf("adopted parent reads %v", p5.Elements)
	}
	r, err = s.Verify(ctx)
	if err != nil {
		t.Fatal(err)
	}
	var left []Kind
	for _, p := range r.Problems {
		left = append(left, p.Kind)
	}
	slices.Sort(left)
	if !slices.Equal(left, []Kind{KindShape, KindOrphan}) || len(r.Overflow.Problems) != 0 {
		t.Errorf("after Repair: %+v", r)
	}
	// Parent 4's excess moved to overflow: 3 embedded, 4 in overflow.
	p4, err := s.GetAll(ctx, 4)
	if err != nil {
		t.Fatal(err)
	}
	head, _ := s.Get(ctx, 4)
	if len(head.Elements) != 3 || len(p4.Elements) != 7 || p4.Count != 7 || !slices.Contains(p4.Elements, "extra") {
		t.Errorf("parent 4 after the move: embedded %v, all %v, count %d", head.Elements, p4.Elements, p4.Count)
	}
	// Appends keep working on repaired parents.
	if where, err := s.Append(ctx, 6, "first"); err != nil || where != Embedded {
		t.Errorf("append to adopted parent: %v, %v", where, err)
	}
}
