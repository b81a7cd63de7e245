package archive_test

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/formworkdb/formwork/pattern/archive"
)

// TestRunWithConcurrentWrites: new orders written while a run archives
// old ones (dates after the cutoff) all stay live, and the old ones all
// move, none lost or doubled.
func TestRunWithConcurrentWrites(t *testing.T) {
	ctx := context.Background()
	a := newArchiver(t, archive.Config{Slice: 24 * time.Hour})
	orig := loadOrders(t, a.Live(), 200)
	var wg sync.WaitGroup
	stop := make(chan struct{})
	wg.Add(1)
	written := 0
	go func() {
		defer wg.Done()
		for i := 1000; ; i++ {
			select {
			case <-stop:
				return
			default:
			}
			if _, err := a.Live().InsertOne(ctx, order{ID: i, CreatedAt: now.Add(-time.Duration(i-1000) * time.Minute)}); err != nil {
				t.Error(err)
				return
			}
			written++
		}
	}()
	_, err := a.Run(ctx, archive.RunOptions{Now: now})
	close(stop)
	wg.Wait()
	if err != nil {
		t.Fatal(err)
	}
	all := snapshot(t, a.Live())
	for id := 1000; id < 1000+written; id++ {
		if _, ok := all[id]; !ok {
			t.Fatalf("new order %d is not live", id)
		}
		delete(all, id)
	}
	cutoff := now.Add(-30 * 24 * time.Hour)
	// What is left is exactly the original partition.
	arch := snapshot(t, a.Archive())
	if len(all)+len(arch) != len(orig) {
		t.Fatalf("live %d + archive %d, want %d", len(all), len(arch), len(orig))
	}
	for id, d := range orig {
		_, live := all[id]
		_, archived := arch[id]
		if live == archived || archived != d.Lookup("createdAt").Time().Before(cutoff) {
			t.Fatalf("order %d: live %v archived %v", id, live, archived)
		}
	}
	if written == 0 {
		t.Fatal("no concurrent write happened")
	}
}
