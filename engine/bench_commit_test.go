package engine_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"go.mongodb.org/mongo-driver/v2/bson"
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
	const size, stride = 16 << 20, 4096
	f, err := os.Create(filepath.Join(b.TempDir(), "sync"))
	if err != nil {
		b.Fatal(err)
	}
	defer f.Close()
	if _, err := f.Write(make([]byte, size)); err != nil {
		b.Fatal(err)
	}
	if err := f.Sync(); err != nil {
		b.Fatal(err)
	}
	rec := make([]byte, 128)
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		rec[0] = byte(i)
		if _, err := f.WriteAt(rec, int64(i*stride)%size); err != nil {
			b.Fatal(err)
		}
		if err := fdatasync(f); err != nil {
			b.Fatal(err)
		}
	}
	rate := float64(b.N) / b.Elapsed().Seconds()
	recordPerf("sync", rate)
	b.ReportMetric(rate, "syncs/s")
}

// benchInsertClients inserts b.N small documents from clients concurrent
// clients, each insert acknowledged on its own.
func benchInsertClients(b *testing.B, durable bool, clients int) {
	c := perfEngine(b, durable).Database("bench").Collection("c")
	if err := c.Database().CreateCollection(context.Background(), "c"); err != nil {
		b.Fatal(err)
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
		reportRatio(b, rate, "sync", "x-of-sync")
		reportRatio(b, rate, "insert/disk/1", "x-of-1-disk-client")
		reportRatio(b, rate, fmt.Sprintf("insert/mem/%d", clients), "x-of-mem")
	}
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
