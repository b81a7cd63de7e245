package archive_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"go.mongodb.org/mongo-driver/v2/bson"

	"github.com/formworkdb/formwork/internal/testenv"
	"github.com/formworkdb/formwork/pattern"
	"github.com/formworkdb/formwork/pattern/archive"
)

// newArchiver returns an Archiver of db.orders into archive_db.orders
// (another database), with 30-day age and 3-day slices, its indexes
// created.
func newArchiver(t testing.TB, cfg archive.Config) *archive.Archiver[order] {
	t.Helper()
	db := testenv.Database(t)
	arch := db.Client().Database(db.Name() + "_archive")
	if testenv.Real() {
		t.Cleanup(func() { arch.Drop(context.Background()) })
	}
	if cfg.Field == "" {
		cfg.Field = "createdAt"
	}
	if cfg.Age == 0 {
		cfg.Age = 30 * 24 * time.Hour
	}
	if cfg.Slice == 0 {
		cfg.Slice = 3 * 24 * time.Hour
	}
	a, err := archive.New[order](db.Collection("orders"), arch.Collection("orders"), cfg)
	if err != nil {
		t.Fatal(err)
	}
	if err := a.EnsureIndexes(context.Background()); err != nil {
		t.Fatal(err)
	}
	return a
}

func TestRunMovesOldDocuments(t *testing.T) {
	ctx := context.Background()
	a := newArchiver(t, archive.Config{})
	orig := loadOrders(t, a.Live(), 200) // 200 × 7h ≈ 58 days
	rep, err := a.Run(ctx, archive.RunOptions{Now: now})
	if err != nil {
		t.Fatal(err)
	}
	cutoff := now.Add(-30 * 24 * time.Hour)
	if !rep.Cutoff.Equal(cutoff) || rep.Resumed {
		t.Fatalf("report %+v, want cutoff %v", rep, cutoff)
	}
	assertPartition(t, a, orig, cutoff)
	old := 0
	for _, d := range orig {
		if d.Lookup("createdAt").Time().Before(cutoff) {
			old++
		}
	}
	if rep.Copied != int64(old) || rep.Deleted != int64(old) || rep.Slices < 10 {
		t.Fatalf("report %+v, want %d copied and deleted over ≥10 slices", rep, old)
	}
	if rep.Total.State != archive.StateDone || rep.Total.Deleted != int64(old) {
		t.Fatalf("record %+v", rep.Total)
	}
	// A second run (later Now: a new cutoff) with nothing older changes
	// nothing and does not fail.
	rep2, err := a.Run(ctx, archive.RunOptions{Now: now})
	if err != nil || rep2.Copied != 0 || rep2.Deleted != 0 {
		t.Fatalf("second run %+v, %v", rep2, err)
	}
	assertPartition(t, a, orig, cutoff)
	// Typed reads.
	o, archived, err := a.Get(ctx, 3)
	if err != nil || !archived || o.Total != 9 {
		t.Fatalf("get 3 = %+v archived %v, %v", o, archived, err)
	}
	o, archived, err = a.Get(ctx, 199)
	if err != nil || archived {
		t.Fatalf("get 199 = %+v archived %v, %v", o, archived, err)
	}
	if _, _, err := a.Get(ctx, 1000); !errors.Is(err, archive.ErrNotFound) || !errors.Is(err, pattern.ErrNotFound) {
		t.Fatalf("get 1000: %v", err)
	}
	got, err := a.Archived(ctx, day0, day0.Add(24*time.Hour), 0)
	if err != nil || len(got) != 4 || got[0].ID != 0 || got[3].ID != 3 {
		t.Fatalf("archived first day = %+v, %v", got, err)
	}
}

func TestRunFilterKeepsMarked(t *testing.T) {
	ctx := context.Background()
	a := newArchiver(t, archive.Config{Filter: bson.D{{Key: "keep", Value: bson.D{{Key: "$ne", Value: true}}}}})
	loadOrders(t, a.Live(), 50)
	if _, err := a.Live().UpdateOne(ctx, bson.D{{Key: "_id", Value: 2}}, bson.D{{Key: "$set", Value: bson.D{{Key: "keep", Value: true}}}}); err != nil {
		t.Fatal(err)
	}
	if _, err := a.Run(ctx, archive.RunOptions{Now: now}); err != nil {
		t.Fatal(err)
	}
	if _, archived, err := a.Get(ctx, 2); err != nil || archived {
		t.Fatalf("kept order: archived %v, %v", archived, err)
	}
	if _, archived, err := a.Get(ctx, 3); err != nil || !archived {
		t.Fatalf("order 3: archived %v, %v", archived, err)
	}
}

// TestRunEmbedsReferences: the archived order carries its customer as
// it was when archived, so deleting the customer later loses nothing.
func TestRunEmbedsReferences(t *testing.T) {
	ctx := context.Background()
	a := newArchiver(t, archive.Config{Embed: []archive.Embed{{LocalField: "customerId", From: "customers", As: "customer", Fields: []string{"name"}}}})
	loadOrders(t, a.Live(), 20)
	customers := a.Live().Database().Collection("customers")
	for i := range 4 { // c4 does not exist: its orders embed null
		if _, err := customers.InsertOne(ctx, bson.D{{Key: "_id", Value: "c" + string(rune('0'+i))}, {Key: "name", Value: "Name " + string(rune('A'+i))}, {Key: "secret", Value: "x"}}); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := a.Run(ctx, archive.RunOptions{Now: now}); err != nil {
		t.Fatal(err)
	}
	if _, err := customers.DeleteMany(ctx, bson.D{}); err != nil {
		t.Fatal(err)
	}
	raw, err := a.Archive().FindOne(ctx, bson.D{{Key: "_id", Value: 6}}).Raw()
	if err != nil {
		t.Fatal(err)
	}
	want := `{"_id": {"$numberInt":"6"},"customerId": "c1","createdAt": {"$date":{"$numberLong":"1578009600000"}},"total": {"$numberInt":"18"},"customer": {"_id": "c1","name": "Name B"}}`
	if raw.String() != want {
		t.Fatalf("archived order 6 =\n%s\nwant\n%s", raw, want)
	}
	raw, err = a.Archive().FindOne(ctx, bson.D{{Key: "_id", Value: 4}}).Raw()
	if err != nil || raw.Lookup("customer").Type != bson.TypeNull {
		t.Fatalf("order 4's missing customer = %v, %v", raw, err)
	}
}

func TestConfigValidate(t *testing.T) {
	for _, c := range []archive.Config{
		{},
		{Field: "$x"},
		{Field: "_id"},
		{Field: "a..b"},
		{Field: "at", Age: -1},
		{Field: "at", Slice: time.Microsecond},
		{Field: "at", WhenMatched: 7},
		{Field: "at", Embed: []archive.Embed{{LocalField: "c", As: "x"}}},
		{Field: "at", Embed: []archive.Embed{{LocalField: "c", From: "cs", As: "_id"}}},
		{Field: "at", Embed: []archive.Embed{{LocalField: "c", From: "cs", As: "at"}}},
	} {
		if err := c.Validate(); !errors.Is(err, archive.ErrInvalidConfig) {
			t.Errorf("%+v: %v, want ErrInvalidConfig", c, err)
		}
	}
	db := testenv.Database(t)
	if _, err := archive.New[order](db.Collection("a"), db.Collection("a"), archive.Config{Field: "at"}); !errors.Is(err, archive.ErrInvalidConfig) {
		t.Errorf("same collection: %v", err)
	}
}

func TestPlanWritesNothing(t *testing.T) {
	ctx := context.Background()
	a := newArchiver(t, archive.Config{})
	orig := loadOrders(t, a.Live(), 200)
	plan, err := a.Plan(ctx, archive.RunOptions{Now: now})
	if err != nil {
		t.Fatal(err)
	}
	if _, found, _ := a.Status(ctx); found {
		t.Fatal("Plan wrote a progress record")
	}
	if n, _ := a.Archive().CountDocuments(ctx, bson.D{}); n != 0 || len(snapshot(t, a.Live())) != len(orig) {
		t.Fatal("Plan moved documents")
	}
	rep, err := a.Run(ctx, archive.RunOptions{Now: now})
	if err != nil || rep.Copied != plan.Copied || rep.Slices != plan.Slices {
		t.Fatalf("plan %+v, run %+v, %v", plan, rep, err)
	}
}
