package approx

import (
	"context"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"strings"
	"sync"
	"testing"
	"time"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo"

	"github.com/formworkdb/formwork/internal/testenv"
)

func newCounter(t *testing.T, cfg Config) (*Counter, *mongo.Collection) {
	t.Helper()
	coll := testenv.Database(t).Collection("pageViews")
	c, err := New(coll, cfg)
	if err != nil {
		t.Fatal(err)
	}
	if err := c.EnsureIndexes(context.Background()); err != nil {
		t.Fatal(err)
	}
	return c, coll
}

// stored reads key's document as stored and checks its shape.
func stored(t *testing.T, coll *mongo.Collection, key string) int64 {
	t.Helper()
	doc, err := coll.FindOne(context.Background(), bson.D{{Key: "_id", Value: key}}).Raw()
	if errors.Is(err, mongo.ErrNoDocuments) {
		return 0
	}
	if err != nil {
		t.Fatal(err)
	}
	els, _ := doc.Elements()
	v := doc.Lookup("views")
	if len(els) != 2 || v.Type != bson.TypeInt64 {
		t.Fatalf("stored %v, want {_id, views: NumberLong}", doc)
	}
	return v.Int64()
}

func TestConfigValidate(t *testing.T) {
	for _, c := range []Config{
		{Field: "", N: 10},
		{Field: "_id", N: 10},
		{Field: "a.b", N: 10},
		{Field: "views", N: 0},
		{Field: "views", N: 10, Mode: Mode(7)},
	} {
		if err := c.Validate(); err == nil {
			t.Errorf("Validate(%+v) = nil", c)
		}
	}
	if err := (Config{Field: "views", N: 1, Mode: Probabilistic}).Validate(); err != nil {
		t.Fatal(err)
	}
}

func TestDeterministicStoresMultiplesOfN(t *testing.T) {
	ctx := context.Background()
	c, coll := newCounter(t, Config{Field: "views", N: 10})
	for range 57 {
		if err := c.Incr(ctx, "page:/pricing"); err != nil {
			t.Fatal(err)
		}
	}
	c.Incr(ctx, "page:/about")
	if got := stored(t, coll, "page:/pricing"); got != 50 {
		t.Fatalf("stored %d after 57 events, want floor(57/10)*10 = 50", got)
	}
	if p := c.Pending("page:/pricing"); p != 7 || c.Writes() != 5 {
		t.Fatalf("pending %d writes %d, want 7 and 5", p, c.Writes())
	}
	if got, _ := c.Get(ctx, "page:/about"); got != 0 {
		t.Fatalf("a key with 1 event is stored as %d", got)
	}
	if err := c.Flush(ctx); err != nil {
		t.Fatal(err)
	}
	if a, b := stored(t, coll, "page:/pricing"), stored(t, coll, "page:/about"); a != 57 || b != 1 {
		t.Fatalf("after Flush: %d and %d, want 57 and 1", a, b)
	}
	if c.Pending("page:/pricing") != 0 || c.Writes() != 6 {
		t.Fatalf("after Flush: pending %d, writes %d (one bulk write)", c.Pending("page:/pricing"), c.Writes())
	}
	if err := c.Flush(ctx); err != nil || c.Writes() != 6 {
		t.Fatalf("empty Flush wrote: %v, writes %d", err, c.Writes())
	}
}

func TestProbabilisticSeeded(t *testing.T) {
	ctx := context.Background()
	const n, k = 10, 20000
	run := func() (int64, int64) {
		c, coll := newCounter(t, Config{Field: "views", N: n, Mode: Probabilistic, Rand: rand.New(rand.NewPCG(7, 11))})
		for range k {
			if err := c.Incr(ctx, "ad:42"); err != nil {
				t.Fatal(err)
			}
		}
		if err := c.Flush(ctx); err != nil || c.Writes() == 0 {
			t.Fatal(err)
		}
		return stored(t, coll, "ad:42"), c.Writes()
	}
	v1, w1 := run()
	v2, w2 := run()
	if v1 != v2 || w1 != w2 {
		t.Fatalf("same seed, different outcome: %d/%d writes vs %d/%d", v1, w1, v2, w2)
	}
	if v1 != w1*n {
		t.Fatalf("stored %d after %d writes of %d", v1, w1, n)
	}
	sigma := math.Sqrt(k * (n - 1))
	if math.Abs(float64(v1-k)) > 5*sigma {
		t.Fatalf("estimate %d of %d events is more than 5 sigma (%.0f) off", v1, k, sigma)
	}
	t.Logf("%d events: estimate %d in %d writes (sigma %.0f)", k, v1, w1, sigma)
}

// TestConcurrentFlushLosesNothing increments from many goroutines while
// another flushes: the lag never exceeds N-1 per key, and the final Flush
// stores every event.
func TestConcurrentFlushLosesNothing(t *testing.T) {
	ctx := context.Background()
	const n, workers, each = 7, 8, 1500
	keys := []string{"a", "b", "c", "d", "e"}
	c, coll := newCounter(t, Config{Field: "views", N: n})
	var wg sync.WaitGroup
	errs := make(chan error, workers+1)
	for g := range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range each {
				if err := c.Incr(ctx, keys[(g+i)%len(keys)]); err != nil {
					errs <- err
					return
				}
			}
		}()
	}
	stop := make(chan struct{})
	flushed := make(chan struct{})
	go func() {
		defer close(flushed)
		for {
			select {
			case <-stop:
				return
			case <-time.After(time.Millisecond):
				if err := c.Flush(ctx); err != nil {
					errs <- err
					return
				}
			}
		}
	}()
	wg.Wait()
	close(stop)
	<-flushed
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	want := int64(workers * each / len(keys))
	for _, k := range keys {
		s, p := stored(t, coll, k), c.Pending(k)
		if s+p != want || p >= n {
			t.Fatalf("key %s: stored %d + pending %d, want %d with pending < %d", k, s, p, want, n)
		}
	}
	if err := c.Flush(ctx); err != nil {
		t.Fatal(err)
	}
	for _, k := range keys {
		if s := stored(t, coll, k); s != want {
			t.Fatalf("key %s: %d stored after the final Flush, want %d", k, s, want)
		}
	}
}

func TestFailedWriteStaysPending(t *testing.T) {
	ctx := context.Background()
	dead, cancel := context.WithCancel(ctx)
	cancel()
	c, coll := newCounter(t, Config{Field: "views", N: 3})
	c.Incr(dead, "k")
	c.Incr(dead, "k")
	if err := c.Incr(dead, "k"); err == nil || !strings.HasPrefix(err.Error(), "approx: incr:") {
		t.Fatalf("write on a cancelled context: %v", err)
	}
	if p := c.Pending("k"); p != 3 {
		t.Fatalf("pending %d after a failed write, want 3", p)
	}
	if err := c.Incr(ctx, "k"); err != nil {
		t.Fatal(err)
	}
	if s := stored(t, coll, "k"); s != 4 || c.Pending("k") != 0 {
		t.Fatalf("stored %d, pending %d; want 4 and 0", s, c.Pending("k"))
	}
	c.Incr(ctx, "k")
	if err := c.Flush(dead); err == nil {
		t.Fatal("Flush on a cancelled context succeeded")
	}
	if p := c.Pending("k"); p != 1 {
		t.Fatalf("pending %d after a failed Flush, want 1", p)
	}

	// Probabilistic: a failed sample is kept and flushed.
	p, pcoll := newCounter(t, Config{Field: "views", N: 1, Mode: Probabilistic})
	if err := p.Incr(dead, "k"); err == nil {
		t.Fatal("write on a cancelled context succeeded")
	}
	if err := p.Flush(ctx); err != nil {
		t.Fatal(err)
	}
	if s := stored(t, pcoll, "k"); s != 1 {
		t.Fatalf("probabilistic: stored %d after Flush, want the failed sample 1", s)
	}
}

// TestFirstWriteRace creates one key from many goroutines at once: each
// upsert either inserts or retries as an update, none is lost.
func TestFirstWriteRace(t *testing.T) {
	ctx := context.Background()
	const workers = 16
	for round := range 5 {
		c, coll := newCounter(t, Config{Field: "views", N: 1})
		key := fmt.Sprint("new-", round)
		var wg sync.WaitGroup
		start := make(chan struct{})
		errs := make(chan error, workers)
		for range workers {
			wg.Add(1)
			go func() {
				defer wg.Done()
				<-start
				errs <- c.Incr(ctx, key)
			}()
		}
		close(start)
		wg.Wait()
		close(errs)
		for err := range errs {
			if err != nil {
				t.Fatal(err)
			}
		}
		if s := stored(t, coll, key); s != workers {
			t.Fatalf("round %d: stored %d, want %d", round, s, workers)
		}
	}
}
