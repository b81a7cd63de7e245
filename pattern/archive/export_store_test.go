package archive_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"testing"
	"time"

	"go.mongodb.org/mongo-driver/v2/bson"

	"github.com/formworkdb/formwork/pattern/archive"
)

// TestExportRestore exports January 2020 of the archive, checks the
// object layout and the manifest, restores it into a scratch collection
// twice (no duplicates) and compares it with the archive; a flipped byte
// in a part makes Restore fail with ErrCorrupt before writing that part.
func TestExportRestore(t *testing.T) {
	ctx := context.Background()
	a := newArchiver(t, archive.Config{PartDocs: 40})
	loadOrders(t, a.Live(), 200)
	if _, err := a.Run(ctx, archive.RunOptions{Now: now}); err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	store := archive.DirStore(dir)
	m, err := a.Export(ctx, store, time.Date(2020, 1, 17, 0, 0, 0, 0, time.UTC))
	if err != nil {
		t.Fatal(err)
	}
	jan, err := a.Archived(ctx, time.Date(2020, 1, 1, 0, 0, 0, 0, time.UTC), time.Date(2020, 2, 1, 0, 0, 0, 0, time.UTC), 0)
	if err != nil {
		t.Fatal(err)
	}
	if m.Count != len(jan) || len(jan) != 102 || len(m.Parts) != 3 || m.Parts[0].Count != 40 || m.Parts[2].Count != 22 {
		t.Fatalf("manifest %+v for %d archived January orders", m, len(jan))
	}
	prefix := a.Archive().Database().Name() + "/orders/2020/01/"
	for _, name := range []string{"manifest.json", "part-0.bson.zst", "part-1.bson.zst", "part-2.bson.zst"} {
		if _, err := os.Stat(filepath.Join(dir, filepath.FromSlash(prefix+name))); err != nil {
			t.Errorf("layout: %v", err)
		}
	}
	scratch := a.Live().Database().Collection("restored")
	for range 2 {
		n, err := a.Restore(ctx, store, m.From, scratch)
		if err != nil || n != 102 {
			t.Fatalf("restore: %d, %v", n, err)
		}
	}
	got := snapshot(t, scratch)
	arch := snapshot(t, a.Archive())
	if len(got) != 102 {
		t.Fatalf("restored %d documents", len(got))
	}
	for id, d := range got {
		if !sameFields(t, d, arch[id]) {
			t.Fatalf("restored %v, archived %v", d, arch[id])
		}
	}
	if _, err := a.Restore(ctx, store, time.Date(2019, 5, 1, 0, 0, 0, 0, time.UTC), scratch); !errors.Is(err, archive.ErrNotFound) {
		t.Fatalf("restore of a month never exported: %v", err)
	}
	part := filepath.Join(dir, filepath.FromSlash(prefix+"part-1.bson.zst"))
	b, err := os.ReadFile(part)
	if err != nil {
		t.Fatal(err)
	}
	b[len(b)/2] ^= 0xff
	if err := os.WriteFile(part, b, 0o644); err != nil {
		t.Fatal(err)
	}
	fresh := a.Live().Database().Collection("restored2")
	n, err := a.Restore(ctx, store, m.From, fresh)
	if !errors.Is(err, archive.ErrCorrupt) || n != 40 {
		t.Fatalf("corrupt part: restored %d, %v", n, err)
	}
	if c, _ := fresh.CountDocuments(ctx, bson.D{}); c != 40 {
		t.Fatalf("corrupt part wrote %d documents, want only part 0's 40", c)
	}
}

func TestDirStoreRefusesEscapingKeys(t *testing.T) {
	s := archive.DirStore(t.TempDir())
	for _, k := range []string{"../x", "/abs", "a/../../b", ""} {
		if err := s.Put(context.Background(), k, nil); err == nil {
			t.Errorf("Put(%q) succeeded", k)
		}
	}
}
