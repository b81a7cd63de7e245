package storage

import (
	"fmt"
	"math/rand/v2"
	"testing"

	"go.mongodb.org/mongo-driver/v2/bson"
)

// BenchmarkRead reads every document of an n-document collection from
// one snapshot: by a scan, by fetches in record id order (what an index
// on an ascending field yields) and by fetches in random order.
func BenchmarkRead(b *testing.B) {
	for _, n := range []int{10000, 100000} {
		s, c := benchStore(b, n)
		order := rand.Perm(n)
		for _, mode := range []string{"scan", "fetch-ordered", "fetch-random", "get-random"} {
			b.Run(fmt.Sprintf("docs=%d/%s", n, mode), func(b *testing.B) {
				for b.Loop() {
					sn := s.Snapshot()
					switch mode {
					case "scan":
						r, err := sn.Scan(c, false)
						if err != nil {
							b.Fatal(err)
						}
						for r.Next() {
							if _, err := r.Doc(); err != nil {
								b.Fatal(err)
							}
						}
						r.Close()
					case "fetch-ordered":
						for rid := int64(1); rid <= int64(n); rid++ {
							if d, err := sn.Fetch(c, rid); d == nil || err != nil {
								b.Fatalf("fetch %d: %v", rid, err)
							}
						}
					case "fetch-random":
						for _, i := range order {
							if d, err := sn.Fetch(c, int64(i+1)); d == nil || err != nil {
								b.Fatalf("fetch %d: %v", i+1, err)
							}
						}
					case "get-random":
						for _, i := range order {
							if d, err := pointGet(sn.snap, recordKey(c.ID, int64(i+1))); d == nil || err != nil {
								b.Fatalf("get %d: %v", i+1, err)
							}
						}
					}
					sn.Close()
				}
				b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*n), "ns/doc")
			})
		}
		s.Close()
	}
}

// benchStore returns an in-memory store whose collection db.c holds n
// documents of about 200 bytes, inserted 1,000 to a batch.
func benchStore(b *testing.B, n int) (*Store, *Collection) {
	b.Helper()
	s, err := Open(Options{})
	if err != nil {
		b.Fatal(err)
	}
	pad := fmt.Sprintf("%0150d", 0)
	for lo := 0; lo < n; lo += 1000 {
		err := s.Write(func(w *Writer) error {
			c, err := w.EnsureCollection("db.c")
			if err != nil {
				return err
			}
			for i := lo; i < min(lo+1000, n); i++ {
				d, err := bson.Marshal(bson.D{{Key: "_id", Value: i}, {Key: "g", Value: "x"}, {Key: "seq", Value: i}, {Key: "pad", Value: pad}})
				if err != nil {
					return err
				}
				if _, err := w.Insert(c, d); err != nil {
					return err
				}
			}
			return nil
		})
		if err != nil {
			b.Fatal(err)
		}
	}
	return s, s.Collection("db.c")
}
