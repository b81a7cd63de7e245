package bucket

import (
	"context"
	"slices"
	"testing"

	"go.mongodb.org/mongo-driver/v2/bson"
)

// TestVerifyRepair breaks buckets the ways the pattern's documentation
// names and checks what Verify reports and what Repair stores.
func TestVerifyRepair(t *testing.T) {
	ctx := context.Background()
	s, coll := newStore(t, Config{Size: 4, ElementID: "id"})
	fill(t, s, 1, 0, 10) // buckets of 4, 4, 2
	r, err := s.Verify(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if r.Buckets != 3 || r.Elements != 10 || len(r.Problems) != 0 || !r.OK() {
		t.Fatalf("clean collection: %+v", r)
	}

	// A $pull without $inc: {count: -1} leaves count too high.
	if _, err := coll.UpdateOne(ctx, bson.D{{Key: "elements.id", Value: "t1"}},
		bson.D{{Key: "$pull", Value: bson.D{{Key: "elements", Value: bson.D{{Key: "id", Value: "t1"}}}}}}); err != nil {
		t.Fatal(err)
	}
	// A count lost, one of another type, an oversized bucket, a broken one.
	mustInsert := func(d bson.D) {
		t.Helper()
		if _, err := coll.InsertOne(ctx, d); err != nil {
			t.Fatal(err)
		}
	}
	at := s.cfg.Clock()
	mustInsert(bson.D{{Key: "_id", Value: "nocount"}, {Key: "owner", Value: 2}, {Key: "openedAt", Value: at},
		{Key: "elements", Value: bson.A{bson.D{{Key: "id", Value: "x"}}}}})
	mustInsert(bson.D{{Key: "_id", Value: "strcount"}, {Key: "owner", Value: 2}, {Key: "openedAt", Value: at},
		{Key: "count", Value: "1"}, {Key: "elements", Value: bson.A{bson.D{{Key: "id", Value: "y"}}}}})
	mustInsert(bson.D{{Key: "_id", Value: "double"}, {Key: "owner", Value: 2}, {Key: "openedAt", Value: at},
		{Key: "count", Value: 1.0}, {Key: "elements", Value: bson.A{bson.D{{Key: "id", Value: "z"}}}}})
	five := bson.A{}
	for range 5 {
		five = append(five, bson.D{{Key: "id", Value: "o"}})
	}
	mustInsert(bson.D{{Key: "_id", Value: "over"}, {Key: "owner", Value: 3}, {Key: "openedAt", Value: at},
		{Key: "count", Value: int32(5)}, {Key: "elements", Value: five}})
	mustInsert(bson.D{{Key: "_id", Value: "broken"}, {Key: "owner", Value: 3}, {Key: "count", Value: int32(1)},
		{Key: "elements", Value: "not an array"}})

	r, err = s.Verify(ctx)
	if err != nil {
		t.Fatal(err)
	}
	kinds := map[string][]Kind{}
	for _, p := range r.Problems {
		key := p.ID.String()
		if p.ID.Type == bson.TypeString {
			key = p.ID.StringValue()
		} else {
			key = "pulled"
		}
		kinds[key] = append(kinds[key], p.Kind)
		if p.Repaired {
			t.Errorf("Verify marked %s repaired", key)
		}
	}
	want := map[string][]Kind{
		"pulled":   {KindCount},
		"nocount":  {KindCount},
		"strcount": {KindCount},
		"over":     {KindOverSize},
		"broken":   {KindShape, KindShape},
	}
	if len(kinds) != len(want) {
		t.Errorf("problems %v, want %v", kinds, want)
	}
	for k, w := range want {
		if len(kinds[k]) != len(w) || kinds[k][0] != w[0] {
			t.Errorf("%s: problems %v, want %v", k, kinds[k], w)
		}
	}
	if r.OK() {
		t.Error("Report.OK with problems")
	}

	r, err = s.Repair(ctx)
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range r.Problems {
		if (p.Kind == KindCount || p.Kind == KindOverSize) != p.Repaired {
			t.Errorf("Repair: %s %v repaired=%v", p.ID, p.Kind, p.Repaired)
		}
	}
	// As stored: counts equal lengths, as int32; the others untouched.
	for _, d := range stored(t, coll, bson.D{}) {
		id := d.Lookup("_id")
		if id.Type == bson.TypeString && id.StringValue() == "broken" {
			continue
		}
		c := d.Lookup("count")
		n := arrayLen(d, "elements")
		if id.Type == bson.TypeString && id.StringValue() == "double" {
			if c.Type != bson.TypeDouble {
				t.Errorf("consistent double count rewritten: %v", c)
			}
			continue
		}
		if c.Type != bson.TypeInt32 || int(c.Int32()) != n {
			t.Errorf("%v: count %v, %d elements", id, c, n)
		}
	}
	r, err = s.Verify(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if len(r.Problems) != 2 { // broken ×2
		t.Errorf("after Repair: %+v", r.Problems)
	}
	// The oversized bucket was split: 4 kept, 1 moved to a new bucket.
	var sizes []int
	for _, d := range stored(t, coll, bson.D{{Key: "owner", Value: 3}, {Key: "elements", Value: bson.D{{Key: "$type", Value: "array"}}}}) {
		sizes = append(sizes, arrayLen(d, "elements"))
		if int(d.Lookup("count").Int32()) != arrayLen(d, "elements") {
			t.Errorf("split bucket %s", d)
		}
	}
	slices.Sort(sizes)
	if !slices.Equal(sizes, []int{1, 4}) {
		t.Errorf("owner 3 buckets after the split hold %v, want [1 4]", sizes)
	}

	// Per owner.
	r, err = s.VerifyOwner(ctx, 1)
	if err != nil {
		t.Fatal(err)
	}
	if r.Buckets != 3 || r.Elements != 9 || len(r.Problems) != 0 {
		t.Errorf("VerifyOwner(1): %+v", r)
	}
}

// TestRepairKeepsConcurrentAppend checks that Repair's conditional update
// does not overwrite a count an Append changed after Repair read it.
func TestRepairKeepsConcurrentAppend(t *testing.T) {
	ctx := context.Background()
	s, coll := newStore(t, Config{Size: 10, ElementID: "id"})
	fill(t, s, 1, 0, 3)
	if _, err := coll.UpdateOne(ctx, bson.D{}, bson.D{{Key: "$set", Value: bson.D{{Key: "count", Value: int32(9)}}}}); err != nil {
		t.Fatal(err)
	}
	var stale bson.Raw
	if err := coll.FindOne(ctx, bson.D{}).Decode(&stale); err != nil {
		t.Fatal(err)
	}
	// count 9 < Size, so an append still lands here: count 10, 4 elements.
	fill(t, s, 1, 3, 4)
	ok, err := s.recompute(ctx, stale)
	if err != nil || !ok {
		t.Fatalf("recompute: %v, %v", ok, err)
	}
	var d bson.Raw
	if err := coll.FindOne(ctx, bson.D{}).Decode(&d); err != nil {
		t.Fatal(err)
	}
	if d.Lookup("count").Int32() != 4 || arrayLen(d, "elements") != 4 {
		t.Errorf("after repair: %s", d)
	}
}
