package bucket

import (
	"context"
	"fmt"
	"sync"
	"testing"

	"go.mongodb.org/mongo-driver/v2/bson"
)

// TestAppendConcurrent runs appends for two owners from many goroutines
// and checks, on the stored buckets, that no element is lost or doubled,
// that no bucket passes Size and that count equals len(elements). Open
// buckets beyond one per owner can only come from racing upserts, so
// there are at most as many as writers.
func TestAppendConcurrent(t *testing.T) {
	ctx := context.Background()
	const (
		writers = 8
		each    = 60
		size    = 7
	)
	s, coll := newStore(t, Config{Size: size, ElementID: "id"})
	var wg sync.WaitGroup
	errs := make(chan error, writers)
	for w := range writers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range each {
				owner := i % 2
				if _, err := s.Append(ctx, owner, trade{ID: fmt.Sprintf("w%d-%d", w, i)}); err != nil {
					errs <- err
					return
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	seen := map[string]int{}
	open := map[int32]int{}
	for _, d := range stored(t, coll, bson.D{}) {
		n := arrayLen(d, "elements")
		c := d.Lookup("count").Int32()
		if int(c) != n {
			t.Errorf("bucket %v: count %d, %d elements", d.Lookup("_id"), c, n)
		}
		if n > size {
			t.Errorf("bucket %v: %d elements, Size %d", d.Lookup("_id"), n, size)
		}
		if n < size {
			open[d.Lookup("owner").Int32()]++
		}
		vals, _ := d.Lookup("elements").Array().Values()
		for _, v := range vals {
			seen[v.Document().Lookup("id").StringValue()]++
		}
	}
	if len(seen) != writers*each {
		t.Errorf("%d distinct elements stored, want %d", len(seen), writers*each)
	}
	for id, n := range seen {
		if n != 1 {
			t.Errorf("element %s stored %d times", id, n)
		}
	}
	for owner, n := range open {
		if n > writers {
			t.Errorf("owner %d has %d open buckets, more than %d writers could race to", owner, n, writers)
		}
	}
	r, err := s.Verify(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if len(r.Problems) != 0 || r.Elements != writers*each {
		t.Errorf("Verify: %+v", r)
	}
	// Reads see every element exactly once, doubles merged or not.
	for owner := range 2 {
		var n int
		for _, p := range pages(t, s, owner) {
			n += len(p.Elements)
		}
		if n != writers*each/2 {
			t.Errorf("owner %d: pages hold %d elements, want %d", owner, n, writers*each/2)
		}
	}
}
