package outlier

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"
	"testing"

	"go.mongodb.org/mongo-driver/v2/bson"

	"github.com/formworkdb/formwork/pattern/bucket"
)

// checkVerify fails unless Verify finds nothing.
func checkVerify[E any](t testing.TB, s *Store[bson.D, E]) {
	t.Helper()
	r, err := s.Verify(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if !r.OK() {
		t.Errorf("Verify: %+v", r)
	}
}

// TestAppendMany adds batches that fit under the threshold, straddle it
// and go far past it, and checks the placements, the counter, the flag,
// the embedded list, the overflow buckets and Verify.
func TestAppendMany(t *testing.T) {
	ctx := context.Background()
	const threshold, size = 10, 4
	for _, tc := range []struct {
		name           string
		before, batch  int // elements appended one by one first, then in one batch
		embed, overflo int // the batch's placements
		buckets        int // overflow buckets at the end
	}{
		{"fits", 3, 5, 5, 0, 0},
		{"fills", 3, 7, 7, 0, 0},
		{"straddles", 3, 12, 7, 5, 2},  // 1 appended, 4 loaded
		{"far past", 12, 23, 0, 23, 7}, // 2 before in one bucket; 3 appended (new bucket), 20 loaded
		{"past from empty", 0, 30, 10, 20, 5},
		{"fills open bucket", 11, 3, 0, 3, 1}, // 1 before; 3 fit its open bucket
	} {
		t.Run(tc.name, func(t *testing.T) {
			s, parents, overflow := newStore(t, Config{Threshold: threshold, Overflow: bucket.Config{Size: size}})
			if err := mk(ctx, s, 1, nil); err != nil {
				t.Fatal(err)
			}
			want := users(0, tc.before+tc.batch)
			for _, u := range want[:tc.before] {
				if _, err := s.Append(ctx, 1, u); err != nil {
					t.Fatal(err)
				}
			}
			e, o, err := s.AppendMany(ctx, 1, want[tc.before:])
			if err != nil {
				t.Fatal(err)
			}
			if e != tc.embed || o != tc.overflo {
				t.Errorf("placements %d embedded, %d overflowed; want %d, %d", e, o, tc.embed, tc.overflo)
			}
			total := tc.before + tc.batch
			p := raw(t, parents, bson.D{{Key: "_id", Value: 1}})
			if got := strs(t, p, "items"); !slices.Equal(got, want[:min(total, threshold)]) {
				t.Errorf("embedded %v", got)
			}
			if n, _ := p.Lookup("count").AsInt64OK(); n != int64(total) || p.Lookup("hasOverflow").Boolean() != (total > threshold) {
				t.Errorf("count %v flag %v", p.Lookup("count"), p.Lookup("hasOverflow"))
			}
			bs := all(t, overflow, bson.D{{Key: "parentId", Value: 1}}, bson.D{{Key: "openedAt", Value: 1}})
			if len(bs) != tc.buckets {
				t.Errorf("%d overflow buckets, want %d", len(bs), tc.buckets)
			}
			var ov []string
			for _, b := range bs {
				items := strs(t, b, "items")
				if len(items) > size || int(b.Lookup("count").Int32()) != len(items) {
					t.Errorf("bucket count %v with %d items", b.Lookup("count"), len(items))
				}
				ov = append(ov, items...)
			}
			if total > threshold && !slices.Equal(ov, want[threshold:]) {
				t.Errorf("overflow %v, want %v", ov, want[threshold:])
			}
			got, err := s.GetAll(ctx, 1)
			if err != nil {
				t.Fatal(err)
			}
			if !slices.Equal(got.Elements, want) || got.Count != total {
				t.Errorf("GetAll: count %d, %v", got.Count, got.Elements)
			}
			checkVerify(t, s)
		})
	}
}

// TestAppendManyParent covers the parent's state: missing, not
// initialised (inserted without Create), counter not a number, and an
// empty batch.
func TestAppendManyParent(t *testing.T) {
	ctx := context.Background()
	s, parents, _ := newStore(t, Config{Threshold: 3, Overflow: bucket.Config{Size: 2}})
	if _, _, err := s.AppendMany(ctx, 9, users(0, 2)); !errors.Is(err, ErrParentNotFound) {
		t.Errorf("missing parent: %v", err)
	}
	if _, err := parents.InsertOne(ctx, bson.D{{Key: "_id", Value: 1}, {Key: "items", Value: bson.A{"old"}}}); err != nil {
		t.Fatal(err)
	}
	e, o, err := s.AppendMany(ctx, 1, users(0, 4))
	if err != nil || e != 2 || o != 2 {
		t.Fatalf("plain parent: %d, %d, %v", e, o, err)
	}
	p := raw(t, parents, bson.D{{Key: "_id", Value: 1}})
	if n, _ := p.Lookup("count").AsInt64OK(); n != 5 || !p.Lookup("hasOverflow").Boolean() {
		t.Errorf("plain parent after: %s", p)
	}
	if _, err := parents.InsertOne(ctx, bson.D{{Key: "_id", Value: 2}, {Key: "count", Value: "x"}}); err != nil {
		t.Fatal(err)
	}
	if _, _, err := s.AppendMany(ctx, 2, users(0, 1)); !errors.Is(err, ErrNoCounter) {
		t.Errorf("bad counter: %v", err)
	}
	if e, o, err := s.AppendMany(ctx, 9, nil); e != 0 || o != 0 || err != nil {
		t.Errorf("empty batch: %d, %d, %v", e, o, err)
	}
	if _, err := parents.DeleteOne(ctx, bson.D{{Key: "_id", Value: 2}}); err != nil {
		t.Fatal(err)
	}
	checkVerify(t, s)
}

// TestAppendManyConcurrent mixes AppendMany batches and single Appends on
// one parent across the threshold: each element stored once, exactly
// Threshold embedded, the counter the total, buckets within Size, Verify
// clean.
func TestAppendManyConcurrent(t *testing.T) {
	ctx := context.Background()
	const (
		writers   = 6
		rounds    = 8
		batch     = 7
		threshold = 50
		size      = 30
	)
	s, parents, overflow := newStore(t, Config{Threshold: threshold, Overflow: bucket.Config{Size: size}})
	if err := mk(ctx, s, 1, nil); err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	errs := make(chan error, writers)
	var mu sync.Mutex
	embedded := 0
	for w := range writers {
		wg.Go(func() {
			for r := range rounds {
				if w%2 == 0 {
					es := make([]string, batch)
					for i := range es {
						es[i] = fmt.Sprintf("w%d-%d-%d", w, r, i)
					}
					e, _, err := s.AppendMany(ctx, 1, es)
					if err != nil {
						errs <- err
						return
					}
					mu.Lock()
					embedded += e
					mu.Unlock()
					continue
				}
				where, err := s.Append(ctx, 1, fmt.Sprintf("w%d-%d", w, r))
				if err != nil {
					errs <- err
					return
				}
				if where == Embedded {
					mu.Lock()
					embedded++
					mu.Unlock()
				}
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	total := (writers/2)*rounds*batch + (writers-writers/2)*rounds
	if embedded != threshold {
		t.Errorf("%d reported embedded, want %d", embedded, threshold)
	}
	p := raw(t, parents, bson.D{{Key: "_id", Value: 1}})
	seen := map[string]int{}
	for _, u := range strs(t, p, "items") {
		seen[u]++
	}
	if len(seen) != threshold {
		t.Errorf("parent embeds %d distinct elements, want %d", len(seen), threshold)
	}
	if n, _ := p.Lookup("count").AsInt64OK(); n != int64(total) || !p.Lookup("hasOverflow").Boolean() {
		t.Errorf("parent count %v flag %v, want %d", p.Lookup("count"), p.Lookup("hasOverflow"), total)
	}
	for _, b := range all(t, overflow, bson.D{{Key: "parentId", Value: 1}}, bson.D{{Key: "openedAt", Value: 1}}) {
		items := strs(t, b, "items")
		if len(items) > size || int(b.Lookup("count").Int32()) != len(items) {
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
	checkVerify(t, s)
}

// TestAppendManyInterrupted stands for an AppendMany that fails, without
// transactions, after its parent update and before its overflow writes:
// the counter is then ahead of the stored elements, never behind; Verify
// reports it and Repair brings the counter back to what is stored.
func TestAppendManyInterrupted(t *testing.T) {
	ctx := context.Background()
	s, parents, _ := newStore(t, Config{Threshold: 3, Overflow: bucket.Config{Size: 2}})
	if err := mk(ctx, s, 1, nil); err != nil {
		t.Fatal(err)
	}
	es := users(0, 7)
	if ok, err := s.pushMany(ctx, 1, 0, es[:3], len(es)); err != nil || !ok {
		t.Fatalf("pushMany: %v, %v", ok, err)
	}
	r, err := s.Verify(ctx)
	if err != nil || r.OK() {
		t.Fatalf("Verify after the interruption: %+v, %v", r, err)
	}
	if _, err := s.Repair(ctx); err != nil {
		t.Fatal(err)
	}
	p := raw(t, parents, bson.D{{Key: "_id", Value: 1}})
	if n, _ := p.Lookup("count").AsInt64OK(); n != 3 || p.Lookup("hasOverflow").Boolean() {
		t.Errorf("after Repair: %s", p)
	}
	checkVerify(t, s)
	// The retried batch lands whole.
	if e, o, err := s.AppendMany(ctx, 1, es[3:]); err != nil || e != 0 || o != 4 {
		t.Fatalf("retry: %d, %d, %v", e, o, err)
	}
	got, err := s.GetAll(ctx, 1)
	if err != nil || !slices.Equal(got.Elements, es) || got.Count != 7 {
		t.Errorf("GetAll: %+v, %v", got, err)
	}
	checkVerify(t, s)
}
