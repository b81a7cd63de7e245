package outlier

import (
	"context"
	"fmt"
	"sync"
	"testing"

	"go.mongodb.org/mongo-driver/v2/bson"

	"github.com/formworkdb/formwork/pattern/bucket"
)

// TestAppendConcurrent appends to one parent from many goroutines across
// the threshold and checks the stored result: exactly Threshold embedded,
// the rest in overflow buckets, each element once, the counter the total,
// the flag set, and Verify clean.
func TestAppendConcurrent(t *testing.T) {
	ctx := context.Background()
	const (
		writers   = 8
		each      = 40
		threshold = 50
	)
	s, parents, overflow := newStore(t, Config{Threshold: threshold, Overflow: bucket.Config{Size: 30}})
	for _, id := range []int{1, 2} {
		if err := mk(ctx, s, id, nil); err != nil {
			t.Fatal(err)
		}
	}
	var wg sync.WaitGroup
	var mu sync.Mutex
	placed := map[Placement]int{}
	errs := make(chan error, writers)
	for w := range writers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range each {
				// Parent 2 stays small: 8 writers × 1 element.
				id := 1
				if i == 0 {
					id = 2
				}
				where, err := s.Append(ctx, id, fmt.Sprintf("w%d-%d", w, i))
				if err != nil {
					errs <- err
					return
				}
				if id == 1 {
					mu.Lock()
					placed[where]++
					mu.Unlock()
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	total := writers * (each - 1)
	if placed[Embedded] != threshold || placed[Overflowed] != total-threshold {
		t.Errorf("placements %v, want %d embedded and %d overflowed", placed, threshold, total-threshold)
	}
	p := raw(t, parents, bson.D{{Key: "_id", Value: 1}})
	seen := map[string]int{}
	for _, u := range strs(t, p, "items") {
		seen[u]++
	}
	if len(seen) != threshold {
		t.Errorf("parent embeds %d distinct elements, want %d", len(seen), threshold)
	}
	if p.Lookup("count").Int32() != int32(total) || !p.Lookup("hasOverflow").Boolean() {
		t.Errorf("parent count %v flag %v", p.Lookup("count"), p.Lookup("hasOverflow"))
	}
	for _, b := range all(t, overflow, bson.D{{Key: "parentId", Value: 1}}, bson.D{{Key: "openedAt", Value: 1}}) {
		items := strs(t, b, "items")
		if len(items) > 30 || int(b.Lookup("count").Int32()) != len(items) {
			t.Errorf("overflow bucket count %v with %d items", b.Lookup("count"), len(items))
		}
		for _, u := range items {
			seen[u]++
		}
	}
	if len(seen) != total {
		t.Errorf("%d distinct elements stored, want %d", len(seen), total)
	}
	for u, n := range seen {
		if n != 1 {
			t.Errorf("%s stored %d times", u, n)
		}
	}
	small := raw(t, parents, bson.D{{Key: "_id", Value: 2}})
	if len(strs(t, small, "items")) != writers || small.Lookup("hasOverflow").Boolean() {
		t.Errorf("small parent %s", small)
	}
	r, err := s.Verify(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if len(r.Problems) != 0 || len(r.Overflow.Problems) != 0 || r.Parents != 2 || r.Overflow.Elements != total-threshold {
		t.Errorf("Verify: %+v", r)
	}
	all, err := s.GetAll(ctx, 1)
	if err != nil {
		t.Fatal(err)
	}
	if len(all.Elements) != total {
		t.Errorf("GetAll: %d elements, want %d", len(all.Elements), total)
	}
}
