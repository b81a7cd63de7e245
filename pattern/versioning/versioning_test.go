package versioning

import (
	"context"
	"errors"
	"slices"
	"sync"
	"testing"
	"time"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo"
	"go.mongodb.org/mongo-driver/v2/mongo/options"
)

// TestReadEveryVersion checks that documents of every live version (the
// field missing, 1, 2, 3) read into the newest struct, and that reading
// writes nothing.
func TestReadEveryVersion(t *testing.T) {
	ctx := context.Background()
	s, coll := contacts(t, Config{})
	seed(t, coll, 3)
	if _, err := s.Insert(ctx, Contact{ID: 3, Name: "c3", ContactInfo: ContactInfo{Work: "w3"}, Tags: []string{"vip"}}); err != nil {
		t.Fatal(err)
	}
	all, err := s.Find(ctx, nil, options.Find().SetSort(bson.D{{Key: "_id", Value: 1}}))
	if err != nil {
		t.Fatal(err)
	}
	want := []Contact{
		{ID: 0, SchemaVersion: 3, Name: "c0", ContactInfo: ContactInfo{Work: "w0"}, Tags: []string{}},
		{ID: 1, SchemaVersion: 3, Name: "c1", ContactInfo: ContactInfo{Home: "h1", Work: "w1"}, Tags: []string{}},
		{ID: 2, SchemaVersion: 3, Name: "c2", ContactInfo: ContactInfo{Work: "w2", Cell: "m2"}, Tags: []string{}},
		{ID: 3, SchemaVersion: 3, Name: "c3", ContactInfo: ContactInfo{Work: "w3"}, Tags: []string{"vip"}},
	}
	if len(all) != len(want) {
		t.Fatalf("%d contacts", len(all))
	}
	for i := range want {
		if !equal(all[i], want[i]) {
			t.Errorf("contact %d: %+v, want %+v", i, all[i], want[i])
		}
	}
	if doc := stored(t, coll, 0); doc.Lookup("work").StringValue() != "w0" || doc.Lookup("schemaVersion").Type != 0 {
		t.Errorf("a read wrote: %v", doc)
	}
	if v := stored(t, coll, 3).Lookup("schemaVersion").AsInt64(); v != 3 {
		t.Errorf("inserted at version %d", v)
	}
	if _, err := coll.InsertOne(ctx, bson.D{{Key: "_id", Value: 9}, {Key: "schemaVersion", Value: 4}}); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Get(ctx, 9); !errors.Is(err, ErrUnknownVersion) {
		t.Errorf("version 4: %v", err)
	}
	if _, err := s.Get(ctx, 99); !errors.Is(err, ErrNotFound) {
		t.Errorf("missing: %v", err)
	}
}

// equal compares two contacts field by field.
func equal(a, b Contact) bool {
	return a.ID == b.ID && a.SchemaVersion == b.SchemaVersion && a.Name == b.Name && a.ContactInfo == b.ContactInfo && slices.Equal(a.Tags, b.Tags) && (a.Tags == nil) == (b.Tags == nil)
}

// TestUpgradeGuarded checks the guarded upgrade-on-write: the document is
// rewritten at the newest version, the stored shape is the upgraded one,
// a second upgrade writes nothing, and of many concurrent upgraders of one
// document exactly one writes (counted by the pipeline itself).
func TestUpgradeGuarded(t *testing.T) {
	for _, pipelines := range []bool{true, false} {
		name := "up"
		if pipelines {
			name = "pipeline"
		}
		t.Run(name, func(t *testing.T) {
			ctx := context.Background()
			s, coll := contacts(t, Config{Versions: counted(pipelines)})
			seed(t, coll, 3)
			ok, err := s.Upgrade(ctx, 1)
			if err != nil || !ok {
				t.Fatalf("upgrade: %v %v", ok, err)
			}
			doc := stored(t, coll, 1)
			if doc.Lookup("schemaVersion").AsInt64() != 3 || doc.Lookup("contactInfo", "home").StringValue() != "h1" ||
				doc.Lookup("home").Type != 0 || doc.Lookup("upgrades", "v2").AsInt64() != 1 || doc.Lookup("upgrades", "v3").AsInt64() != 1 {
				t.Errorf("upgraded %v", doc)
			}
			if ok, err := s.Upgrade(ctx, 1); ok || err != nil {
				t.Errorf("second upgrade: %v %v", ok, err)
			}
			var wg sync.WaitGroup
			var mu sync.Mutex
			wins := 0
			for range 8 {
				wg.Add(1)
				go func() {
					defer wg.Done()
					ok, err := s.Upgrade(ctx, 0)
					if err != nil {
						t.Error(err)
					}
					mu.Lock()
					if ok {
						wins++
					}
					mu.Unlock()
				}()
			}
			wg.Wait()
			doc = stored(t, coll, 0)
			if wins != 1 || doc.Lookup("upgrades", "v2").AsInt64() != 1 || doc.Lookup("upgrades", "v3").AsInt64() != 1 {
				t.Errorf("%d upgraders wrote; stored %v", wins, doc)
			}
			if _, err := s.Upgrade(ctx, 42); !errors.Is(err, ErrNotFound) {
				t.Errorf("upgrade of a missing document: %v", err)
			}
		})
	}
}

// TestUpdateUpgradesOnWrite checks that Update brings an old document to
// the newest version before applying an update written for the newest
// shape, and Replace writes the newest version whatever was stored.
func TestUpdateUpgradesOnWrite(t *testing.T) {
	ctx := context.Background()
	s, coll := contacts(t, Config{})
	seed(t, coll, 3)
	c, err := s.Update(ctx, 0, bson.D{{Key: "$set", Value: bson.D{{Key: "contactInfo.cell", Value: "555"}}}})
	if err != nil {
		t.Fatal(err)
	}
	if c.ContactInfo != (ContactInfo{Work: "w0", Cell: "555"}) || c.SchemaVersion != 3 {
		t.Errorf("updated %+v", c)
	}
	doc := stored(t, coll, 0)
	if doc.Lookup("schemaVersion").AsInt64() != 3 || doc.Lookup("work").Type != 0 || doc.Lookup("contactInfo", "cell").StringValue() != "555" {
		t.Errorf("stored %v", doc)
	}
	if err := s.Replace(ctx, 1, Contact{Name: "new"}); err != nil {
		t.Fatal(err)
	}
	if doc := stored(t, coll, 1); doc.Lookup("schemaVersion").AsInt64() != 3 || doc.Lookup("home").Type != 0 {
		t.Errorf("replaced %v", doc)
	}
	if _, err := s.Update(ctx, 77, bson.D{{Key: "$set", Value: bson.D{{Key: "name", Value: "x"}}}}); !errors.Is(err, ErrNotFound) {
		t.Errorf("update missing: %v", err)
	}
	if err := s.Delete(ctx, 2); err != nil {
		t.Fatal(err)
	}
	if err := s.Delete(ctx, 2); !errors.Is(err, ErrNotFound) {
		t.Errorf("delete twice: %v", err)
	}
}

// TestReport checks the live versions, their counts and oldest times.
func TestReport(t *testing.T) {
	ctx := context.Background()
	s, coll := contacts(t, Config{TimeField: "at"})
	seed(t, coll, 9)
	t0 := time.Date(2025, 3, 2, 0, 0, 0, 0, time.UTC)
	for i := range 9 {
		if _, err := coll.UpdateOne(ctx, bson.D{{Key: "_id", Value: i}}, bson.D{{Key: "$set", Value: bson.D{{Key: "at", Value: t0.AddDate(0, 0, i)}}}}); err != nil {
			t.Fatal(err)
		}
	}
	r, err := s.Report(ctx)
	if err != nil {
		t.Fatal(err)
	}
	want := []Live{{1, 6, t0}, {2, 3, t0.AddDate(0, 0, 2)}}
	if !slices.Equal(r.Live, want) || r.Finished() {
		t.Fatalf("report %+v", r)
	}
	if _, err := s.Migrate(ctx, MigrateOptions{}); err != nil {
		t.Fatal(err)
	}
	r, err = s.Report(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if len(r.Live) != 1 || r.Live[0].Version != 3 || r.Live[0].Count != 9 || !r.Finished() {
		t.Errorf("after migrate %+v", r)
	}
}

// TestValidator checks the validator's two states: moderate with every
// live version while the migration runs, strict with the newest only
// afterwards.
func TestValidator(t *testing.T) {
	ctx := context.Background()
	s, coll := contacts(t, Config{})
	seed(t, coll, 6)
	level, err := s.EnsureValidator(ctx, "error")
	if err != nil || level != "moderate" {
		t.Fatalf("level %q: %v", level, err)
	}
	if _, err := coll.InsertOne(ctx, bson.D{{Key: "_id", Value: 50}, {Key: "name", Value: "old code"}, {Key: "work", Value: "1"}}); err != nil {
		t.Errorf("a version 1 insert during the migration: %v", err)
	}
	_, err = coll.InsertOne(ctx, bson.D{{Key: "_id", Value: 51}, {Key: "schemaVersion", Value: 3}, {Key: "name", Value: "no contactInfo"}})
	var we mongo.WriteException
	if !errors.As(err, &we) || we.WriteErrors[0].Code != 121 {
		t.Errorf("a bad version 3: %v", err)
	}
	if _, err := s.Migrate(ctx, MigrateOptions{}); err != nil {
		t.Fatal(err)
	}
	level, err = s.EnsureValidator(ctx, "error")
	if err != nil || level != "strict" {
		t.Fatalf("after: level %q: %v", level, err)
	}
	if _, err := coll.InsertOne(ctx, bson.D{{Key: "_id", Value: 52}, {Key: "name", Value: "old code"}, {Key: "work", Value: "1"}}); err == nil {
		t.Error("a version 1 insert after the migration was accepted")
	}
	if _, err := s.Insert(ctx, Contact{ID: 100, Name: "new", Tags: []string{}}); err != nil {
		t.Errorf("a version 3 insert: %v", err)
	}
}

// TestConfig checks Validate's refusals.
func TestConfig(t *testing.T) {
	for _, c := range []Config{
		{},
		{Field: "a.b", Versions: []Version{{Number: 1}}},
		{Versions: []Version{{Number: 1}, {Number: 3, Up: upTo3}}},
		{Versions: []Version{{Number: 1}, {Number: 2}}},
		{Versions: []Version{{Number: 1}}, Missing: 2},
		{Versions: []Version{{Number: 1}}, Throttle: -1},
	} {
		if err := c.Validate(); !errors.Is(err, ErrInvalidConfig) {
			t.Errorf("%+v: %v", c, err)
		}
	}
}
