package admission

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"
)

// waitFor waits until cond holds, failing after 10 seconds.
func waitFor(t *testing.T, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatal("condition not reached")
		}
		time.Sleep(time.Millisecond)
	}
}

// queued waits until class c of g has n operations waiting.
func queued(t *testing.T, g *Gate, c Class, n int64) {
	t.Helper()
	waitFor(t, func() bool { return g.Stats(c).QueueLength == n })
}

// start acquires a ticket of class c in a goroutine and sends its name on
// order once admitted; the returned channel releases it.
func start(g *Gate, c Class, name string, order chan<- string) chan<- struct{} {
	done := make(chan struct{})
	go func() {
		t, err := g.Acquire(context.Background(), c)
		if err != nil {
			order <- "error: " + err.Error()
			return
		}
		order <- name
		<-done
		t.Release()
	}()
	return done
}

// TestQueueStaysBounded: a queue that is never empty, as under steady
// load, keeps a slice the size of its contents, not of its history.
func TestQueueStaysBounded(t *testing.T) {
	var q queue
	q.push(&waiter{})
	q.push(&waiter{})
	for range 100000 {
		q.push(&waiter{})
		q.pop()
	}
	if q.len() != 2 || cap(q.ws) > 16 {
		t.Fatalf("len %d, cap %d after 100,000 pushes and pops", q.len(), cap(q.ws))
	}
	w := &waiter{}
	q.push(w)
	if !q.remove(w) || q.len() != 2 {
		t.Fatalf("remove: len %d", q.len())
	}
}

func TestNilGateAdmitsEverything(t *testing.T) {
	var g *Gate
	if New(0) != nil || New(-1) != nil {
		t.Fatal("New(<=0) must return nil")
	}
	for range 100 {
		tk, err := g.Acquire(context.Background(), Write)
		if err != nil {
			t.Fatal(err)
		}
		defer tk.Release()
	}
	if g.Stats(Read) != (ClassStats{}) {
		t.Fatal("nil gate reports figures")
	}
	resume := Suspend(NewContext(context.Background(), nil))
	resume()
}

func TestReadsGoBeforeWaitingWrites(t *testing.T) {
	g := New(2)
	order := make(chan string, 10)
	r1 := start(g, Read, "r1", order)
	r2 := start(g, Read, "r2", order)
	<-order
	<-order
	w1 := start(g, Write, "w1", order)
	queued(t, g, Write, 1)
	r3 := start(g, Read, "r3", order)
	queued(t, g, Read, 1)
	close(r1)
	if got := <-order; got != "r3" {
		t.Fatalf("first admitted after a release = %s, want r3 (reads first)", got)
	}
	close(r2)
	if got := <-order; got != "w1" {
		t.Fatalf("next = %s, want w1", got)
	}
	close(r3)
	close(w1)
	waitFor(t, func() bool { return g.Stats(Read).Available == 2 })
	if s := g.Stats(Read); s.Out != 0 || s.FinishedProcessing != 3 || s.AddedToQueue != 1 || s.RemovedFromQueue != 1 {
		t.Fatalf("read stats %+v", s)
	}
}

func TestWritesHoldAtMostHalf(t *testing.T) {
	g := New(4)
	order := make(chan string, 10)
	r0 := start(g, Read, "r0", order)
	<-order
	w1 := start(g, Write, "w1", order)
	w2 := start(g, Write, "w2", order)
	<-order
	<-order
	w3 := start(g, Write, "w3", order)
	queued(t, g, Write, 1)
	// One ticket is free, but only for reads.
	r1 := start(g, Read, "r1", order)
	if got := <-order; got != "r1" {
		t.Fatalf("admitted %s, want r1", got)
	}
	if s := g.Stats(Write); s.Out != 2 || s.QueueLength != 1 || s.Available != 0 {
		t.Fatalf("write stats %+v", s)
	}
	close(r1)
	waitFor(t, func() bool { return g.Stats(Read).Out == 1 })
	// The freed read ticket does not go to w3: writes are at their cap.
	if s := g.Stats(Write); s.Out != 2 || s.QueueLength != 1 || s.Available != 1 {
		t.Fatalf("after a read's release: write stats %+v", s)
	}
	close(w1)
	if got := <-order; got != "w3" {
		t.Fatalf("admitted %s, want w3", got)
	}
	close(w2)
	close(w3)
	close(r0)
}

// TestWritesAloneAreNotLimited: while no read runs or waits, writes are
// admitted whatever their number; a read then waits for a free ticket,
// and writes arriving while it runs queue again.
func TestWritesAloneAreNotLimited(t *testing.T) {
	g := New(2)
	order := make(chan string, 10)
	var ws []chan<- struct{}
	for range 5 {
		ws = append(ws, start(g, Write, "w", order))
		if got := <-order; got != "w" {
			t.Fatalf("admitted %s", got)
		}
	}
	r := start(g, Read, "r", order)
	queued(t, g, Read, 1)
	for i := range 3 {
		close(ws[i])
	}
	waitFor(t, func() bool { return g.Stats(Write).Out == 2 })
	if s := g.Stats(Read); s.QueueLength != 1 {
		t.Fatalf("the read was admitted with 2 writes out of 2 tickets: %+v", s)
	}
	close(ws[3])
	if got := <-order; got != "r" {
		t.Fatalf("admitted %s, want r", got)
	}
	w := start(g, Write, "late", order)
	queued(t, g, Write, 1)
	close(r)
	close(ws[4])
	if got := <-order; got != "late" {
		t.Fatalf("admitted %s, want late", got)
	}
	close(w)
}

// TestQuietReadsReleaseWaitingWrites: writes queued behind a read stay
// limited for readQuiet after it leaves, then all go at the next release.
func TestQuietReadsReleaseWaitingWrites(t *testing.T) {
	g := New(2)
	order := make(chan string, 10)
	r := start(g, Read, "r", order)
	<-order
	w1 := start(g, Write, "w1", order)
	<-order
	w2 := start(g, Write, "w2", order)
	w3 := start(g, Write, "w3", order)
	queued(t, g, Write, 2)
	close(r)
	waitFor(t, func() bool { return g.Stats(Read).Out == 0 })
	if s := g.Stats(Write); s.Out != 1 || s.QueueLength != 2 {
		t.Fatalf("right after the read: write stats %+v", s)
	}
	time.Sleep(2 * readQuiet)
	close(w1)
	got := map[string]bool{<-order: true, <-order: true}
	if !got["w2"] || !got["w3"] {
		t.Fatalf("admitted %v, want w2 and w3", got)
	}
	if s := g.Stats(Write); s.Out != 2 || s.QueueLength != 0 {
		t.Fatalf("write stats %+v", s)
	}
	close(w2)
	close(w3)
}

func TestWritesAreNotStarved(t *testing.T) {
	g := New(1)
	order := make(chan string, 100)
	hold := start(g, Read, "hold", order)
	<-order
	w := start(g, Write, "w", order)
	queued(t, g, Write, 1)
	var reads []chan<- struct{}
	for i := range ReadBurst + 2 {
		reads = append(reads, start(g, Read, "r", order))
		queued(t, g, Read, int64(i+1))
	}
	close(hold)
	// Each admitted read releases at once; the write must come after
	// exactly ReadBurst of them.
	for i := range ReadBurst {
		if got := <-order; got != "r" {
			t.Fatalf("admission %d = %s, want a read", i, got)
		}
		close(reads[i])
	}
	if got := <-order; got != "w" {
		t.Fatalf("after %d reads got %s, want the write", ReadBurst, got)
	}
	close(w)
	for i := ReadBurst; i < len(reads); i++ {
		<-order
		close(reads[i])
	}
}

func TestCancelWhileQueued(t *testing.T) {
	g := New(1)
	tk, err := g.Acquire(context.Background(), Write)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Millisecond)
	defer cancel()
	if _, err := g.Acquire(ctx, Read); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("Acquire = %v, want deadline exceeded", err)
	}
	if s := g.Stats(Read); s.Canceled != 1 || s.QueueLength != 0 {
		t.Fatalf("read stats %+v", s)
	}
	tk.Release()
	tk.Release() // a second release is a no-op
	if s := g.Stats(Write); s.Available != 1 || s.Out != 0 {
		t.Fatalf("write stats %+v", s)
	}
}

func TestSuspendGivesTheTicketBack(t *testing.T) {
	g := New(1)
	tk, err := g.Acquire(context.Background(), Write)
	if err != nil {
		t.Fatal(err)
	}
	ctx := NewContext(context.Background(), tk)
	resume := Suspend(ctx)
	// While suspended another operation runs.
	other, err := g.Acquire(context.Background(), Read)
	if err != nil {
		t.Fatal(err)
	}
	resumed := make(chan struct{})
	go func() { resume(); close(resumed) }()
	select {
	case <-resumed:
		t.Fatal("resumed while the only ticket is out")
	case <-time.After(20 * time.Millisecond):
	}
	other.Release()
	<-resumed
	if s := g.Stats(Write); s.Out != 1 || s.NewAdmissions != 1 || s.StartedProcessing != 2 {
		t.Fatalf("write stats %+v", s)
	}
	// Suspending a ticket that is not held does nothing.
	tk.Release()
	Suspend(ctx)()
	if s := g.Stats(Write); s.Out != 0 {
		t.Fatalf("after release: write stats %+v", s)
	}
}

// TestConcurrentUse checks under -race that the counts balance after many
// goroutines acquire, suspend and release at once.
func TestConcurrentUse(t *testing.T) {
	g := New(3)
	var wg sync.WaitGroup
	for i := range 32 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			c := Class(i % 2)
			for j := range 200 {
				ctx, cancel := context.WithTimeout(context.Background(), time.Duration(j%5)*time.Millisecond)
				tk, err := g.Acquire(ctx, c)
				cancel()
				if err != nil {
					continue
				}
				if j%3 == 0 {
					Suspend(NewContext(context.Background(), tk))()
				}
				tk.Release()
			}
		}()
	}
	wg.Wait()
	for _, c := range []Class{Read, Write} {
		s := g.Stats(c)
		if s.Out != 0 || s.QueueLength != 0 || s.Processing != 0 || s.Available != 3 || s.AddedToQueue != s.RemovedFromQueue {
			t.Fatalf("%s stats after the run: %+v", c, s)
		}
	}
}
