package storage

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sort"
	"sync"
	"testing"
	"time"

	"github.com/cockroachdb/pebble/v2"
	"go.mongodb.org/mongo-driver/v2/bson"

	"github.com/formworkdb/formwork/engine/internal/index"
)

// buildSpec parses an index spec document.
func buildSpec(t testing.TB, d bson.D) index.Spec {
	t.Helper()
	raw, err := bson.Marshal(d)
	if err != nil {
		t.Fatal(err)
	}
	sp, err := index.ParseSpec(raw)
	if err != nil {
		t.Fatal(err)
	}
	return sp
}

// fillBuild inserts n documents {_id: i, a: i % 10, u: i} into db.c.
func fillBuild(t testing.TB, s *Store, n int) {
	t.Helper()
	for lo := 0; lo < n; lo += 1000 {
		err := s.Write(func(w *Writer) error {
			c, err := w.EnsureCollection("db.c")
			if err != nil {
				return err
			}
			for i := lo; i < min(n, lo+1000); i++ {
				raw, _ := bson.Marshal(bson.D{{Key: "_id", Value: i}, {Key: "a", Value: i % 10}, {Key: "u", Value: i}})
				if _, err := w.Insert(c, raw); err != nil {
					return err
				}
			}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
	}
}

// beginBuild starts a build of specs on db.c.
func beginBuild(t testing.TB, s *Store, specs ...index.Spec) *IndexBuild {
	t.Helper()
	b, err := s.BeginIndexBuild(func(w *Writer) (string, []index.Spec, error) { return "db.c", specs, nil })
	if err != nil || b == nil {
		t.Fatalf("begin: %v %v", b, err)
	}
	return b
}

// keepAll is a Commit check that publishes every built index.
func keepAll(c *Collection, ixs []*Index) ([]bool, error) {
	keep := make([]bool, len(ixs))
	for i := range keep {
		keep[i] = true
	}
	return keep, nil
}

// writeColl runs fn on db.c in one Write.
func writeColl(t testing.TB, s *Store, fn func(w *Writer, c *Collection) error) {
	t.Helper()
	if err := s.Write(func(w *Writer) error { return fn(w, w.Collection("db.c")) }); err != nil {
		t.Fatal(err)
	}
}

// updateDoc replaces the document with _id id by fields.
func updateDoc(t testing.TB, w *Writer, c *Collection, id int, fields bson.D) error {
	rid, old := findID(t, w, c, id)
	raw, _ := bson.Marshal(append(bson.D{{Key: "_id", Value: id}}, fields...))
	return w.Update(c, rid, old, raw)
}

// findID returns the record id and document with _id id.
func findID(t testing.TB, w *Writer, c *Collection, id int) (int64, bson.Raw) {
	t.Helper()
	recs, err := w.Reader().Scan(c, false)
	if err != nil {
		t.Fatal(err)
	}
	defer recs.Close()
	for recs.Next() {
		d, _ := recs.Doc()
		if v, ok := d.Lookup("_id").AsInt64OK(); ok && v == int64(id) {
			return recs.RecordID(), d
		}
	}
	t.Fatalf("no document %d", id)
	return 0, nil
}

// checkExact asserts that every index of db.c holds exactly the keys of
// its documents.
func checkExact(t testing.TB, s *Store) {
	t.Helper()
	c := s.Collection("db.c")
	sn := s.Snapshot()
	defer sn.Close()
	for _, ix := range c.Indexes {
		want := map[string][]int64{}
		recs, err := sn.Scan(c, false)
		if err != nil {
			t.Fatal(err)
		}
		for recs.Next() {
			d, _ := recs.Doc()
			keys, _, err := ix.Def.Keys(d)
			if err != nil {
				t.Fatal(err)
			}
			for _, k := range keys {
				want[string(k)] = append(want[string(k)], recs.RecordID())
			}
		}
		recs.Close()
		have, err := IndexEntries(sn, c, ix)
		if err != nil {
			t.Fatal(err)
		}
		if len(have) != len(want) {
			t.Fatalf("index %s: %d keys, want %d", ix.Name, len(have), len(want))
		}
		for k, rids := range want {
			got := slices.Clone(have[k])
			slices.Sort(got)
			slices.Sort(rids)
			if !slices.Equal(got, rids) {
				t.Fatalf("index %s key %x: records %v, want %v", ix.Name, k, got, rids)
			}
		}
	}
}

// TestIndexBuildAppliesSideWrites: inserts, updates and deletes made
// after the build's snapshot, before and after its scan, end up in the
// published indexes exactly.
func TestIndexBuildAppliesSideWrites(t *testing.T) {
	s := open(t, t.TempDir())
	defer s.Close()
	fillBuild(t, s, 2000)
	b := beginBuild(t, s, buildSpec(t, bson.D{{Key: "key", Value: bson.D{{Key: "a", Value: 1}}}, {Key: "name", Value: "a_1"}}),
		buildSpec(t, bson.D{{Key: "key", Value: bson.D{{Key: "u", Value: 1}}}, {Key: "name", Value: "u_1"}, {Key: "unique", Value: true}}))
	writeColl(t, s, func(w *Writer, c *Collection) error {
		raw, _ := bson.Marshal(bson.D{{Key: "_id", Value: 5000}, {Key: "a", Value: bson.A{1, 2}}, {Key: "u", Value: 5000}})
		if _, err := w.Insert(c, raw); err != nil {
			return err
		}
		if err := updateDoc(t, w, c, 5, bson.D{{Key: "a", Value: 77}, {Key: "u", Value: -5}}); err != nil {
			return err
		}
		rid, d := findID(t, w, c, 7)
		return w.Delete(c, rid, d)
	})
	if err := b.Run(context.Background()); err != nil {
		t.Fatal(err)
	}
	writeColl(t, s, func(w *Writer, c *Collection) error {
		// u 7 is free again (its document was deleted): take it.
		return updateDoc(t, w, c, 8, bson.D{{Key: "a", Value: 8}, {Key: "u", Value: 7}})
	})
	// Enough side writes for Commit to drain them in passes first.
	for id := 100; id < 700; id++ {
		writeColl(t, s, func(w *Writer, c *Collection) error {
			return updateDoc(t, w, c, id, bson.D{{Key: "a", Value: id}, {Key: "u", Value: id + 100_000}})
		})
	}
	c, err := b.Commit(keepAll)
	if err != nil {
		t.Fatal(err)
	}
	if len(c.Indexes) != 3 || !c.Indexes[1].IsMultikey() {
		t.Fatalf("published %d indexes, a_1 multikey %v", len(c.Indexes), c.Indexes[1].IsMultikey())
	}
	checkExact(t, s)
	// Writes after the build maintain the index as usual.
	writeColl(t, s, func(w *Writer, c *Collection) error {
		raw, _ := bson.Marshal(bson.D{{Key: "_id", Value: 5001}, {Key: "u", Value: 5000}})
		_, err := w.Insert(c, raw)
		var dk *DuplicateKeyError
		if !errors.As(err, &dk) {
			t.Fatalf("duplicate after the build: %v", err)
		}
		return nil
	})
}

// TestIndexBuildDuplicates: a duplicate written during the build fails
// it with DuplicateKeyError and leaves no entries; a duplicate present in
// the snapshot that a concurrent delete resolves does not.
func TestIndexBuildDuplicates(t *testing.T) {
	s := open(t, "")
	defer s.Close()
	fillBuild(t, s, 1000)
	uniq := buildSpec(t, bson.D{{Key: "key", Value: bson.D{{Key: "u", Value: 1}}}, {Key: "name", Value: "u_1"}, {Key: "unique", Value: true}})
	b := beginBuild(t, s, uniq)
	if err := b.Run(context.Background()); err != nil {
		t.Fatal(err)
	}
	writeColl(t, s, func(w *Writer, c *Collection) error {
		raw, _ := bson.Marshal(bson.D{{Key: "_id", Value: -1}, {Key: "u", Value: 42}})
		_, err := w.Insert(c, raw)
		return err
	})
	_, err := b.Commit(keepAll)
	var dk *DuplicateKeyError
	if !errors.As(err, &dk) {
		t.Fatalf("commit with a duplicate: %v", err)
	}
	c := s.Collection("db.c")
	if len(c.Indexes) != 1 {
		t.Fatalf("%d indexes after a failed build", len(c.Indexes))
	}
	it, _ := s.db.NewIter(&pebble.IterOptions{LowerBound: collIndexPrefix(c.ID), UpperBound: prefixEnd(collIndexPrefix(c.ID))})
	n := 0
	for it.First(); it.Valid(); it.Next() {
		n++
	}
	it.Close()
	if n != 1001 {
		t.Fatalf("%d index entries after the failed build, want the _id index's 1001", n)
	}

	// The duplicate is in the snapshot now; deleting it during the next
	// build resolves it.
	b = beginBuild(t, s, uniq)
	if err := b.Run(context.Background()); err != nil {
		t.Fatal(err)
	}
	writeColl(t, s, func(w *Writer, c *Collection) error {
		rid, d := findID(t, w, c, -1)
		return w.Delete(c, rid, d)
	})
	if _, err := b.Commit(keepAll); err != nil {
		t.Fatal(err)
	}
	checkExact(t, s)
}

// TestIndexBuildInterruptedLeavesNothing: a build whose process dies
// after writing entries leaves them under an index id the catalog does
// not know; Open removes them.
func TestIndexBuildInterruptedLeavesNothing(t *testing.T) {
	dir := t.TempDir()
	s := open(t, dir)
	fillBuild(t, s, 500)
	b := beginBuild(t, s, buildSpec(t, bson.D{{Key: "key", Value: bson.D{{Key: "a", Value: 1}}}, {Key: "name", Value: "a_1"}}))
	if err := b.Run(context.Background()); err != nil {
		t.Fatal(err)
	}
	id := b.Indexes[0].ID
	s.unregisterBuild(b)
	b.finish() // as a crash would: no abort
	collID := s.Collection("db.c").ID
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	s = open(t, dir)
	defer s.Close()
	p := indexPrefix(collID, id)
	it, _ := s.db.NewIter(&pebble.IterOptions{LowerBound: p, UpperBound: prefixEnd(p)})
	defer it.Close()
	if it.First() {
		t.Fatal("entries of the interrupted build survived Open")
	}
	checkExact(t, s)
}

// BenchmarkIndexBuildWriteLatency builds 4 indexes on 100k documents
// while 4 writers insert (each pausing 1 ms between writes), and reports the writes acknowledged during the
// build and their latency, for the blocking build (the whole build under
// the write lock, as before) and the hybrid one, in the same run.
func BenchmarkIndexBuildWriteLatency(b *testing.B) {
	const docs = 100_000
	specs := []bson.D{
		{{Key: "key", Value: bson.D{{Key: "a", Value: 1}}}, {Key: "name", Value: "a_1"}},
		{{Key: "key", Value: bson.D{{Key: "u", Value: -1}}}, {Key: "name", Value: "u_-1"}},
		{{Key: "key", Value: bson.D{{Key: "a", Value: 1}, {Key: "u", Value: 1}}}, {Key: "name", Value: "a_1_u_1"}},
		{{Key: "key", Value: bson.D{{Key: "u", Value: 1}}}, {Key: "name", Value: "u_1"}, {Key: "unique", Value: true}},
	}
	for _, mode := range []string{"blocking", "hybrid"} {
		b.Run("build="+mode, func(b *testing.B) {
			var all []time.Duration
			var buildTime time.Duration
			for range b.N {
				b.StopTimer()
				s, err := Open(Options{})
				if err != nil {
					b.Fatal(err)
				}
				fillBuild(b, s, docs)
				var sps []index.Spec
				for _, d := range specs {
					sps = append(sps, buildSpec(b, d))
				}
				b.StartTimer()
				stop := make(chan struct{})
				var mu sync.Mutex
				var wg sync.WaitGroup
				for w := range 4 {
					wg.Add(1)
					go func() {
						defer wg.Done()
						for i := 0; ; i++ {
							select {
							case <-stop:
								return
							default:
							}
							start := time.Now()
							err := s.Write(func(wr *Writer) error {
								raw, _ := bson.Marshal(bson.D{{Key: "_id", Value: fmt.Sprint(w, "-", i)}, {Key: "a", Value: i}, {Key: "u", Value: -1 - w*10_000_000 - i}})
								_, err := wr.Insert(wr.Collection("db.c"), raw)
								return err
							})
							if err != nil {
								b.Error(err)
								return
							}
							d := time.Since(start)
							mu.Lock()
							all = append(all, d)
							mu.Unlock()
							time.Sleep(time.Millisecond) // a paced client, not a flood
						}
					}()
				}
				time.Sleep(5 * time.Millisecond)
				start := time.Now()
				if mode == "blocking" {
					err = s.Write(func(w *Writer) error {
						for _, sp := range sps {
							if _, err := w.CreateIndex("db.c", sp); err != nil {
								return err
							}
						}
						return nil
					})
				} else {
					bld := beginBuild(b, s, sps...)
					if err = bld.Run(context.Background()); err == nil {
						_, err = bld.Commit(keepAll)
					}
				}
				buildTime += time.Since(start)
				close(stop)
				wg.Wait()
				if err != nil {
					b.Fatal(err)
				}
				b.StopTimer()
				s.Close()
			}
			sort.Slice(all, func(i, j int) bool { return all[i] < all[j] })
			b.ReportMetric(float64(buildTime.Milliseconds())/float64(b.N), "build-ms")
			b.ReportMetric(float64(len(all))/float64(b.N), "writes/build")
			if len(all) > 0 {
				b.ReportMetric(float64(all[len(all)/2].Microseconds()), "p50-µs")
				b.ReportMetric(float64(all[len(all)*99/100].Microseconds()), "p99-µs")
				b.ReportMetric(float64(all[len(all)-1].Microseconds()), "max-µs")
			}
		})
	}
}

// TestIndexBuildCloseDuringBuild: closing the store while a build scans
// stops the build with ErrClosed (or lets it finish) without a panic,
// and Close reports no leaked snapshot.
func TestIndexBuildCloseDuringBuild(t *testing.T) {
	s := open(t, t.TempDir())
	fillBuild(t, s, 20_000)
	b := beginBuild(t, s, buildSpec(t, bson.D{{Key: "key", Value: bson.D{{Key: "a", Value: 1}}}, {Key: "name", Value: "a_1"}}))
	errc := make(chan error, 1)
	go func() {
		err := b.Run(context.Background())
		if err == nil {
			_, err = b.Commit(keepAll)
		} else {
			b.Abort()
		}
		errc <- err
	}()
	for b.done.Load() == 0 {
		time.Sleep(100 * time.Microsecond)
	}
	if err := s.Close(); err != nil {
		t.Fatalf("close during a build: %v", err)
	}
	if err := <-errc; err != nil && !errors.Is(err, ErrClosed) {
		t.Fatalf("build after close: %v", err)
	}
}
