package bucket

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"
	"testing"

	"go.mongodb.org/mongo-driver/v2/bson"
)

// TestRemove removes elements one by one and checks count, bounds, the
// first-of-duplicates rule, emptied buckets and appends after them.
func TestRemove(t *testing.T) {
	ctx := context.Background()
	s, coll := newTicks(t, 4)
	if _, err := s.AppendMany(ctx, "MDB", []bson.D{tickAt(1, 10), tickAt(2, 5), tickAt(3, 30), tickAt(2, 7)}); err != nil {
		t.Fatal(err)
	}
	check := func(wantIDs []int32, lo, hi int) {
		t.Helper()
		d := stored(t, coll.Collection, bson.D{})[0]
		var ids []int32
		vals, _ := d.Lookup("elements").Array().Values()
		for _, v := range vals {
			ids = append(ids, v.Document().Lookup("id").Int32())
		}
		if !slices.Equal(ids, wantIDs) || int(d.Lookup("count").Int32()) != len(wantIDs) {
			t.Errorf("elements %v count %v, want %v", ids, d.Lookup("count"), wantIDs)
		}
		_, gotLo, gotHi := bounds(d)
		if lo < 0 {
			if _, err := d.LookupErr("minTime"); err == nil {
				t.Errorf("empty bucket keeps bounds: %s", d)
			}
			return
		}
		if !gotLo.Equal(at(lo)) || !gotHi.Equal(at(hi)) {
			t.Errorf("bounds %v..%v, want %v..%v", gotLo, gotHi, at(lo), at(hi))
		}
	}
	// Removing the earliest tick narrows minTime; of two id 2, only the
	// first goes.
	if err := s.Remove(ctx, "MDB", 2); err != nil {
		t.Fatal(err)
	}
	check([]int32{1, 3, 2}, 7, 30)
	if err := s.Remove(ctx, "MDB", 3); err != nil {
		t.Fatal(err)
	}
	check([]int32{1, 2}, 7, 10)
	if err := s.Remove(ctx, "MDB", 99); !errors.Is(err, ErrNotFound) {
		t.Errorf("Remove of a missing id: %v", err)
	}
	if err := s.Remove(ctx, "other", 1); !errors.Is(err, ErrNotFound) {
		t.Errorf("Remove under another owner: %v", err)
	}
	for _, id := range []int{1, 2} {
		if err := s.Remove(ctx, "MDB", id); err != nil {
			t.Fatal(err)
		}
	}
	check(nil, -1, -1)
	// The emptied bucket is open and takes the next append, bounds anew.
	opened, err := s.Append(ctx, "MDB", tickAt(8, 80))
	if err != nil || opened {
		t.Fatalf("append after emptying: opened %v, %v", opened, err)
	}
	check([]int32{8}, 80, 80)
	// Replace moves the bounds with the element's time.
	if err := s.Replace(ctx, "MDB", 8, tickAt(8, 3)); err != nil {
		t.Fatal(err)
	}
	check([]int32{8}, 3, 3)
	if err := s.Update(ctx, "MDB", 8, bson.D{{Key: "at", Value: at(1)}}); err == nil {
		t.Error("Update of the time field succeeded")
	}
	plain, _ := newStore(t, Config{Size: 3})
	if err := plain.Remove(ctx, 1, "x"); !errors.Is(err, ErrInvalidConfig) {
		t.Errorf("Remove without ElementID: %v", err)
	}
	r, err := s.Verify(ctx)
	if err != nil || !r.OK() {
		t.Errorf("Verify: %+v, %v", r, err)
	}
}

// TestRemoveConcurrent appends and removes for one owner from many
// goroutines, each removing a share of what it appended, and checks the
// stored result: exactly the survivors, once each, count and bounds
// exact (Verify clean), no bucket past Size.
func TestRemoveConcurrent(t *testing.T) {
	ctx := context.Background()
	const (
		writers = 6
		each    = 40
		size    = 5
	)
	s, coll := newTicks(t, size)
	var wg sync.WaitGroup
	errs := make(chan error, writers)
	for w := range writers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range each {
				id := w*1000 + i
				if _, err := s.Append(ctx, "MDB", tickAt(id, id)); err != nil {
					errs <- err
					return
				}
				// Remove every other element, one step behind.
				if i%2 == 1 {
					if err := s.Remove(ctx, "MDB", id-1); err != nil {
						errs <- fmt.Errorf("remove %d: %w", id-1, err)
						return
					}
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	seen := map[int32]int{}
	for _, d := range stored(t, coll.Collection, bson.D{}) {
		if n := arrayLen(d, "elements"); n > size || int(d.Lookup("count").Int32()) != n {
			t.Errorf("bucket %s", d)
		}
		vals, _ := d.Lookup("elements").Array().Values()
		for _, v := range vals {
			seen[v.Document().Lookup("id").Int32()]++
		}
	}
	if len(seen) != writers*each/2 {
		t.Errorf("%d elements survive, want %d", len(seen), writers*each/2)
	}
	for id, n := range seen {
		if id%2 == 0 || n != 1 {
			t.Errorf("element %d stored %d times", id, n)
		}
	}
	r, err := s.Verify(ctx)
	if err != nil || len(r.Problems) != 0 {
		t.Errorf("Verify: %+v, %v", r, err)
	}
}

// TestVerifyRepairBounds breaks bounds and checks Verify names them and
// Repair recomputes them.
func TestVerifyRepairBounds(t *testing.T) {
	ctx := context.Background()
	s, coll := newTicks(t, 4)
	if _, err := s.AppendMany(ctx, "MDB", []bson.D{tickAt(1, 10), tickAt(2, 20)}); err != nil {
		t.Fatal(err)
	}
	if _, err := s.AppendMany(ctx, "XYZ", []bson.D{tickAt(1, 10), tickAt(2, 20)}); err != nil {
		t.Fatal(err)
	}
	// A $push written outside the Store: maxTime too low, count too.
	if _, err := coll.UpdateOne(ctx, bson.D{{Key: "owner", Value: "MDB"}},
		bson.D{{Key: "$push", Value: bson.D{{Key: "elements", Value: tickAt(3, 99)}}}}); err != nil {
		t.Fatal(err)
	}
	// A lost bound: Range would never find the bucket.
	if _, err := coll.UpdateOne(ctx, bson.D{{Key: "owner", Value: "XYZ"}},
		bson.D{{Key: "$unset", Value: bson.D{{Key: "minTime", Value: ""}}}}); err != nil {
		t.Fatal(err)
	}
	r, err := s.Verify(ctx)
	if err != nil {
		t.Fatal(err)
	}
	var kinds []Kind
	for _, p := range r.Problems {
		kinds = append(kinds, p.Kind)
	}
	slices.Sort(kinds)
	if !slices.Equal(kinds, []Kind{KindCount, KindBounds, KindBounds}) {
		t.Errorf("problems %v", r.Problems)
	}
	if r, err = s.Repair(ctx); err != nil || !r.OK() {
		t.Fatalf("Repair: %+v, %v", r, err)
	}
	if r, err = s.Verify(ctx); err != nil || len(r.Problems) != 0 {
		t.Errorf("after Repair: %+v, %v", r, err)
	}
	got, err := s.Range(ctx, "MDB", at(90), at(100))
	if err != nil || len(got) != 1 {
		t.Errorf("Range after Repair: %v, %v", got, err)
	}
}

// TestLoad bulk-loads a history into new buckets and checks shape,
// bounds and that appends continue after it.
func TestLoad(t *testing.T) {
	ctx := context.Background()
	s, coll := newTicks(t, 4)
	var es []bson.D
	for i := range 10 {
		es = append(es, tickAt(i, 100-i))
	}
	ids, err := s.Load(ctx, "MDB", es)
	if err != nil || len(ids) != 3 {
		t.Fatalf("Load: %v, %v", ids, err)
	}
	var counts []int32
	for _, d := range stored(t, coll.Collection, bson.D{}) {
		counts = append(counts, d.Lookup("count").Int32())
	}
	slices.Sort(counts)
	if !slices.Equal(counts, []int32{2, 4, 4}) {
		t.Errorf("counts %v", counts)
	}
	if r, err := s.Verify(ctx); err != nil || len(r.Problems) != 0 || r.Elements != 10 {
		t.Errorf("Verify: %+v, %v", r, err)
	}
	got, err := s.Range(ctx, "MDB", at(95), at(101))
	if err != nil || len(got) != 6 {
		t.Errorf("Range over the load: %d, %v", len(got), err)
	}
	if _, err := s.Load(ctx, "MDB", []bson.D{{{Key: "id", Value: 1}}}); err == nil {
		t.Error("Load of an element without a time succeeded")
	}
}
