package storage

import (
	"testing"
	"time"

	"go.mongodb.org/mongo-driver/v2/bson"
)

func ext(t *testing.T, b []byte) string {
	t.Helper()
	j, err := bson.MarshalExtJSON(bson.Raw(b), false, false)
	if err != nil {
		t.Fatal(err)
	}
	return string(j)
}

// TestDiffDocs checks the $v:2 diffs of nested, moved, removed and array
// changes.
func TestDiffDocs(t *testing.T) {
	cases := []struct {
		old, doc bson.D
		want     string
	}{
		{bson.D{{Key: "a", Value: 1}}, bson.D{{Key: "a", Value: 1}}, `{}`},
		{bson.D{{Key: "a", Value: 1}, {Key: "b", Value: 2}, {Key: "c", Value: 3}}, bson.D{{Key: "a", Value: 1}, {Key: "c", Value: 3}}, `{"d":{"b":false}}`},
		{bson.D{{Key: "a", Value: 1}, {Key: "b", Value: 2}}, bson.D{{Key: "b", Value: 2}, {Key: "a", Value: 1}}, `{"i":{"a":1}}`},
		{bson.D{{Key: "a", Value: int32(1)}}, bson.D{{Key: "a", Value: int64(1)}}, `{"u":{"a":1}}`},
		{
			bson.D{{Key: "x", Value: bson.D{{Key: "long1", Value: "aaaaaaaaaaaaaaaaaaaa"}, {Key: "y", Value: 1}}}},
			bson.D{{Key: "x", Value: bson.D{{Key: "long1", Value: "aaaaaaaaaaaaaaaaaaaa"}, {Key: "y", Value: 2}}}},
			`{"sx":{"u":{"y":2}}}`,
		},
		{
			bson.D{{Key: "a", Value: bson.A{"aaaaaaaaaaaaaaaa", 2, 3}}},
			bson.D{{Key: "a", Value: bson.A{"aaaaaaaaaaaaaaaa", 5}}},
			`{"sa":{"a":true,"l":2,"u1":5}}`,
		},
		{
			bson.D{{Key: "a", Value: bson.A{"aaaaaaaaaaaaaaaa"}}},
			bson.D{{Key: "a", Value: bson.A{"aaaaaaaaaaaaaaaa", 5}}},
			`{"sa":{"a":true,"u1":5}}`,
		},
	}
	for _, c := range cases {
		o, _ := bson.Marshal(c.old)
		d, _ := bson.Marshal(c.doc)
		if got := ext(t, diffDocs(o, d, 0)); got != c.want {
			t.Errorf("diff(%v, %v) = %s, want %s", c.old, c.doc, got, c.want)
		}
	}
}

// TestOplogTransactionIsOneApplyOps marks a Writer and checks that its
// writes become one applyOps entry with lsid and txnNumber.
func TestOplogTransactionIsOneApplyOps(t *testing.T) {
	s := open(t, "")
	defer s.Close()
	lsid, _ := bson.Marshal(bson.D{{Key: "id", Value: bson.Binary{Subtype: 4, Data: make([]byte, 16)}}})
	before := s.LastApplied()
	err := s.Write(func(w *Writer) error {
		w.MarkTransaction(TxnInfo{LSID: lsid, TxnNumber: 7})
		c, err := w.EnsureCollection("db.t")
		if err != nil {
			return err
		}
		for i := range 3 {
			if _, err := w.Insert(c, doc(t, bson.D{{Key: "_id", Value: i}})); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	sn := s.Snapshot()
	defer sn.Close()
	recs, err := sn.OplogFrom(s.Collection(OplogNS), before)
	if err != nil {
		t.Fatal(err)
	}
	defer recs.Close()
	n := 0
	for recs.Next() {
		d, _ := recs.Doc()
		n++
		if d.Lookup("txnNumber").Int64() != 7 || d.Lookup("op").StringValue() != "c" {
			t.Fatalf("entry %s", d)
		}
		ops, _ := d.Lookup("o", "applyOps").Array().Values()
		if len(ops) != 4 { // create and three inserts
			t.Fatalf("applyOps has %d ops: %s", len(ops), d)
		}
		if UnpackTS(recs.RecordID()) != s.LastApplied() {
			t.Fatalf("record id %v, last applied %v", UnpackTS(recs.RecordID()), s.LastApplied())
		}
	}
	if n != 1 {
		t.Fatalf("%d entries", n)
	}
}

// TestOplogTruncatesInBackground fills a small oplog and waits for
// truncation to bring it under its cap, keeping the newest entry.
func TestOplogTruncatesInBackground(t *testing.T) {
	s, err := Open(Options{OplogSize: 64 << 10})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	pad := make([]byte, 1000)
	for i := range 200 {
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
	deadline := time.Now().Add(10 * time.Second)
	for s.oplog.truncating.Load() || s.oplog.size.Load() > 64<<10 {
		if time.Now().After(deadline) {
			t.Fatalf("oplog size %d", s.oplog.size.Load())
		}
		time.Sleep(10 * time.Millisecond)
	}
	if s.OplogTruncatedTo().T == 0 {
		t.Fatal("no truncation point")
	}
	sn := s.Snapshot()
	defer sn.Close()
	recs, _ := sn.OplogFrom(s.Collection(OplogNS), bson.Timestamp{})
	defer recs.Close()
	if !recs.Next() || !tsAfter(UnpackTS(recs.RecordID()), s.OplogTruncatedTo()) {
		t.Fatal("oldest entry not after the truncation point")
	}
}

// TestOplogSurvivesRestart reopens a store on disk: the oplog keeps its
// entries and the clock continues after the newest one.
func TestOplogSurvivesRestart(t *testing.T) {
	dir := t.TempDir()
	s := open(t, dir)
	err := s.Write(func(w *Writer) error {
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
	last := s.LastApplied()
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	s = open(t, dir)
	defer s.Close()
	if s.LastApplied() != last {
		t.Fatalf("last applied %v after restart, want %v", s.LastApplied(), last)
	}
	if next := s.Clock().Tick(); !tsAfter(next, last) {
		t.Fatalf("clock %v not after %v", next, last)
	}
	if _, used := s.OplogSize(); used <= 0 {
		t.Fatal("oplog size not loaded")
	}
}
