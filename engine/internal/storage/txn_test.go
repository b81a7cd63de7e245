package storage

import (
	"context"
	"errors"
	"testing"
	"time"

	"go.mongodb.org/mongo-driver/v2/bson"

	"github.com/formworkdb/formwork/engine/internal/mongoerr"
)

// scanIDs returns the _id values of c's documents as r sees them.
func scanIDs(t *testing.T, r Reader, c *Collection, reverse bool) []int32 {
	t.Helper()
	recs, err := r.Scan(c, reverse)
	if err != nil {
		t.Fatal(err)
	}
	defer recs.Close()
	var out []int32
	for recs.Next() {
		d, err := recs.Doc()
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, d.Lookup("_id").Int32())
	}
	if err := recs.Err(); err != nil {
		t.Fatal(err)
	}
	return out
}

func seed(t *testing.T, s *Store, ids ...int32) *Collection {
	t.Helper()
	err := s.Write(func(w *Writer) error {
		c, err := w.EnsureCollection("db.c")
		if err != nil {
			return err
		}
		for _, id := range ids {
			if _, err := w.Insert(c, doc(t, bson.D{{Key: "_id", Value: id}, {Key: "v", Value: id}})); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return s.Collection("db.c")
}

func TestTxnSeesSnapshotPlusOwnWrites(t *testing.T) {
	s := open(t, "")
	defer s.Close()
	c := seed(t, s, 1, 2, 3)
	tx, err := s.BeginTxn()
	if err != nil {
		t.Fatal(err)
	}
	// A write committed after Begin is not visible to the transaction.
	seedMore := func() {
		if err := s.Write(func(w *Writer) error {
			_, err := w.Insert(w.Collection("db.c"), doc(t, bson.D{{Key: "_id", Value: int32(9)}}))
			return err
		}); err != nil {
			t.Fatal(err)
		}
	}
	seedMore()
	err = tx.Stage(func(w *Writer) error {
		if _, err := w.Insert(c, doc(t, bson.D{{Key: "_id", Value: int32(4)}})); err != nil {
			return err
		}
		old, err := w.Reader().Fetch(c, 2)
		if err != nil {
			return err
		}
		return w.Delete(c, 2, old)
	})
	if err != nil {
		t.Fatal(err)
	}
	sn := tx.Snapshot()
	if got := scanIDs(t, sn, c, false); len(got) != 3 || got[0] != 1 || got[1] != 3 || got[2] != 4 {
		t.Fatalf("txn scan = %v, want [1 3 4]", got)
	}
	if got := scanIDs(t, sn, c, true); len(got) != 3 || got[0] != 4 || got[2] != 1 {
		t.Fatalf("txn reverse scan = %v, want [4 3 1]", got)
	}
	// The _id index shows the same view.
	es, err := sn.IndexScan(c, c.Indexes[0], nil, nil, false)
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for es.Next() {
		n++
	}
	es.Close()
	if n != 3 {
		t.Fatalf("txn index entries = %d, want 3", n)
	}
	sn.Close()
	// Outside, nothing of the transaction is visible before commit.
	out := s.Snapshot()
	if got := scanIDs(t, out, c, false); len(got) != 4 {
		t.Fatalf("outside scan = %v, want [1 2 3 9]", got)
	}
	out.Close()
	if err := tx.Commit(TxnInfo{}, nil); err != nil {
		t.Fatal(err)
	}
	out = s.Snapshot()
	defer out.Close()
	if got := scanIDs(t, out, s.Collection("db.c"), false); len(got) != 4 || got[1] != 3 || got[3] != 4 {
		t.Fatalf("after commit = %v, want [1 3 9 4]", got)
	}
}

func TestTxnFirstWriterWins(t *testing.T) {
	s := open(t, "")
	defer s.Close()
	c := seed(t, s, 1)
	upd := func(tx *Txn, v int32) error {
		return tx.Stage(func(w *Writer) error {
			old, err := w.Reader().Fetch(c, 1)
			if err != nil {
				return err
			}
			return w.Update(c, 1, old, doc(t, bson.D{{Key: "_id", Value: int32(1)}, {Key: "v", Value: v}}))
		})
	}
	a, _ := s.BeginTxn()
	b, _ := s.BeginTxn()
	if err := upd(a, 10); err != nil {
		t.Fatal(err)
	}
	if err := upd(b, 20); !mongoerr.Is(err, mongoerr.WriteConflict) {
		t.Fatalf("second writer: %v, want WriteConflict", err)
	}
	b.Abort()
	if err := a.Commit(TxnInfo{}, nil); err != nil {
		t.Fatal(err)
	}
	// A transaction that began before a commit conflicts with it.
	d, _ := s.BeginTxn()
	e, _ := s.BeginTxn()
	if err := upd(d, 30); err != nil {
		t.Fatal(err)
	}
	if err := d.Commit(TxnInfo{}, nil); err != nil {
		t.Fatal(err)
	}
	if err := upd(e, 40); !mongoerr.Is(err, mongoerr.WriteConflict) {
		t.Fatalf("stale writer: %v, want WriteConflict", err)
	}
	e.Abort()
	// A plain write to a document a transaction holds waits until the
	// transaction commits, then applies on top of it.
	f, _ := s.BeginTxn()
	if err := upd(f, 50); err != nil {
		t.Fatal(err)
	}
	var lastRead int32 // what the plain write's last attempt read
	plain := func(ctx context.Context, v int32) error {
		return s.WriteWait(ctx, func(w *Writer) error {
			old, err := w.Reader().Fetch(c, 1)
			if err != nil {
				return err
			}
			lastRead = old.Lookup("v").Int32()
			return w.Update(c, 1, old, doc(t, bson.D{{Key: "_id", Value: int32(1)}, {Key: "v", Value: v}}))
		})
	}
	// A deadline ends the wait.
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Millisecond)
	defer cancel()
	if err := plain(ctx, 55); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("plain write with a deadline: %v, want DeadlineExceeded", err)
	}
	waited := make(chan error, 1)
	go func() { waited <- plain(context.Background(), 60) }()
	select {
	case err := <-waited:
		t.Fatalf("plain write did not wait for the transaction: %v", err)
	case <-time.After(50 * time.Millisecond):
	}
	if err := f.Commit(TxnInfo{}, nil); err != nil {
		t.Fatalf("commit: %v", err)
	}
	if err := <-waited; err != nil {
		t.Fatal(err)
	}
	if lastRead != 50 {
		t.Fatalf("plain write applied on v = %d, want the transaction's 50", lastRead)
	}
	sn := s.Snapshot()
	defer sn.Close()
	got, _ := sn.Fetch(c, 1)
	if got.Lookup("v").Int32() != 60 {
		t.Fatalf("v = %v, want 60", got)
	}
	// Store.Write does not wait: the holder fails at commit instead.
	g, _ := s.BeginTxn()
	if err := upd(g, 70); err != nil {
		t.Fatal(err)
	}
	if err := s.Write(func(w *Writer) error {
		old, _ := w.Reader().Fetch(c, 1)
		return w.Update(c, 1, old, doc(t, bson.D{{Key: "_id", Value: int32(1)}, {Key: "v", Value: int32(80)}}))
	}); err != nil {
		t.Fatal(err)
	}
	if err := g.Commit(TxnInfo{}, nil); !errors.Is(err, ErrWriteConflict) {
		t.Fatalf("commit: %v, want WriteConflict", err)
	}
}

func TestTxnCreatesCollectionAndIndex(t *testing.T) {
	s := open(t, "")
	defer s.Close()
	tx, _ := s.BeginTxn()
	err := tx.Stage(func(w *Writer) error {
		c, err := w.EnsureCollection("db.n")
		if err != nil {
			return err
		}
		_, err = w.Insert(c, doc(t, bson.D{{Key: "_id", Value: int32(1)}}))
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	if s.Collection("db.n") != nil {
		t.Fatal("collection visible before commit")
	}
	c := tx.Collection("db.n")
	sn := tx.Snapshot()
	if got := scanIDs(t, sn, c, false); len(got) != 1 {
		t.Fatalf("txn scan = %v", got)
	}
	sn.Close()
	if err := tx.Commit(TxnInfo{}, nil); err != nil {
		t.Fatal(err)
	}
	c = s.Collection("db.n")
	if c == nil {
		t.Fatal("collection missing after commit")
	}
	out := s.Snapshot()
	defer out.Close()
	if got := scanIDs(t, out, c, false); len(got) != 1 {
		t.Fatalf("scan after commit = %v", got)
	}
}

// TestTxnViewSharedByReaders: a transaction that never writes is a view
// several goroutines read at once (snapshot reads share one).
func TestTxnViewSharedByReaders(t *testing.T) {
	s := open(t, "")
	defer s.Close()
	c := seed(t, s, 1, 2, 3)
	v, err := s.BeginTxn()
	if err != nil {
		t.Fatal(err)
	}
	seedMore := s.Write(func(w *Writer) error {
		_, err := w.Insert(w.Collection("db.c"), doc(t, bson.D{{Key: "_id", Value: int32(4)}}))
		return err
	})
	if seedMore != nil {
		t.Fatal(seedMore)
	}
	done := make(chan []int32, 4)
	for range 4 {
		go func() {
			sn := v.Snapshot()
			defer sn.Close()
			done <- scanIDs(t, sn, c, false)
		}()
	}
	for range 4 {
		if got := <-done; len(got) != 3 {
			t.Errorf("view scan = %v, want the 3 documents of its time", got)
		}
	}
	v.Abort()
}
