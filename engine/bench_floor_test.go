package engine_test

import (
	"context"
	"fmt"
	"hash/fnv"
	"os"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// BenchmarkCommitFloor runs BenchmarkCommit's shape with no engine and no
// driver, to show what this machine allows any Go program: each of 1 or
// 32 clients hands a request to its own server goroutine over a channel;
// the server does a fixed amount of CPU work (about 60 µs on a busy CPU,
// near what one in-memory insert costs client and server together),
// queues a record for a group-commit syncer (one goroutine that writes
// and fdatasyncs everything queued, as Pebble's WAL writer does), waits
// for its sync and replies. The same loop runs without the sync
// ("sync=none") for the ratio.
//
// It reports what BenchmarkCommit reports ("x-of-sync-here",
// "x-of-nosync", "writes/sync", "µs/sync", "cpu-µs/op") and, for one
// client, "work-x-busy": how much longer the work took during the run
// than on a busy CPU.
func BenchmarkCommitFloor(b *testing.B) {
	for _, synced := range []bool{false, true} {
		for _, clients := range []int{1, 32} {
			mode := "none"
			if synced {
				mode = "fdatasync"
			}
			b.Run(fmt.Sprintf("sync=%s/clients=%d", mode, clients), func(b *testing.B) {
				benchFloor(b, synced, clients)
			})
		}
	}
}

// floorWork is the CPU work per operation, on a busy CPU.
const floorWork = 60 * time.Microsecond

func benchFloor(b *testing.B, synced bool, clients int) {
	unit := floorUnit()
	var syncBefore float64
	var s *floorSyncer
	if synced {
		syncBefore = syncRate(b, 500*time.Millisecond)
		s = newFloorSyncer(side.f) // syncRate's file, already written
		defer s.close()
	}
	var workNanos atomic.Int64
	work := func(n int) {
		t := time.Now()
		floorSpin(n)
		workNanos.Add(int64(time.Since(t)))
	}
	// The server's share of the work (parse and execute) and the
	// client's (the driver's), in units of floorSpin.
	perOp := int(float64(floorWork) / float64(unit))
	serverWork, clientWork := perOp*2/3, perOp/3
	type server struct{ req, rep chan struct{} }
	servers := make([]server, clients)
	for i := range servers {
		sv := server{make(chan struct{}), make(chan struct{})}
		servers[i] = sv
		go func() {
			for range sv.req {
				work(serverWork)
				if s != nil {
					s.commit()
				}
				sv.rep <- struct{}{}
			}
		}()
	}
	defer func() {
		for _, sv := range servers {
			close(sv.req)
		}
	}()
	cpu := startCPU()
	elapsed := runClients(b, clients, func(_ context.Context, c, _ int) error {
		work(clientWork)
		servers[c].req <- struct{}{}
		<-servers[c].rep
		return nil
	})

	cpu.report(b, float64(b.N), "op")
	rate := float64(b.N) / elapsed.Seconds()
	b.ReportMetric(rate, "ops/s")
	if clients == 1 {
		// With more clients than CPUs, the work's wall time would count
		// the time its goroutine waited for a CPU too.
		busy := float64(serverWork+clientWork) * float64(unit)
		b.ReportMetric(float64(workNanos.Load())/float64(b.N)/busy, "work-x-busy")
	}
	key := fmt.Sprintf("floor/%d", clients)
	if !synced {
		recordPerf(key, rate)
		return
	}
	syncs, nanos := s.stats()
	if syncs > 0 {
		b.ReportMetric(float64(b.N)/float64(syncs), "writes/sync")
		b.ReportMetric(float64(nanos)/1e3/float64(syncs), "µs/sync")
	}
	syncAfter := syncRate(b, 500*time.Millisecond)
	b.ReportMetric(rate/((syncBefore+syncAfter)/2), "x-of-sync-here")
	reportRatio(b, rate, key, "x-of-nosync")
}

// floorSpin does n units of CPU work: hashing a small buffer, so that it
// touches memory as real code does.
func floorSpin(n int) {
	var buf [256]byte
	h := fnv.New64a()
	for i := range n {
		buf[i%len(buf)] = byte(i)
		h.Write(buf[:])
	}
	floorSink.Add(h.Sum64() & 1)
}

var floorSink atomic.Uint64

// floorUnit returns the time one unit of floorSpin takes on a busy CPU:
// the best of several timed runs, measured once per process.
var floorUnit = sync.OnceValue(func() time.Duration {
	const n = 2000
	best := time.Duration(1 << 62)
	for range 50 {
		t := time.Now()
		floorSpin(n)
		best = min(best, time.Since(t))
	}
	return max(best/n, 1)
})

// floorSyncer is a group commit: commit queues a record and returns once
// a sync that covers it is done; one goroutine writes everything queued
// and fdatasyncs it, again and again while records arrive.
type floorSyncer struct {
	f      *os.File
	mu     sync.Mutex
	cond   *sync.Cond
	queued int64 // records committed
	synced int64 // records covered by a finished sync
	wake   chan struct{}
	done   chan struct{}
	syncs  int64
	nanos  int64
}

func newFloorSyncer(f *os.File) *floorSyncer {
	s := &floorSyncer{f: f, wake: make(chan struct{}, 1), done: make(chan struct{})}
	s.cond = sync.NewCond(&s.mu)
	go s.loop()
	return s
}

func (s *floorSyncer) commit() {
	s.mu.Lock()
	s.queued++
	me := s.queued
	s.mu.Unlock()
	select {
	case s.wake <- struct{}{}:
	default:
	}
	s.mu.Lock()
	for s.synced < me {
		s.cond.Wait()
	}
	s.mu.Unlock()
}

func (s *floorSyncer) loop() {
	defer close(s.done)
	for i := 0; ; {
		if _, ok := <-s.wake; !ok {
			return
		}
		for {
			s.mu.Lock()
			target := s.queued
			s.mu.Unlock()
			if target == s.synced {
				break
			}
			t := time.Now()
			if err := syncOnce(s.f, sideSize, i); err != nil {
				panic(err)
			}
			i++
			s.mu.Lock()
			s.syncs++
			s.nanos += int64(time.Since(t))
			s.synced = target
			s.cond.Broadcast()
			s.mu.Unlock()
		}
	}
}

func (s *floorSyncer) stats() (syncs, nanos int64) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.syncs, s.nanos
}

func (s *floorSyncer) close() {
	close(s.wake)
	<-s.done
}
