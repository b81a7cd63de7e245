package storage

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"go.mongodb.org/mongo-driver/v2/bson"
)

// TestWALZeroTailRecovers writes through zero-extended logs across
// memtable rotations (so logs are recycled), copies the files of the open
// store as a crash would leave them (the last log ending in zeros, no EOF
// trailer), and checks that the copy opens with every acknowledged write,
// takes more writes, and opens again after a clean close.
func TestWALZeroTailRecovers(t *testing.T) {
	dir := t.TempDir()
	s, err := Open(Options{Dir: dir, CacheSize: 16 << 20}) // 1 MiB memtables
	if err != nil {
		t.Fatal(err)
	}
	pad := strings.Repeat("x", 500)
	insert := func(s *Store, from, to int) {
		t.Helper()
		for i := from; i < to; i++ {
			err := s.Write(func(w *Writer) error {
				c, err := w.EnsureCollection("db.c")
				if err != nil {
					return err
				}
				_, err = w.Insert(c, doc(t, bson.D{{Key: "_id", Value: i}, {Key: "pad", Value: pad}}))
				return err
			})
			if err != nil {
				t.Fatal(err)
			}
		}
	}
	count := func(s *Store, want int64) {
		t.Helper()
		sn := s.Snapshot()
		defer sn.Close()
		st, err := CollStats(sn, s.Collection("db.c"))
		if err != nil || st.Count != want {
			t.Fatalf("count = %d, %v; want %d", st.Count, err, want)
		}
	}
	insert(s, 0, 4000)
	logs, _ := filepath.Glob(filepath.Join(dir, "*.log"))
	zeroed := false
	for _, l := range logs {
		if st, err := os.Stat(l); err == nil && st.Size() >= walZeroAhead {
			zeroed = true
		}
	}
	if !zeroed {
		t.Errorf("no log extended ahead with zeros: %v", logs)
	}
	crashed := t.TempDir()
	if err := os.CopyFS(crashed, os.DirFS(dir)); err != nil {
		t.Fatal(err)
	}
	s.Close()
	for round := 0; round < 3; round++ {
		s, err := Open(Options{Dir: crashed, CacheSize: 16 << 20})
		if err != nil {
			t.Fatalf("round %d: %v", round, err)
		}
		count(s, int64(4000+round*100))
		insert(s, 4000+round*100, 4000+(round+1)*100)
		if err := s.Close(); err != nil {
			t.Fatal(err)
		}
	}
}
