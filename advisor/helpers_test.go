package advisor

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo"
	"go.mongodb.org/mongo-driver/v2/mongo/options"

	"github.com/formworkdb/formwork/internal/testenv"
)

// newDB returns an empty database for a test.
func newDB(t *testing.T) *mongo.Database {
	t.Helper()
	return testenv.Database(t)
}

// advise runs the advisor on db alone with the given thresholds and
// checks (all when none).
func advise(t *testing.T, db *mongo.Database, th Thresholds, checks ...string) *Report {
	t.Helper()
	rep, err := Run(context.Background(), db.Client(), Options{
		Databases: []string{db.Name()}, Thresholds: th, Checks: checks, Sample: 500, Budget: 2 * time.Minute,
	})
	if err != nil {
		t.Fatal(err)
	}
	return rep
}

// findings returns the findings of check id.
func findings(rep *Report, id string) []Finding {
	var out []Finding
	for _, f := range rep.Findings {
		if f.ID == id {
			out = append(out, f)
		}
	}
	return out
}

// one returns the only finding of check id, failing otherwise.
func one(t *testing.T, rep *Report, id string) Finding {
	t.Helper()
	fs := findings(rep, id)
	if len(fs) != 1 {
		t.Fatalf("%d %s findings, want 1: %+v\nnotes: %v", len(fs), id, fs, rep.Snapshot.Notes)
	}
	return fs[0]
}

// none fails if check id found anything.
func none(t *testing.T, rep *Report, id string) {
	t.Helper()
	if fs := findings(rep, id); len(fs) != 0 {
		t.Fatalf("%d %s findings on the healthy form: %+v", len(fs), id, fs)
	}
}

// wantFigure checks that f's evidence has figure name equal to want.
func wantFigure(t *testing.T, f Finding, name string, want float64) {
	t.Helper()
	got, ok := f.Evidence.Figure(name)
	if !ok {
		t.Errorf("%s: no figure %q in %+v", f.ID, name, f.Evidence.Figures)
		return
	}
	if got != want {
		t.Errorf("%s: %s = %v, want %v", f.ID, name, got, want)
	}
}

// wantFix checks that some fix command or code holds sub.
func wantFix(t *testing.T, f Finding, sub string) {
	t.Helper()
	all := strings.Join(f.Fix.Commands, "\n") + "\n" + f.Fix.Code
	if !strings.Contains(all, sub) {
		t.Errorf("%s: fix lacks %q:\n%s", f.ID, sub, all)
	}
}

// insert inserts n documents made by mk into coll.
func insert(t *testing.T, coll *mongo.Collection, n int, mk func(i int) bson.D) {
	t.Helper()
	ctx := context.Background()
	const batch = 500
	for lo := 0; lo < n; lo += batch {
		docs := make([]any, 0, batch)
		for i := lo; i < min(n, lo+batch); i++ {
			docs = append(docs, mk(i))
		}
		if _, err := coll.InsertMany(ctx, docs); err != nil {
			t.Fatal(err)
		}
	}
}

// ints returns an array of n integers.
func ints(n int) bson.A {
	a := make(bson.A, n)
	for i := range a {
		a[i] = int32(i)
	}
	return a
}

// profile sets db's profiler level.
func profile(t *testing.T, db *mongo.Database, level int) {
	t.Helper()
	if err := db.RunCommand(context.Background(), bson.D{{Key: "profile", Value: level}}).Err(); err != nil {
		t.Fatal(err)
	}
}

// withProfiler runs fn with db's profiler at level 2, then turns it off.
func withProfiler(t *testing.T, db *mongo.Database, fn func()) {
	t.Helper()
	profile(t, db, 2)
	fn()
	profile(t, db, 0)
}

// must fails the test on err.
func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

// find runs a find and reads its results.
func find(t *testing.T, c *mongo.Collection, filter bson.D, opts ...options.Lister[options.FindOptions]) []bson.Raw {
	t.Helper()
	cur, err := c.Find(context.Background(), filter, opts...)
	must(t, err)
	var out []bson.Raw
	must(t, cur.All(context.Background(), &out))
	return out
}

// aggregate runs a pipeline and reads its results.
func aggregate(t *testing.T, c *mongo.Collection, pipeline bson.A) []bson.Raw {
	t.Helper()
	cur, err := c.Aggregate(context.Background(), pipeline)
	must(t, err)
	var out []bson.Raw
	must(t, cur.All(context.Background(), &out))
	return out
}

// name formats a test name part.
func name(format string, args ...any) string { return fmt.Sprintf(format, args...) }
