package storage

import (
	"errors"
	"testing"

	"go.mongodb.org/mongo-driver/v2/bson"

	"github.com/formworkdb/formwork/engine/internal/mongoerr"
)

func open(t *testing.T, dir string) *Store {
	t.Helper()
	s, err := Open(Options{Dir: dir})
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func doc(t *testing.T, d bson.D) bson.Raw {
	b, err := bson.Marshal(d)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func TestUniqueIndexRejectsDuplicateAndStagesNothing(t *testing.T) {
	s := open(t, "")
	defer s.Close()
	err := s.Write(func(w *Writer) error {
		c, err := w.EnsureCollection("db.c")
		if err != nil {
			return err
		}
		if _, err := w.Insert(c, doc(t, bson.D{{Key: "_id", Value: 1}})); err != nil {
			return err
		}
		_, err = w.Insert(c, doc(t, bson.D{{Key: "_id", Value: 1}, {Key: "x", Value: 2}}))
		var dk *DuplicateKeyError
		if !errors.As(err, &dk) || dk.Index.Name != "_id_" {
			t.Fatalf("second insert: %v", err)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	sn := s.Snapshot()
	defer sn.Close()
	st, err := CollStats(sn, s.Collection("db.c"))
	if err != nil {
		t.Fatal(err)
	}
	if st.Count != 1 {
		t.Fatalf("count = %d, want 1", st.Count)
	}
}

func TestFailedWriteAppliesNothing(t *testing.T) {
	s := open(t, "")
	defer s.Close()
	boom := errors.New("boom")
	err := s.Write(func(w *Writer) error {
		c, _ := w.EnsureCollection("db.c")
		w.Insert(c, doc(t, bson.D{{Key: "_id", Value: 1}}))
		return boom
	})
	if err != boom {
		t.Fatalf("err = %v", err)
	}
	if s.Collection("db.c") != nil {
		t.Fatal("collection created by a failed write")
	}
}

func TestUpdateMovesIndexEntries(t *testing.T) {
	s := open(t, "")
	defer s.Close()
	var rid int64
	var c *Collection
	s.Write(func(w *Writer) error {
		c, _ = w.EnsureCollection("db.c")
		rid, _ = w.Insert(c, doc(t, bson.D{{Key: "_id", Value: 1}}))
		return nil
	})
	err := s.Write(func(w *Writer) error {
		return w.Update(c, rid, doc(t, bson.D{{Key: "_id", Value: 1}}), doc(t, bson.D{{Key: "_id", Value: 2}}))
	})
	if err != nil {
		t.Fatal(err)
	}
	sn := s.Snapshot()
	defer sn.Close()
	k2, _, _ := c.Indexes[0].Def.Keys(doc(t, bson.D{{Key: "_id", Value: 2}}))
	k1, _, _ := c.Indexes[0].Def.Keys(doc(t, bson.D{{Key: "_id", Value: 1}}))
	if got, ok, _ := sn.Lookup(c, c.Indexes[0], k2[0]); !ok || got != rid {
		t.Fatalf("new key -> %d %v", got, ok)
	}
	if _, ok, _ := sn.Lookup(c, c.Indexes[0], k1[0]); ok {
		t.Fatal("old key still present")
	}
}

func TestCatalogSurvivesReopenAndRename(t *testing.T) {
	dir := t.TempDir()
	s := open(t, dir)
	s.Write(func(w *Writer) error {
		c, _ := w.CreateCollection("db.a", doc(t, bson.D{{Key: "storageEngine", Value: bson.D{}}}))
		w.Insert(c, doc(t, bson.D{{Key: "_id", Value: 1}}))
		return nil
	})
	if err := s.Write(func(w *Writer) error { return w.RenameCollection("db.a", "other.b") }); err != nil {
		t.Fatal(err)
	}
	err := s.Write(func(w *Writer) error { _, err := w.CreateCollection("other.b", nil); return err })
	if !mongoerr.Is(err, mongoerr.NamespaceExists) {
		t.Fatalf("create existing: %v", err)
	}
	s.Close()
	s = open(t, dir)
	defer s.Close()
	if s.Collection("db.a") != nil {
		t.Fatal("old name survived")
	}
	c := s.Collection("other.b")
	if c == nil || c.Options.Lookup("storageEngine").Type != bson.TypeEmbeddedDocument {
		t.Fatalf("renamed collection = %+v", c)
	}
	sn := s.Snapshot()
	defer sn.Close()
	recs, _ := sn.Scan(c, false)
	n := 0
	for recs.Next() {
		n++
	}
	recs.Close()
	if n != 1 {
		t.Fatalf("documents after reopen = %d", n)
	}
	if got := s.Databases(); len(got) != 2 || got[0] != "local" || got[1] != "other" {
		t.Fatalf("databases = %v", got)
	}
}
