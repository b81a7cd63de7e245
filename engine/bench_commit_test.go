package engine_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo"
)

// BenchmarkCommit measures acknowledged insertOne calls from 1, 8 and 32
// concurrent clients, in memory and on disk, against the rate at which
// the same disk completes small synced writes (storage=sync: one 128-byte
// write and an fdatasync per operation into a preallocated file). Disk
// sub-benchmarks report their rate as a fraction of that ("x-of-sync"),
// of one durable client ("x-of-1-disk-client") and of the same number of
// in-memory clients ("x-of-mem").
func BenchmarkCommit(b *testing.B) {
	b.Run("storage=sync", benchDiskSync)
	for _, durable := range []bool{false, true} {
		for _, clients := range []int{1, 8, 32} {
			name := fmt.Sprintf("storage=%s/clients=%d", storageName(durable), clients)
			b.Run(name, func(b *testing.B) { benchInsertClients(b, durable, clients) })
		}
	}
}

// benchDiskSync measures one small write plus fdatasync per operation,
// cycling through a preallocated 16 MiB file so that no write extends it.
func benchDiskSync(b *testing.B) {
	f := syncFile(b)
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if err := syncOnce(f, syncFileSize, i); err != nil {
			b.Fatal(err)
		}
	}
	rate := float64(b.N) / b.Elapsed().Seconds()
	recordPerf("sync", rate)
	b.ReportMetric(rate, "syncs/s")
}

// syncFile creates the preallocated file benchDiskSync writes.
func syncFile(b *testing.B) *os.File {
	b.Helper()
	f, err := os.Create(filepath.Join(b.TempDir(), "sync"))
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { f.Close() })
	if _, err := f.Write(make([]byte, syncFileSize)); err != nil {
		b.Fatal(err)
	}
	if err := f.Sync(); err != nil {
		b.Fatal(err)
	}
	return f
}

const syncFileSize, syncStride = 16 << 20, 4096

// syncOnce is operation i of benchDiskSync: a 128-byte write into the
// preallocated file f of length size, then fdatasync.
func syncOnce(f *os.File, size int64, i int) error {
	var rec [128]byte
	rec[0] = byte(i)
	if _, err := f.WriteAt(rec[:], int64(i*syncStride)%size); err != nil {
		return err
	}
	return fdatasync(f)
}

// syncRate runs syncOnce for d on a small preallocated file, shared by
// every call in the process, and returns the rate. The disk's rate
// drifts by a third within a minute here, so a durable benchmark measures
// it just before and just after itself, and compares with their mean.
// (A fresh 16 MiB file before each run slowed the run after it by about
// 5%; one small file, written once, does not.)
func syncRate(b *testing.B, d time.Duration) float64 {
	b.Helper()
	side.once.Do(func() {
		side.f, side.err = os.CreateTemp("", "formwork-sync-*")
		if side.err != nil {
			return
		}
		os.Remove(side.f.Name()) // open until the process ends
		if _, side.err = side.f.Write(make([]byte, sideSize)); side.err == nil {
			side.err = side.f.Sync()
		}
	})
	if side.err != nil {
		b.Fatal(side.err)
	}
	n := 0
	start := time.Now()
	for time.Since(start) < d {
		if err := syncOnce(side.f, sideSize, n); err != nil {
			b.Fatal(err)
		}
		n++
	}
	return float64(n) / time.Since(start).Seconds()
}

// side is syncRate's file; sideSize is its length.
var side struct {
	once sync.Once
	f    *os.File
	err  error
}

const sideSize = 1 << 20

// benchInsertClients inserts b.N small documents from clients concurrent
// clients, each insert acknowledged on its own.
//
// A durable run also reports the writes one log sync carried
// ("writes/sync", from serverStatus) and compares its rate with the
// disk's synced-write rate measured just before and after it
// ("x-of-sync-here"; "x-of-sync" is against storage=sync, run first).
func benchInsertClients(b *testing.B, durable bool, clients int) {
	var syncBefore float64
	if durable {
		syncBefore = syncRate(b, 500*time.Millisecond)
	}
	client := perfEngine(b, durable)
	c := client.Database("bench").Collection("c")
	if err := c.Database().CreateCollection(context.Background(), "c"); err != nil {
		b.Fatal(err)
	}
	var logBefore bson.Raw
	if durable {
		logBefore = walLog(b, client)
	}
	cpu := startCPU()
	elapsed := runClients(b, clients, func(ctx context.Context, _, i int) error {
		_, err := c.InsertOne(ctx, bson.D{{Key: "_id", Value: i}, {Key: "name", Value: "user"}, {Key: "n", Value: i}})
		return err
	})
	cpu.report(b, float64(b.N), "insert")
	rate := float64(b.N) / elapsed.Seconds()
	b.ReportMetric(rate, "inserts/s")
	recordPerf(fmt.Sprintf("insert/%s/%d", storageName(durable), clients), rate)
	if durable {
		logAfter := walLog(b, client)
		delta := func(name string) float64 {
			return float64(logAfter.Lookup(name).AsInt64() - logBefore.Lookup(name).AsInt64())
		}
		if syncs := delta("log sync operations"); syncs > 0 {
			b.ReportMetric(delta("log write operations")/syncs, "writes/sync")
			b.ReportMetric(delta("log sync time duration (usecs)")/syncs, "µs/sync")
		}
		b.StopTimer()
		syncAfter := syncRate(b, 500*time.Millisecond)
		b.ReportMetric(rate/((syncBefore+syncAfter)/2), "x-of-sync-here")
		reportRatio(b, rate, "sync", "x-of-sync")
		reportRatio(b, rate, "insert/disk/1", "x-of-1-disk-client")
		reportRatio(b, rate, fmt.Sprintf("insert/mem/%d", clients), "x-of-mem")
	}
}

// walLog returns serverStatus's wiredTiger.log section.
func walLog(b *testing.B, client *mongo.Client) bson.Raw {
	b.Helper()
	raw, err := client.Database("admin").RunCommand(context.Background(), bson.D{{Key: "serverStatus", Value: 1}}).Raw()
	if err != nil {
		b.Fatal(err)
	}
	return raw.Lookup("wiredTiger", "log").Document()
}

// BenchmarkInsertMany measures insertMany of 1,000-document batches in
// memory, in documents per second and in CPU time per document (client
// and server together: both run in this process).
func BenchmarkInsertMany(b *testing.B) {
	const batch = 1000
	c := perfEngine(b, false).Database("bench").Collection("c")
	ctx := context.Background()
	docs := make([]any, batch)
	next := 0
	b.ReportAllocs()
	var cpu cpuMeter
	for b.Loop() {
		if next == 0 {
			cpu = startCPU()
		}
		for i := range docs {
			docs[i] = bson.D{{Key: "_id", Value: next}, {Key: "name", Value: "user"}, {Key: "n", Value: next}, {Key: "tags", Value: bson.A{"a", "b"}}}
			next++
		}
		if _, err := c.InsertMany(ctx, docs); err != nil {
			b.Fatal(err)
		}
	}
	cpu.report(b, float64(b.N*batch), "doc")
	b.ReportMetric(float64(b.N*batch)/b.Elapsed().Seconds(), "docs/s")
}
