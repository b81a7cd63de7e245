package storage

import (
	"testing"
	"time"

	"go.mongodb.org/mongo-driver/v2/bson"
)

// fillOplog logs n inserts of about 1 KB each into db.c.
func fillOplog(t *testing.T, s *Store, from, n int) {
	t.Helper()
	pad := make([]byte, 1000)
	for i := from; i < from+n; i++ {
		err := s.Write(func(w *Writer) error {
			c, err := w.EnsureCollection("db.c")
			if err != nil {
				return err
			}
			_, err = w.Insert(c, doc(t, bson.D{{Key: "_id", Value: i}, {Key: "p", Value: pad}}))
			return err
		})
		if err != nil {
			t.Fatal(err)
		}
	}
}

// waitTruncation waits until no truncation runs.
func waitTruncation(s *Store) {
	time.Sleep(50 * time.Millisecond)
	for s.oplog.truncating.Load() {
		time.Sleep(10 * time.Millisecond)
	}
}

// TestOplogMinRetention checks that an oplog over its size keeps the
// entries younger than the minimum retention, and truncates them once
// the retention is lowered or they come of age, as mongod's
// minRetentionHours.
func TestOplogMinRetention(t *testing.T) {
	s, err := Open(Options{OplogSize: 64 << 10, OplogMinRetention: time.Hour})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if s.OplogMinRetention() != time.Hour {
		t.Fatalf("retention %v", s.OplogMinRetention())
	}
	fillOplog(t, s, 0, 200)
	waitTruncation(s)
	if _, used := s.OplogSize(); used <= 64<<10 || s.OplogTruncatedTo().T != 0 {
		t.Fatalf("retained entries were truncated: size %d, truncated to %v", used, s.OplogTruncatedTo())
	}

	// One second: the entries come of age, and the next commit truncates.
	s.SetOplogMinRetention(time.Second)
	time.Sleep(2100 * time.Millisecond)
	fillOplog(t, s, 200, 1)
	deadline := time.Now().Add(10 * time.Second)
	for s.oplog.truncating.Load() || s.oplog.size.Load() > 64<<10 {
		if time.Now().After(deadline) {
			t.Fatalf("oplog size %d after the entries came of age", s.oplog.size.Load())
		}
		time.Sleep(10 * time.Millisecond)
	}
	if s.OplogTruncatedTo().T == 0 {
		t.Fatal("no truncation point")
	}
}
