package versioning

import (
	"context"
	"errors"
	"testing"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo/options"

	"github.com/formworkdb/formwork/internal/testenv"
)

// contactSpec is the manual's contact migration as a declarative spec,
// with a third version that adds a default and drops a field.
const contactSpec = `{"field": "schemaVersion",
 "steps": [
  {"rename": {"work": "contactInfo.work", "home": "contactInfo.home"}},
  {"set": {"tags": [], "contactInfo.instagram": "$none", "score": 0}, "unset": ["fax"]}
 ]}`

// TestSpecUpAndPipelineAgree runs the declarative spec both ways, the Up
// functions on a read and the pipelines through Migrate, and checks that
// they give the same documents, field for field, and the expected shape
// (renames, defaults kept literal, removals).
func TestSpecUpAndPipelineAgree(t *testing.T) {
	ctx := context.Background()
	sp, err := ParseSpec([]byte(contactSpec))
	if err != nil {
		t.Fatal(err)
	}
	cfg, err := sp.Config(Config{Batch: 2})
	if err != nil {
		t.Fatal(err)
	}
	coll := testenv.Database(t).Collection("contacts")
	s, err := New[bson.D](coll, cfg)
	if err != nil {
		t.Fatal(err)
	}
	docs := []any{
		bson.D{{Key: "_id", Value: 1}, {Key: "name", Value: "Taylor"}, {Key: "home", Value: "209"}, {Key: "work", Value: "503"}, {Key: "fax", Value: "1"}},
		bson.D{{Key: "_id", Value: 2}, {Key: "schemaVersion", Value: 1}, {Key: "name", Value: "Kim"}, {Key: "score", Value: 7}},
		bson.D{{Key: "_id", Value: 3}, {Key: "schemaVersion", Value: 2}, {Key: "name", Value: "Cameron"}, {Key: "contactInfo", Value: bson.D{{Key: "work", Value: "670"}, {Key: "instagram", Value: "@cam"}}}},
	}
	if _, err := coll.InsertMany(ctx, docs); err != nil {
		t.Fatal(err)
	}
	inMemory, err := s.Find(ctx, nil, options.Find().SetSort(bson.D{{Key: "_id", Value: 1}}))
	if err != nil {
		t.Fatal(err)
	}
	p, err := s.Migrate(ctx, MigrateOptions{})
	if err != nil || !p.Finished || p.Done != 3 {
		t.Fatalf("migrate %+v %v", p, err)
	}
	for i, want := range inMemory {
		got := stored(t, coll, i+1)
		w, _ := bson.Marshal(want)
		if !equalDocs(got, w) {
			t.Errorf("%d: server %v, in memory %v", i+1, got, bson.Raw(w))
		}
	}
	taylor := stored(t, coll, 1)
	if taylor.Lookup("contactInfo", "work").StringValue() != "503" || taylor.Lookup("work").Type != 0 || taylor.Lookup("fax").Type != 0 ||
		taylor.Lookup("contactInfo", "instagram").StringValue() != "$none" || taylor.Lookup("schemaVersion").AsInt64() != 3 {
		t.Errorf("taylor %v", taylor)
	}
	if got := stored(t, coll, 2).Lookup("score").AsInt64(); got != 7 {
		t.Errorf("a default overwrote a value: %d", got)
	}
	if got := stored(t, coll, 3).Lookup("contactInfo", "instagram").StringValue(); got != "@cam" {
		t.Errorf("instagram %q", got)
	}
	for _, bad := range []string{`{"steps": []}`, `{"steps": [{"unset": ["_id"]}]}`, `{"steps": [{"rename": {"a": "$b"}}]}`, `not json`} {
		sp, err := ParseSpec([]byte(bad))
		if err == nil {
			_, err = sp.Config(Config{})
		}
		if !errors.Is(err, ErrInvalidConfig) {
			t.Errorf("%s: %v", bad, err)
		}
	}
}

// equalDocs compares two documents field by field, ignoring order and
// numeric width.
func equalDocs(a, b bson.Raw) bool {
	var x, y bson.M
	if bson.Unmarshal(a, &x) != nil || bson.Unmarshal(b, &y) != nil {
		return false
	}
	return normal(x) == normal(y)
}

// normal renders m as sorted relaxed extended JSON, numbers as doubles.
func normal(v any) string {
	switch v := v.(type) {
	case bson.M:
		keys := sortedKeys(v)
		s := "{"
		for _, k := range keys {
			s += k + ":" + normal(v[k]) + ","
		}
		return s + "}"
	case bson.D:
		m := bson.M{}
		for _, e := range v {
			m[e.Key] = e.Value
		}
		return normal(m)
	case bson.A:
		s := "["
		for _, e := range v {
			s += normal(e) + ","
		}
		return s + "]"
	case int32:
		return normal(float64(v))
	case int64:
		return normal(float64(v))
	}
	b, _ := bson.MarshalExtJSON(bson.D{{Key: "v", Value: v}}, false, false)
	return string(b)
}
