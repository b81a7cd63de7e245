package storage

import (
	"bytes"
	"context"
	"io"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/cockroachdb/pebble/v2/vfs"
	"go.mongodb.org/mongo-driver/v2/bson"
)

// TestTableFSHoldsTablesInChunks writes a table in uneven pieces across
// many chunks and reads it back whole, in pieces and past its end, then
// renames, links and removes it.
func TestTableFSHoldsTablesInChunks(t *testing.T) {
	fs := newTableFS()
	if err := fs.MkdirAll("mem", 0o755); err != nil {
		t.Fatal(err)
	}
	f, err := fs.Create("mem/000001.sst", vfs.WriteCategoryUnspecified)
	if err != nil {
		t.Fatal(err)
	}
	r := rand.New(rand.NewPCG(1, 2))
	var want []byte
	for len(want) < 3<<20 {
		p := make([]byte, r.IntN(70000))
		for i := range p {
			p[i] = byte(r.Uint32())
		}
		if n, err := f.Write(p); n != len(p) || err != nil {
			t.Fatal(n, err)
		}
		want = append(want, p...)
	}
	if err := f.Sync(); err != nil {
		t.Fatal(err)
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
	if fi, err := fs.Stat("mem/000001.sst"); err != nil || fi.Size() != int64(len(want)) || fi.Name() != "000001.sst" {
		t.Fatalf("stat = %v, %v", fi, err)
	}
	names, err := fs.List("mem")
	if err != nil || len(names) != 1 || names[0] != "000001.sst" {
		t.Fatalf("list = %v, %v", names, err)
	}
	g, err := fs.Open("mem/000001.sst")
	if err != nil {
		t.Fatal(err)
	}
	got, err := io.ReadAll(g)
	if err != nil || !bytes.Equal(got, want) {
		t.Fatalf("ReadAll: %d bytes, %v", len(got), err)
	}
	for range 200 {
		off := r.IntN(len(want) + 10)
		p := make([]byte, r.IntN(300000))
		n, err := g.ReadAt(p, int64(off))
		end := min(off+len(p), len(want))
		if off > len(want) {
			end = off
		}
		if n != end-off || !bytes.Equal(p[:n], want[off:end]) {
			t.Fatalf("ReadAt(%d, %d) = %d, %v", off, len(p), n, err)
		}
		if (n < len(p)) != (err == io.EOF) {
			t.Fatalf("ReadAt(%d, %d) = %d, %v", off, len(p), n, err)
		}
	}
	if err := fs.Link("mem/000001.sst", "mem/000002.sst"); err != nil {
		t.Fatal(err)
	}
	if err := fs.Rename("mem/000002.sst", "mem/000003.sst"); err != nil {
		t.Fatal(err)
	}
	if fi, err := fs.Stat("mem/000003.sst"); err != nil || fi.Size() != int64(len(want)) {
		t.Fatalf("stat of the renamed link = %v, %v", fi, err)
	}
	if err := fs.Remove("mem/000001.sst"); err != nil {
		t.Fatal(err)
	}
	if _, err := fs.Stat("mem/000001.sst"); err == nil {
		t.Fatal("removed table still there")
	}
	if _, err := fs.Open("mem/000001.sst"); err == nil {
		t.Fatal("removed table still opens")
	}
	// A handle opened before the removal still reads it.
	p := make([]byte, 10)
	if n, err := g.ReadAt(p, 5); n != 10 || err != nil || !bytes.Equal(p, want[5:15]) {
		t.Fatalf("read after remove = %d, %v", n, err)
	}
	if _, err := g.Write([]byte("x")); err == nil {
		t.Fatal("a read handle wrote")
	}
}

// TestInMemoryStoreReadsBackFlushedTables fills an in-memory store with
// small memtables well past several flushes and a manual compaction, so
// that its documents, index entries and oplog live in tables tableFS
// holds, then reads every document and oplog entry back.
func TestInMemoryStoreReadsBackFlushedTables(t *testing.T) {
	s, err := Open(Options{CacheSize: 1 << 20})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	const n = 30000
	for b := 0; b < n; b += 1000 {
		err := s.Write(func(w *Writer) error {
			c, err := w.EnsureCollection("db.c")
			if err != nil {
				return err
			}
			for i := b; i < b+1000; i++ {
				if _, err := w.Insert(c, doc(t, bson.D{{Key: "_id", Value: i}, {Key: "pad", Value: strings.Repeat("x", 100)}})); err != nil {
					return err
				}
			}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	c := s.Collection("db.c")
	if _, err := s.CompactCollection(context.Background(), c); err != nil {
		t.Fatal(err)
	}
	var tables int64
	for _, l := range s.db.Metrics().Levels {
		tables += l.TablesCount
	}
	if tables == 0 {
		t.Fatal("nothing reached a table: the test proves nothing")
	}
	sn := s.Snapshot()
	defer sn.Close()
	recs, err := sn.Scan(c, false)
	if err != nil {
		t.Fatal(err)
	}
	i := 0
	for recs.Next() {
		d, err := recs.Doc()
		if err != nil {
			t.Fatal(err)
		}
		if got := d.Lookup("_id").Int32(); got != int32(i) {
			t.Fatalf("document %d has _id %d", i, got)
		}
		i++
	}
	if err := recs.Close(); err != nil || i != n {
		t.Fatalf("read %d documents, %v", i, err)
	}
	for _, id := range []int32{0, 12345, n - 1} {
		d, err := sn.Fetch(c, int64(id)+1)
		if err != nil || d.Lookup("_id").Int32() != id {
			t.Fatalf("record %d: %v, %v", id+1, d, err)
		}
	}
	ops, err := sn.OplogFrom(s.Collection(OplogNS), bson.Timestamp{})
	if err != nil {
		t.Fatal(err)
	}
	inserts := 0
	for ops.Next() {
		d, err := ops.Doc()
		if err != nil {
			t.Fatal(err)
		}
		if d.Lookup("op").StringValue() == "i" {
			inserts++
		}
	}
	if err := ops.Close(); err != nil || inserts != n {
		t.Fatalf("oplog holds %d inserts, %v", inserts, err)
	}
}

// TestTableFSLargeTable writes a table of hundreds of chunks, as the
// tables of the lower levels of a large in-memory store are.
func TestTableFSLargeTable(t *testing.T) {
	fs := newTableFS()
	f, err := fs.Create("big.sst", vfs.WriteCategoryUnspecified)
	if err != nil {
		t.Fatal(err)
	}
	p := make([]byte, 1<<20)
	const mib = 40
	for i := range mib {
		for j := range p {
			p[j] = byte(i + j)
		}
		if _, err := f.Write(p); err != nil {
			t.Fatal(err)
		}
	}
	if fi, _ := f.Stat(); fi.Size() != mib<<20 {
		t.Fatalf("size %d", fi.Size())
	}
	q := make([]byte, 3)
	for i := range mib {
		if n, err := f.ReadAt(q, int64(i)<<20+5); n != 3 || err != nil || q[0] != byte(i+5) || q[2] != byte(i+7) {
			t.Fatalf("MiB %d: %v %d %v", i, q, n, err)
		}
	}
}
