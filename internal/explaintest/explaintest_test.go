package explaintest_test

import (
	"context"
	"fmt"
	"runtime"
	"slices"
	"strings"
	"testing"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo"

	"github.com/formworkdb/formwork/internal/explaintest"
	"github.com/formworkdb/formwork/internal/testenv"
)

// canned replies, trimmed to what the walk reads, in the shapes MongoDB
// 7.0 sends.
var canned = map[string]string{
	// Classic engine: the tree under winningPlan; rejected plans and
	// executionStages repeat stages that must not count.
	"classic": `{
		"queryPlanner": {
			"winningPlan": {"stage": "LIMIT", "inputStage": {"stage": "FETCH", "inputStage": {
				"stage": "IXSCAN", "indexName": "owner_1_openedAt_-1", "direction": "forward",
				"indexBounds": {"owner": ["[123, 123]"], "openedAt": ["[MaxKey, MinKey]"]}}}},
			"rejectedPlans": [{"stage": "SORT", "inputStage": {"stage": "COLLSCAN"}}]},
		"executionStats": {"nReturned": 1, "totalKeysExamined": 2, "totalDocsExamined": {"$numberLong": "1"},
			"executionStages": {"stage": "LIMIT", "inputStage": {"stage": "SKIP"}}}}`,
	// Slot-based engine: the tree under winningPlan.queryPlan, next to
	// slotBasedPlan whose "stages" is a string.
	"sbe": `{
		"queryPlanner": {"winningPlan": {
			"queryPlan": {"stage": "SORT", "inputStage": {"stage": "OR", "inputStages": [
				{"stage": "IXSCAN", "indexName": "a_1", "indexBounds": {"a": ["[1, 1]"]}},
				{"stage": "IXSCAN", "indexName": "b_1", "indexBounds": {"b": ["(10000, inf.0]"]}}]}},
			"slotBasedPlan": {"slots": "$$RESULT=s1", "stages": "[2] sort [s2] [asc] [s1]"}}},
		"executionStats": {"nReturned": 3, "totalKeysExamined": 4, "totalDocsExamined": 3}}`,
	// Aggregate not pushed down: the query under stages[0].$cursor, with
	// its own executionStats.
	"aggregate": `{
		"stages": [
			{"$cursor": {
				"queryPlanner": {"winningPlan": {"stage": "PROJECTION_SIMPLE", "inputStage": {"stage": "COLLSCAN"}}},
				"executionStats": {"nReturned": 20, "totalKeysExamined": 0, "totalDocsExamined": 20}}},
			{"$group": {"_id": "$k"}, "nReturned": 3}]}`,
	// Sharded: one winning plan a shard under shards[].
	"sharded": `{
		"queryPlanner": {"winningPlan": {"stage": "SHARD_MERGE", "shards": [
			{"shardName": "s0", "winningPlan": {"stage": "EXPRESS_IXSCAN", "indexName": "_id_"}},
			{"shardName": "s1", "winningPlan": {"queryPlan": {"stage": "COLLSCAN"}}}]}},
		"executionStats": {"nReturned": 1, "totalKeysExamined": 1, "totalDocsExamined": 5}}`,
}

// parse parses the canned reply named name.
func parse(t *testing.T, name string) explaintest.Result {
	t.Helper()
	var d bson.D
	if err := bson.UnmarshalExtJSON([]byte(canned[name]), false, &d); err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	raw, err := bson.Marshal(d)
	if err != nil {
		t.Fatal(err)
	}
	return explaintest.Parse(t, raw)
}

func TestParseShapes(t *testing.T) {
	for _, c := range []struct {
		name, plan    string
		keys, docs, n int64
	}{
		{"classic", "LIMIT FETCH IXSCAN(owner_1_openedAt_-1)", 2, 1, 1},
		{"sbe", "SORT OR IXSCAN(a_1) IXSCAN(b_1)", 4, 3, 3},
		{"aggregate", "PROJECTION_SIMPLE COLLSCAN", 0, 20, 20},
		{"sharded", "SHARD_MERGE EXPRESS_IXSCAN(_id_) COLLSCAN", 1, 5, 1},
	} {
		t.Run(c.name, func(t *testing.T) {
			res := parse(t, c.name)
			if got := res.String(); got != c.plan {
				t.Errorf("plan %q, want %q", got, c.plan)
			}
			if len(res.Stages()) != strings.Count(c.plan, " ")+1 {
				t.Errorf("%d stages in %q", len(res.Stages()), c.plan)
			}
			if got := [3]int64{res.KeysExamined(), res.DocsExamined(), res.NReturned()}; got != [3]int64{c.keys, c.docs, c.n} {
				t.Errorf("keys, docs, returned %v, want %v", got, [3]int64{c.keys, c.docs, c.n})
			}
		})
	}
}

func TestParseQueries(t *testing.T) {
	classic := parse(t, "classic")
	if !classic.Uses("owner_1_openedAt_-1") || classic.Uses("a_1") {
		t.Errorf("Uses wrong on %v", classic)
	}
	if !classic.HasStage("FETCH") || classic.HasStage("SORT") || classic.HasStage("COLLSCAN") || classic.HasStage("SKIP") {
		t.Errorf("HasStage reads rejected plans or executionStages: %v", classic)
	}
	if got := classic.Bounds("owner_1_openedAt_-1", "owner"); !slices.Equal(got, []string{"[123, 123]"}) {
		t.Errorf("owner bounds %q", got)
	}
	if got := classic.Bounds("owner_1_openedAt_-1", "other"); got != nil {
		t.Errorf("bounds on an unindexed field %q", got)
	}
	ix, ok := classic.Stage("IXSCAN")
	if !ok || ix.Doc.Lookup("direction").StringValue() != "forward" {
		t.Errorf("Stage(IXSCAN) %v, %v", ix, ok)
	}

	sbe := parse(t, "sbe")
	if got := sbe.Bounds("b_1", "b"); !slices.Equal(got, []string{"(10000, inf.0]"}) {
		t.Errorf("b bounds %q", got)
	}
	if got := sbe.Bounds("a_1", "b"); got != nil {
		t.Errorf("a_1 bounds on b %q", got)
	}
	if got := sbe.Bounds("c_1", "c"); got != nil {
		t.Errorf("bounds of an index the plan does not scan %q", got)
	}

	sharded := parse(t, "sharded")
	if !sharded.Uses("_id_") {
		t.Errorf("EXPRESS_IXSCAN is not a use of _id_: %v", sharded)
	}
}

// fatalTB records the first Fatalf and stops the goroutine, as
// testing.T does.
type fatalTB struct {
	testing.TB
	msg string
}

func (f *fatalTB) Helper() {}

func (f *fatalTB) Fatalf(format string, args ...any) {
	f.msg = fmt.Sprintf(format, args...)
	runtime.Goexit()
}

// failure runs fn with a fatalTB and returns its message, "" if none.
func failure(fn func(t testing.TB)) string {
	f := &fatalTB{}
	done := make(chan struct{})
	go func() {
		defer close(done)
		fn(f)
	}()
	<-done
	return f.msg
}

func TestParseFailures(t *testing.T) {
	empty, err := bson.Marshal(bson.D{{Key: "ok", Value: 1.0}})
	if err != nil {
		t.Fatal(err)
	}
	if msg := failure(func(tb testing.TB) { explaintest.Parse(tb, empty) }); !strings.Contains(msg, "no winning plan") {
		t.Errorf("Parse of a reply without a plan: %q", msg)
	}
	plain, err := bson.Marshal(bson.D{{Key: "queryPlanner", Value: bson.D{{Key: "winningPlan", Value: bson.D{{Key: "stage", Value: "EOF"}}}}}})
	if err != nil {
		t.Fatal(err)
	}
	msg := failure(func(tb testing.TB) { explaintest.Parse(tb, plain).DocsExamined() })
	if !strings.Contains(msg, "no executionStats") {
		t.Errorf("DocsExamined of a queryPlanner explain: %q", msg)
	}
}

// TestRun explains a find and an aggregate on the test database.
func TestRun(t *testing.T) {
	ctx := context.Background()
	coll := testenv.Database(t).Collection("c")
	if _, err := coll.Indexes().CreateOne(ctx, mongo.IndexModel{Keys: bson.D{{Key: "k", Value: 1}}}); err != nil {
		t.Fatal(err)
	}
	var docs []any
	for i := range 20 {
		docs = append(docs, bson.D{{Key: "k", Value: i % 5}})
	}
	if _, err := coll.InsertMany(ctx, docs); err != nil {
		t.Fatal(err)
	}
	filter := bson.D{{Key: "k", Value: bson.D{{Key: "$gte", Value: 3}}}}
	res := explaintest.Run(t, coll.Database(), bson.D{{Key: "find", Value: "c"}, {Key: "filter", Value: filter}})
	if !res.Uses("k_1") || res.HasStage("COLLSCAN") {
		t.Errorf("find plan %v, want a scan of k_1", res)
	}
	if got := res.Bounds("k_1", "k"); !slices.Equal(got, []string{"[3, inf.0]"}) {
		t.Errorf("k bounds %q", got)
	}
	if res.NReturned() != 8 || res.DocsExamined() != 8 || res.KeysExamined() < 8 {
		t.Errorf("returned %d, examined %d documents and %d keys, want 8, 8 and at least 8",
			res.NReturned(), res.DocsExamined(), res.KeysExamined())
	}
	agg := explaintest.Run(t, coll.Database(), bson.D{{Key: "aggregate", Value: "c"}, {Key: "pipeline", Value: bson.A{
		bson.D{{Key: "$match", Value: filter}},
		bson.D{{Key: "$count", Value: "n"}},
	}}, {Key: "cursor", Value: bson.D{}}})
	if !agg.Uses("k_1") {
		t.Errorf("aggregate plan %v, want a scan of k_1", agg)
	}
}
