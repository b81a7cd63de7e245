package storage

import (
	"errors"
	"math/rand/v2"
	"testing"

	"go.mongodb.org/mongo-driver/v2/bson"

	"github.com/formworkdb/formwork/engine/internal/index"
)

// isDup reports whether err is a DuplicateKeyError (and fails on others).
func isDup(t *testing.T, err error) bool {
	t.Helper()
	var dk *DuplicateKeyError
	if errors.As(err, &dk) {
		return true
	}
	if err != nil {
		t.Fatalf("unexpected error %v", err)
	}
	return false
}

// write runs fn in one Write and fails the test on its error.
func write(t *testing.T, s *Store, fn func(w *Writer) error) {
	t.Helper()
	if err := s.Write(fn); err != nil {
		t.Fatal(err)
	}
}

func idDoc(t *testing.T, id int, extra ...bson.E) bson.Raw {
	return doc(t, append(bson.D{{Key: "_id", Value: id}}, extra...))
}

// TestUniqueProbeSeesCommittedAndStaged checks the probe (I9) against
// committed entries, entries staged in the same batch, entries the batch
// deleted or moved, and seeks in random order over committed keys.
func TestUniqueProbeSeesCommittedAndStaged(t *testing.T) {
	for _, dir := range []string{"", t.TempDir()} {
		s := open(t, dir)
		var c *Collection
		rids := map[int]int64{}
		write(t, s, func(w *Writer) error {
			var err error
			if c, err = w.EnsureCollection("db.c"); err != nil {
				return err
			}
			for i := 0; i < 200; i += 2 {
				if rids[i], err = w.Insert(c, idDoc(t, i)); err != nil {
					return err
				}
			}
			return nil
		})
		write(t, s, func(w *Writer) error {
			// Random order: odd ids are new, even ids are taken.
			for _, i := range rand.Perm(200) {
				_, err := w.Insert(c, idDoc(t, i))
				if dup := isDup(t, err); dup != (i%2 == 0) {
					t.Fatalf("insert %d: dup=%v", i, dup)
				}
			}
			// Staged in this batch: 1 is taken now.
			if !isDup(t, insertErr(w, c, idDoc(t, 1))) {
				t.Fatal("id 1 staged in this batch was not a duplicate")
			}
			// Deleted in this batch, then free again.
			if err := w.Delete(c, rids[4], idDoc(t, 4)); err != nil {
				return err
			}
			if isDup(t, insertErr(w, c, idDoc(t, 4))) {
				t.Fatal("id 4 deleted in this batch is still a duplicate")
			}
			// Moved by an update: the old key is free, the new one taken.
			if err := w.Update(c, rids[6], idDoc(t, 6), idDoc(t, 1000)); err != nil {
				return err
			}
			if isDup(t, insertErr(w, c, idDoc(t, 6))) {
				t.Fatal("id 6 moved away in this batch is still a duplicate")
			}
			if !isDup(t, insertErr(w, c, idDoc(t, 1000))) {
				t.Fatal("id 1000 moved here in this batch is not a duplicate")
			}
			// An update may keep its own key.
			return w.Update(c, rids[8], idDoc(t, 8), idDoc(t, 8, bson.E{Key: "x", Value: 1}))
		})
		write(t, s, func(w *Writer) error {
			for _, i := range []int{0, 1, 4, 6, 1000, 199} {
				if !isDup(t, insertErr(w, c, idDoc(t, i))) {
					t.Fatalf("id %d committed but not a duplicate", i)
				}
			}
			return nil
		})
		s.Close()
	}
}

func insertErr(w *Writer, c *Collection, d bson.Raw) error {
	_, err := w.Insert(c, d)
	return err
}

// TestUniqueProbeAfterDropAndIndexBuild checks the probe in batches that
// drop and recreate a collection or build a unique index.
func TestUniqueProbeAfterDropAndIndexBuild(t *testing.T) {
	s := open(t, "")
	defer s.Close()
	write(t, s, func(w *Writer) error {
		c, err := w.EnsureCollection("db.c")
		if err != nil {
			return err
		}
		_, err = w.Insert(c, idDoc(t, 1, bson.E{Key: "x", Value: 1}))
		return err
	})
	write(t, s, func(w *Writer) error {
		if err := w.DropCollection("db.c"); err != nil {
			return err
		}
		c, err := w.EnsureCollection("db.c")
		if err != nil {
			return err
		}
		if isDup(t, insertErr(w, c, idDoc(t, 1, bson.E{Key: "x", Value: 1}))) {
			t.Fatal("id 1 of the dropped collection is a duplicate")
		}
		sp, err := index.ParseSpec(doc(t, bson.D{{Key: "key", Value: bson.D{{Key: "x", Value: 1}}}, {Key: "name", Value: "x_1"}, {Key: "unique", Value: true}}))
		if err != nil {
			return err
		}
		if _, err := w.CreateIndex("db.c", sp); err != nil {
			return err
		}
		c = w.Collection("db.c")
		if !isDup(t, insertErr(w, c, idDoc(t, 2, bson.E{Key: "x", Value: 1}))) {
			t.Fatal("x 1 from the index build is not a duplicate")
		}
		if isDup(t, insertErr(w, c, idDoc(t, 3, bson.E{Key: "x", Value: 3}))) {
			t.Fatal("x 3 is a duplicate")
		}
		if !isDup(t, insertErr(w, c, idDoc(t, 4, bson.E{Key: "x", Value: 3}))) {
			t.Fatal("x 3 staged after the index build is not a duplicate")
		}
		return nil
	})
}

// TestUniqueProbeConcurrentWriters has several writers insert the same
// ids, in batches, at once: every id is inserted exactly once.
func TestUniqueProbeConcurrentWriters(t *testing.T) {
	s := open(t, "")
	defer s.Close()
	write(t, s, func(w *Writer) error {
		_, err := w.EnsureCollection("db.c")
		return err
	})
	const writers, ids = 8, 300
	wins := make([]int, writers)
	done := make(chan error, writers)
	for g := range writers {
		go func() {
			done <- s.Write(func(w *Writer) error {
				c := w.Collection("db.c")
				for _, i := range rand.Perm(ids) {
					_, err := w.Insert(c, idDoc(t, i))
					var dk *DuplicateKeyError
					switch {
					case err == nil:
						wins[g]++
					case !errors.As(err, &dk):
						return err
					}
				}
				return nil
			})
		}()
	}
	for range writers {
		if err := <-done; err != nil {
			t.Fatal(err)
		}
	}
	total := 0
	for _, n := range wins {
		total += n
	}
	sn := s.Snapshot()
	defer sn.Close()
	st, err := CollStats(sn, s.Collection("db.c"))
	if err != nil {
		t.Fatal(err)
	}
	if total != ids || st.Count != ids {
		t.Fatalf("inserted %d, count %d, want %d", total, st.Count, ids)
	}
}
