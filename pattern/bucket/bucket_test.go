package bucket

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo/options"

	"github.com/formworkdb/formwork/internal/testenv"
)

func TestConfigValidate(t *testing.T) {
	cases := []struct {
		cfg  Config
		want string // substring of the error; "" for valid
	}{
		{Config{Size: 50}, ""},
		{Config{Size: 1, Owner: "customerId", Elements: "trades", ElementID: "tradeId"}, ""},
		{Config{}, "Size must be at least 1"},
		{Config{Size: -3}, "Size must be at least 1"},
		{Config{Size: 5, Owner: "a.b"}, "contains '.'"},
		{Config{Size: 5, Count: "$count"}, "starts with '$'"},
		{Config{Size: 5, Elements: "_id"}, "reserved"},
		{Config{Size: 5, Owner: "count"}, `Owner and Count are both "count"`},
		{Config{Size: 5, ElementID: "x.y"}, "ElementID"},
	}
	for _, c := range cases {
		err := c.cfg.Validate()
		if c.want == "" && err != nil {
			t.Errorf("%+v: %v", c.cfg, err)
		}
		if c.want != "" && (err == nil || !strings.Contains(err.Error(), c.want)) {
			t.Errorf("%+v: got %v, want error containing %q", c.cfg, err, c.want)
		}
	}
	if _, err := New[trade](nil, Config{Size: 1}); err == nil {
		t.Error("New with nil collection succeeded")
	}
}

// TestAppendSequential checks the catalogue's assertion: 120 sequential
// appends with Size 50 make buckets of 50, 50 and 20, each with
// len(elements) == count, seeded with the owner from the filter.
func TestAppendSequential(t *testing.T) {
	ctx := context.Background()
	s, coll := newStore(t, Config{Size: 50, ElementID: "id"})
	opens := 0
	for i := range 120 {
		opened, err := s.Append(ctx, 123, trade{ID: fmt.Sprintf("t%d", i), Ticker: "MDB", Qty: i})
		if err != nil {
			t.Fatal(err)
		}
		if opened {
			opens++
			if i%50 != 0 {
				t.Errorf("append %d opened a bucket", i)
			}
		}
	}
	if opens != 3 {
		t.Errorf("opened %d buckets, want 3", opens)
	}
	docs := stored(t, coll, bson.D{})
	if len(docs) != 3 {
		t.Fatalf("stored %d buckets, want 3", len(docs))
	}
	next := 0
	for i, want := range []int{50, 50, 20} {
		d := docs[i]
		if got := d.Lookup("owner"); got.Type != bson.TypeInt32 || got.Int32() != 123 {
			t.Errorf("bucket %d: owner %v, want int32 123", i, got)
		}
		if got := d.Lookup("count"); got.Type != bson.TypeInt32 || got.Int32() != int32(want) {
			t.Errorf("bucket %d: count %v, want int32 %d", i, got, want)
		}
		if n := arrayLen(d, "elements"); n != want {
			t.Errorf("bucket %d: %d elements, want %d", i, n, want)
		}
		if d.Lookup("openedAt").Type != bson.TypeDateTime {
			t.Errorf("bucket %d: openedAt %v, not a date", i, d.Lookup("openedAt"))
		}
		if d.Lookup("_id").Type != bson.TypeObjectID {
			t.Errorf("bucket %d: _id %v, want a generated ObjectId", i, d.Lookup("_id"))
		}
		keys, _ := d.Elements()
		if len(keys) != 5 {
			t.Errorf("bucket %d: fields %v, want _id, owner, count, elements, openedAt", i, d)
		}
		vals, _ := d.Lookup("elements").Array().Values()
		for _, v := range vals {
			if got := v.Document().Lookup("id").StringValue(); got != fmt.Sprintf("t%d", next) {
				t.Fatalf("element %d has id %q", next, got)
			}
			next++
		}
	}
}

// TestAppendSetOnInsertCountConflicts shows the mistake the write path
// avoids: count in both $inc and $setOnInsert is rejected with
// ConflictingUpdateOperators (40).
func TestAppendSetOnInsertCountConflicts(t *testing.T) {
	ctx := context.Background()
	coll := testenv.Database(t).Collection("trades")
	_, err := coll.UpdateOne(ctx,
		bson.D{{Key: "owner", Value: 1}, {Key: "count", Value: bson.D{{Key: "$lt", Value: 50}}}},
		bson.D{
			{Key: "$push", Value: bson.D{{Key: "elements", Value: 1}}},
			{Key: "$inc", Value: bson.D{{Key: "count", Value: 1}}},
			{Key: "$setOnInsert", Value: bson.D{{Key: "count", Value: 0}}},
		}, options.UpdateOne().SetUpsert(true))
	if code := serverCode(err); code != 40 {
		t.Fatalf("got %v (code %d), want ConflictingUpdateOperators (40)", err, code)
	}
}

func TestAppendMany(t *testing.T) {
	ctx := context.Background()
	s, coll := newStore(t, Config{Size: 5})
	batch := func(from, n int) []trade {
		var ts []trade
		for i := range n {
			ts = append(ts, trade{ID: fmt.Sprint(from + i)})
		}
		return ts
	}
	steps := []struct {
		n      int
		opened bool
	}{{3, true}, {2, false}, {2, true}, {4, true}, {1, false}}
	at := 0
	for _, st := range steps {
		opened, err := s.AppendMany(ctx, "o", batch(at, st.n))
		if err != nil {
			t.Fatal(err)
		}
		if opened != st.opened {
			t.Errorf("append of %d at %d: opened %v, want %v", st.n, at, opened, st.opened)
		}
		at += st.n
	}
	// 3+2 fill the first; 2 opens a second (3 left); 4 does not fit there
	// and opens a third; 1 goes to either bucket with room.
	var counts []int32
	for _, d := range stored(t, coll, bson.D{}) {
		counts = append(counts, d.Lookup("count").Int32())
		if int(d.Lookup("count").Int32()) != arrayLen(d, "elements") {
			t.Errorf("count %v, %d elements", d.Lookup("count"), arrayLen(d, "elements"))
		}
	}
	total := int32(0)
	for _, c := range counts {
		total += c
		if c > 5 {
			t.Errorf("bucket count %d over Size 5", c)
		}
	}
	if len(counts) != 3 || total != 12 || counts[0] != 5 {
		t.Errorf("counts %v, want 3 buckets holding 12 with the first full", counts)
	}
	for _, n := range []int{0, 6} {
		if _, err := s.AppendMany(ctx, "o", batch(0, n)); err == nil || !strings.HasPrefix(err.Error(), "bucket: append many:") {
			t.Errorf("AppendMany of %d: %v", n, err)
		}
	}
}

func TestAppendRequiresElementID(t *testing.T) {
	ctx := context.Background()
	coll := testenv.Database(t).Collection("x")
	s, err := New[bson.D](coll, Config{Size: 3, ElementID: "id"})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.Append(ctx, 1, bson.D{{Key: "other", Value: 1}}); err == nil || !strings.Contains(err.Error(), `no "id" field`) {
		t.Errorf("append without id: %v", err)
	}
	scalars, err := New[string](coll, Config{Size: 3, ElementID: "id"})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := scalars.Append(ctx, 1, "x"); err == nil || !strings.Contains(err.Error(), "not a document") {
		t.Errorf("append of a scalar with ElementID: %v", err)
	}
	if n, _ := coll.CountDocuments(ctx, bson.D{}); n != 0 {
		t.Errorf("rejected appends stored %d documents", n)
	}
	// Without ElementID scalars are fine.
	plain, err := New[string](coll, Config{Size: 3})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := plain.Append(ctx, 1, "x"); err != nil {
		t.Fatal(err)
	}
	if _, _, err := plain.Find(ctx, 1, "x"); err == nil || !strings.Contains(err.Error(), "ElementID") {
		t.Errorf("Find without ElementID: %v", err)
	}
}

func TestEnsureIndexes(t *testing.T) {
	ctx := context.Background()
	s, coll := newStore(t, Config{Size: 5, Owner: "customerId", Elements: "trades", Count: "n", ElementID: "tradeId"})
	if err := s.EnsureIndexes(ctx); err != nil { // idempotent
		t.Fatal(err)
	}
	c, err := coll.Indexes().List(ctx)
	if err != nil {
		t.Fatal(err)
	}
	var specs []bson.Raw
	if err := c.All(ctx, &specs); err != nil {
		t.Fatal(err)
	}
	got := map[string]string{}
	for _, sp := range specs {
		got[sp.Lookup("name").StringValue()] = sp.Lookup("key").String()
	}
	want := map[string]string{
		"_id_":                          `{"_id": {"$numberInt":"1"}}`,
		"customerId_1_openedAt_-1":      `{"customerId": {"$numberInt":"1"},"openedAt": {"$numberInt":"-1"}}`,
		"customerId_1_n_1":              `{"customerId": {"$numberInt":"1"},"n": {"$numberInt":"1"}}`,
		"customerId_1_trades.tradeId_1": `{"customerId": {"$numberInt":"1"},"trades.tradeId": {"$numberInt":"1"}}`,
	}
	if len(got) != len(want) {
		t.Errorf("indexes %v, want %v", got, want)
	}
	for name, key := range want {
		if got[name] != key {
			t.Errorf("index %s: key %s, want %s", name, got[name], key)
		}
	}
}

// TestAppendCustomFields checks the stored shape with the catalogue's
// names.
func TestAppendCustomFields(t *testing.T) {
	ctx := context.Background()
	at := time.Date(2023, 10, 26, 15, 47, 3, 123456789, time.UTC)
	s, coll := newStore(t, Config{Size: 50, Owner: "customerId", Elements: "trades", Count: "n",
		OpenedAt: "openedAt", Clock: func() time.Time { return at }})
	if _, err := s.Append(ctx, int64(123), trade{ID: "t1", Ticker: "MDB", Qty: 419}); err != nil {
		t.Fatal(err)
	}
	docs := stored(t, coll, bson.D{})
	if len(docs) != 1 {
		t.Fatalf("%d buckets", len(docs))
	}
	d := docs[0]
	if v := d.Lookup("customerId"); v.Type != bson.TypeInt64 || v.Int64() != 123 {
		t.Errorf("customerId %v", v)
	}
	if v := d.Lookup("n"); v.Int32() != 1 {
		t.Errorf("n %v", v)
	}
	if v := d.Lookup("openedAt").Time().UTC(); !v.Equal(at.Truncate(time.Millisecond)) {
		t.Errorf("openedAt %v, want %v", v, at.Truncate(time.Millisecond))
	}
	if got := d.Lookup("trades").String(); got != `[{"id": "t1","ticker": "MDB","qty": {"$numberInt":"419"}}]` {
		t.Errorf("trades %s", got)
	}
}
