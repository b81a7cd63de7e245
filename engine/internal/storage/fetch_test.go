package storage

import (
	"testing"

	"go.mongodb.org/mongo-driver/v2/bson"
)

// fillColl inserts documents {_id: i} for i in ids into ns and returns
// their record ids by _id.
func fillColl(t *testing.T, s *Store, ns string, ids ...int) map[int]int64 {
	t.Helper()
	rids := map[int]int64{}
	err := s.Write(func(w *Writer) error {
		c, err := w.EnsureCollection(ns)
		if err != nil {
			return err
		}
		for _, id := range ids {
			rid, err := w.Insert(c, doc(t, bson.D{{Key: "_id", Value: id}}))
			if err != nil {
				return err
			}
			rids[id] = rid
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return rids
}

func TestSnapshotFetchInAnyOrder(t *testing.T) {
	s := open(t, "")
	defer s.Close()
	rids := fillColl(t, s, "db.a", 1, 2, 3, 4, 5, 6)
	other := fillColl(t, s, "db.b", 10, 11)
	// Delete 4 so that a fetch of it finds nothing and leaves the
	// iterator on 5.
	a := s.Collection("db.a")
	err := s.Write(func(w *Writer) error {
		return w.Delete(a, rids[4], doc(t, bson.D{{Key: "_id", Value: 4}}))
	})
	if err != nil {
		t.Fatal(err)
	}
	sn := s.Snapshot()
	defer sn.Close()
	b := s.Collection("db.b")
	steps := []struct {
		c    *Collection
		rid  int64
		want any // _id, or nil for no document
	}{
		{a, rids[1], int32(1)}, {a, rids[2], int32(2)}, {a, rids[3], int32(3)},
		{b, other[10], int32(10)},
		{a, rids[4], nil}, {a, rids[5], int32(5)}, {a, rids[6], int32(6)},
		{a, rids[6] + 1, nil}, {a, rids[2], int32(2)}, {a, rids[1], int32(1)},
		{b, other[11], int32(11)}, {a, 999, nil}, {a, rids[3], int32(3)},
	}
	for i, st := range steps {
		d, err := sn.Fetch(st.c, st.rid)
		if err != nil {
			t.Fatalf("step %d: %v", i, err)
		}
		if st.want == nil {
			if d != nil {
				t.Fatalf("step %d: fetch %d = %s, want nothing", i, st.rid, d)
			}
			continue
		}
		if d == nil || d.Lookup("_id").Int32() != st.want {
			t.Fatalf("step %d: fetch %d = %v, want _id %v", i, st.rid, d, st.want)
		}
	}
}

func TestSnapshotFetchIgnoresLaterWrites(t *testing.T) {
	s := open(t, "")
	defer s.Close()
	rids := fillColl(t, s, "db.a", 1, 2)
	c := s.Collection("db.a")
	sn := s.Snapshot()
	defer sn.Close()
	if d, _ := sn.Fetch(c, rids[1]); d == nil {
		t.Fatal("no document 1")
	}
	err := s.Write(func(w *Writer) error {
		return w.Update(c, rids[2], doc(t, bson.D{{Key: "_id", Value: 2}}), doc(t, bson.D{{Key: "_id", Value: 2}, {Key: "x", Value: 1}}))
	})
	if err != nil {
		t.Fatal(err)
	}
	d, err := sn.Fetch(c, rids[2])
	if err != nil || d == nil || len(d.Lookup("x").Value) != 0 {
		t.Fatalf("snapshot fetch after update = %v, %v; want the old document", d, err)
	}
}

func TestWriterFetchSeesStagedWrites(t *testing.T) {
	s := open(t, "")
	defer s.Close()
	rids := fillColl(t, s, "db.a", 1)
	c := s.Collection("db.a")
	err := s.Write(func(w *Writer) error {
		r := w.Reader()
		if d, _ := r.Fetch(c, rids[1]); d == nil {
			t.Fatal("no document 1")
		}
		if err := w.Update(c, rids[1], doc(t, bson.D{{Key: "_id", Value: 1}}), doc(t, bson.D{{Key: "_id", Value: 1}, {Key: "x", Value: 1}})); err != nil {
			return err
		}
		for range 2 {
			d, err := r.Fetch(c, rids[1])
			if err != nil || d == nil || d.Lookup("x").Int32() != 1 {
				t.Fatalf("writer fetch after update = %v, %v", d, err)
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}
