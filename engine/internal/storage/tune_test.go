package storage

import (
	"testing"

	"github.com/cockroachdb/pebble/v2"
	"go.mongodb.org/mongo-driver/v2/bson"
)

func TestTuneSizesMemtablesFromTheCache(t *testing.T) {
	for _, tc := range []struct {
		cache, wantCache int64
		wantMem          uint64
	}{
		{0, DefaultCacheSize, DefaultCacheSize / 16},
		{8 << 20, 8 << 20, minMemTableSize},
		{4 << 30, 4 << 30, maxMemTableSize},
	} {
		po := &pebble.Options{}
		tune(po, tc.cache, true)
		if po.CacheSize != tc.wantCache || po.MemTableSize != tc.wantMem {
			t.Errorf("tune(%d): cache %d memtable %d, want %d and %d", tc.cache, po.CacheSize, po.MemTableSize, tc.wantCache, tc.wantMem)
		}
		if po.Levels[0].FilterPolicy == nil {
			t.Errorf("tune(%d): no bloom filter", tc.cache)
		}
	}
}

func TestOpenWithSmallCacheStillReads(t *testing.T) {
	s, err := Open(Options{CacheSize: 1 << 20})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	err = s.Write(func(w *Writer) error {
		c, err := w.EnsureCollection("db.c")
		if err != nil {
			return err
		}
		_, err = w.Insert(c, doc(t, bson.D{{Key: "_id", Value: 1}}))
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	sn := s.Snapshot()
	defer sn.Close()
	if d, err := sn.Fetch(s.Collection("db.c"), 1); d == nil || err != nil {
		t.Fatalf("fetch = %v, %v", d, err)
	}
}

// TestTuneSmallTablesInMemoryOnly checks that only an in-memory store
// takes small L0 tables (see tune); a store on disk keeps Pebble's sizes.
func TestTuneSmallTablesInMemoryOnly(t *testing.T) {
	mem, disk := &pebble.Options{}, &pebble.Options{}
	tune(mem, 0, false)
	tune(disk, 0, true)
	if mem.TargetFileSizes[0] != memTargetFileSize || !mem.DisableWAL {
		t.Errorf("in memory: target %d, DisableWAL %v", mem.TargetFileSizes[0], mem.DisableWAL)
	}
	if disk.TargetFileSizes[0] != 0 || disk.DisableWAL {
		t.Errorf("on disk: target %d, DisableWAL %v", disk.TargetFileSizes[0], disk.DisableWAL)
	}
}
