package archive_test

import (
	"bytes"
	"context"
	"fmt"
	"testing"
	"time"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo"

	"github.com/formworkdb/formwork/pattern/archive"
)

// order is the user's document type in these tests.
type order struct {
	ID        int       `bson:"_id"`
	Customer  string    `bson:"customerId"`
	CreatedAt time.Time `bson:"createdAt"`
	Total     int       `bson:"total"`
	Keep      bool      `bson:"keep,omitempty"`
}

// day0 is the first order's date; now is the runs' start.
var (
	day0 = time.Date(2020, 1, 1, 6, 0, 0, 0, time.UTC)
	now  = time.Date(2020, 3, 1, 0, 0, 0, 0, time.UTC)
)

// loadOrders inserts n orders, one every 7 hours from day0, and returns
// them as stored (raw, by _id).
func loadOrders(t testing.TB, live *mongo.Collection, n int) map[int]bson.Raw {
	t.Helper()
	ctx := context.Background()
	docs := make([]any, n)
	for i := range n {
		docs[i] = order{ID: i, Customer: fmt.Sprint("c", i%5), CreatedAt: day0.Add(time.Duration(i) * 7 * time.Hour), Total: i * 3}
	}
	if _, err := live.InsertMany(ctx, docs); err != nil {
		t.Fatal(err)
	}
	return snapshot(t, live)
}

// snapshot returns every document of c as stored, by _id.
func snapshot(t testing.TB, c *mongo.Collection) map[int]bson.Raw {
	t.Helper()
	ctx := context.Background()
	cur, err := c.Find(ctx, bson.D{})
	if err != nil {
		t.Fatal(err)
	}
	defer cur.Close(ctx)
	out := map[int]bson.Raw{}
	for cur.Next(ctx) {
		id := int(cur.Current.Lookup("_id").AsInt64())
		out[id] = bson.Raw(append([]byte(nil), cur.Current...))
	}
	if err := cur.Err(); err != nil {
		t.Fatal(err)
	}
	return out
}

// assertPartition checks that live and archive hold exactly the
// original documents between them, byte for byte, none in both, and
// that every document older than cutoff is archived and none newer.
func assertPartition(t testing.TB, a *archive.Archiver[order], orig map[int]bson.Raw, cutoff time.Time) {
	t.Helper()
	live, arch := snapshot(t, a.Live()), snapshot(t, a.Archive())
	if len(live)+len(arch) != len(orig) {
		t.Fatalf("live %d + archive %d = %d documents, want %d", len(live), len(arch), len(live)+len(arch), len(orig))
	}
	for id, want := range orig {
		l, inLive := live[id]
		r, inArch := arch[id]
		switch {
		case inLive && inArch:
			t.Fatalf("order %d is both live and archived", id)
		case !inLive && !inArch:
			t.Fatalf("order %d is lost", id)
		case inLive && !bytes.Equal(l, want), inArch && !sameFields(t, r, want):
			t.Fatalf("order %d changed: live %v archive %v, want %v", id, l, r, want)
		}
		old := want.Lookup("createdAt").Time().Before(cutoff)
		if old != inArch {
			t.Fatalf("order %d (createdAt %v, cutoff %v): archived %v", id, want.Lookup("createdAt").Time(), cutoff, inArch)
		}
	}
}

// sameFields reports whether a and b hold the same top-level fields with
// the same values, in any order: a copy made with KeepExisting is
// inserted by an upsert with $setOnInsert, which (in MongoDB as in the
// engine) writes the fields after _id in name order.
func sameFields(t testing.TB, a, b bson.Raw) bool {
	t.Helper()
	ea, err := a.Elements()
	if err != nil {
		t.Fatal(err)
	}
	eb, err := b.Elements()
	if err != nil {
		t.Fatal(err)
	}
	if len(ea) != len(eb) {
		return false
	}
	for _, e := range ea {
		v, err := b.LookupErr(e.Key())
		if err != nil || !v.Equal(e.Value()) {
			return false
		}
	}
	return true
}
