package storage

import (
	"context"
	"errors"
	"testing"
	"time"

	"go.mongodb.org/mongo-driver/v2/bson"
)

// A DDL write waits behind an open transaction that holds a document of
// its collection, until the transaction ends or the deadline passes; a
// transaction on another collection does not block it.
func TestWriteExclusiveWaitsForTransaction(t *testing.T) {
	s := open(t, "")
	defer s.Close()
	c := seed(t, s, 1)
	if err := s.Write(func(w *Writer) error { _, err := w.EnsureCollection("db.other"); return err }); err != nil {
		t.Fatal(err)
	}
	tx, _ := s.BeginTxn()
	if err := tx.Stage(func(w *Writer) error {
		old, err := w.Reader().Fetch(c, 1)
		if err != nil {
			return err
		}
		return w.Update(c, 1, old, doc(t, bson.D{{Key: "_id", Value: int32(1)}, {Key: "v", Value: int32(9)}}))
	}); err != nil {
		t.Fatal(err)
	}
	onNS := func(ns string) func(*Collection) bool {
		return func(c *Collection) bool { return c.NS == ns }
	}
	drop := func(ctx context.Context, ns string) error {
		return s.WriteExclusive(ctx, onNS(ns), func(w *Writer) error { return w.DropCollection(ns) })
	}
	if err := drop(context.Background(), "db.other"); err != nil {
		t.Fatalf("drop of a collection no transaction holds: %v", err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Millisecond)
	defer cancel()
	if err := drop(ctx, "db.c"); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("drop with a deadline: %v, want DeadlineExceeded", err)
	}
	if s.Collection("db.c") == nil {
		t.Fatal("the timed-out drop dropped the collection")
	}
	done := make(chan error, 1)
	go func() { done <- drop(context.Background(), "db.c") }()
	select {
	case err := <-done:
		t.Fatalf("drop did not wait for the transaction: %v", err)
	case <-time.After(50 * time.Millisecond):
	}
	if err := tx.Commit(TxnInfo{}, nil); err != nil {
		t.Fatalf("the transaction must commit before the drop: %v", err)
	}
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	if s.Collection("db.c") != nil {
		t.Fatal("collection still there after the drop")
	}
}

// Writer.Held names the documents an open transaction holds.
func TestWriterHeld(t *testing.T) {
	s := open(t, "")
	defer s.Close()
	c := seed(t, s, 1, 2)
	tx, _ := s.BeginTxn()
	if err := tx.Stage(func(w *Writer) error {
		old, err := w.Reader().Fetch(c, 1)
		if err != nil {
			return err
		}
		return w.Delete(c, 1, old)
	}); err != nil {
		t.Fatal(err)
	}
	check := func(want1 bool) {
		t.Helper()
		_ = s.Write(func(w *Writer) error {
			if got := w.Held(c, 1); got != want1 {
				t.Errorf("Held(1) = %v, want %v", got, want1)
			}
			if w.Held(c, 2) {
				t.Error("Held(2) = true")
			}
			return nil
		})
	}
	check(true)
	tx.Abort()
	check(false)
}
