package agg

import (
	"bytes"
	"context"
	"fmt"
	"strings"
	"testing"

	"go.mongodb.org/mongo-driver/v2/bson"

	"github.com/formworkdb/formwork/engine/internal/expr"
	"github.com/formworkdb/formwork/engine/internal/mongoerr"
)

// stagesOf parses a JSON array of stages.
func stagesOf(t testing.TB, js string) []bson.Raw {
	t.Helper()
	var doc bson.Raw
	if err := bson.UnmarshalExtJSON([]byte(`{"p": `+js+`}`), false, &doc); err != nil {
		t.Fatalf("bad pipeline %s: %v", js, err)
	}
	var out []bson.Raw
	vals, _ := doc.Lookup("p").Array().Values()
	for _, v := range vals {
		out = append(out, v.Document())
	}
	return out
}

func docOf(t testing.TB, js string) bson.Raw {
	t.Helper()
	var doc bson.Raw
	if err := bson.UnmarshalExtJSON([]byte(js), false, &doc); err != nil {
		t.Fatalf("bad doc %s: %v", js, err)
	}
	return doc
}

func TestPipelineQueryPushdown(t *testing.T) {
	cases := []struct {
		pipeline string
		want     string // Query fields as text
		rest     int
	}{
		{`[{"$match": {"a": 1}}, {"$sort": {"b": 1}}, {"$limit": 5}, {"$project": {"a": 1}}]`, `filter={"a": {"$numberInt":"1"}} sort={"b": {"$numberInt":"1"}} skip=0 limit=5 fields=[_id a]`, 1},
		{`[{"$sort": {"b": 1}}, {"$match": {"a": 1}}]`, `filter={"a": {"$numberInt":"1"}} sort={"b": {"$numberInt":"1"}} skip=0 limit=0 fields=[]`, 0},
		{`[{"$skip": 2}, {"$limit": 3}, {"$group": {"_id": "$k", "n": {"$sum": "$v"}}}]`, `filter= sort= skip=2 limit=3 fields=[k v]`, 1},
		{`[{"$addFields": {"x": 1}}, {"$match": {"a": 1}}]`, `filter={"a": {"$numberInt":"1"}} sort= skip=0 limit=0 fields=[]`, 1},
		{`[{"$addFields": {"a": 1}}, {"$match": {"a": 1}}]`, `filter= sort= skip=0 limit=0 fields=[]`, 2},
		{`[{"$match": {"a": 1}}, {"$match": {"b": 2}}]`, `filter={"$and": [{"a": {"$numberInt":"1"}},{"b": {"$numberInt":"2"}}]} sort= skip=0 limit=0 fields=[]`, 0},
		{`[{"$count": "n"}]`, `filter= sort= skip=0 limit=0 fields=[_id]`, 1},
		{`[{"$project": {"a": 1, "b": "$c"}}, {"$match": {"a": 1}}]`, `filter={"a": {"$numberInt":"1"}} sort= skip=0 limit=0 fields=[_id a c]`, 1},
		{`[{"$project": {"a": 1, "b": "$c"}}, {"$match": {"b": 1}}]`, `filter= sort= skip=0 limit=0 fields=[_id a c]`, 2},
		{`[{"$sort": {"a": 1}}, {"$skip": 2}, {"$limit": 3}, {"$count": "n"}]`, `filter= sort={"a": {"$numberInt":"1"}} skip=2 limit=3 fields=[_id]`, 1},
		{`[{"$limit": 5}, {"$skip": 5}, {"$count": "n"}]`, `filter= sort= skip=0 limit=5 fields=[_id]`, 2},
	}
	for _, c := range cases {
		p, err := Parse(stagesOf(t, c.pipeline), Options{DB: "test", Coll: "c"})
		if err != nil {
			t.Fatalf("%s: %v", c.pipeline, err)
		}
		q := p.Query()
		fields := fmt.Sprint(q.Fields)
		if q.Fields == nil {
			fields = "[]"
		}
		got := fmt.Sprintf("filter=%s sort=%s skip=%d limit=%d fields=%s", rawString(q.Filter), rawString(q.Sort), q.Skip, q.Limit, fields)
		if got != c.want {
			t.Errorf("%s:\n got  %s\n want %s", c.pipeline, got, c.want)
		}
		if len(p.stages) != c.rest {
			t.Errorf("%s: %d stages left, want %d", c.pipeline, len(p.stages), c.rest)
		}
	}
}

// TestExplainShapes checks stage specifications as mongod 7.0 prints
// them: constants as {$const: v}, $bucket as its $group and $sort.
func TestExplainShapes(t *testing.T) {
	p, err := Parse(stagesOf(t, `[{"$set": {"c": {"$multiply": ["$v", 10]}, "d": {"e": true}}}, {"$group": {"_id": {"k": "$a", "c": "x"}, "t": {"$sum": {"$multiply": ["$v", 2]}}, "l": {"$push": {"$literal": [1, 2]}}, "top": {"$topN": {"n": 2, "sortBy": {"v": 1}, "output": "$v"}}}}, {"$bucket": {"groupBy": "$v", "boundaries": [0, 5, 10], "default": "other", "output": {"n": {"$sum": 1}}}}]`), Options{DB: "test", Coll: "c"})
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, st := range p.Explain() {
		names = append(names, st.String())
	}
	got := strings.Join(names, "\n")
	want := `{"$addFields": {"c": {"$multiply": ["$v",{"$const": {"$numberInt":"10"}}]},"d": {"e": {"$const": true}}}}
{"$group": {"_id": {"k": "$a","c": {"$const": "x"}},"t": {"$sum": {"$multiply": ["$v",{"$const": {"$numberInt":"2"}}]}},"l": {"$push": {"$const": [{"$numberInt":"1"},{"$numberInt":"2"}]}},"top": {"$topN": {"n": {"$numberInt":"2"},"sortBy": {"v": {"$numberInt":"1"}},"output": "$v"}}}}
{"$group": {"_id": {"$switch": {"branches": [{"case": {"$and": [{"$gte": ["$v",{"$const": {"$numberInt":"0"}}]},{"$lt": ["$v",{"$const": {"$numberInt":"5"}}]}]},"then": {"$const": {"$numberInt":"0"}}},{"case": {"$and": [{"$gte": ["$v",{"$const": {"$numberInt":"5"}}]},{"$lt": ["$v",{"$const": {"$numberInt":"10"}}]}]},"then": {"$const": {"$numberInt":"5"}}}],"default": {"$const": "other"}}},"n": {"$sum": {"$const": {"$numberInt":"1"}}}}}
{"$sort": {"sortKey": {"_id": {"$numberInt":"1"}}}}`
	if got != want {
		t.Errorf("explain:\n%s\nwant:\n%s", got, want)
	}
}

func rawString(r bson.Raw) string {
	if r == nil {
		return ""
	}
	return r.String()
}

func TestPipelineExplain(t *testing.T) {
	p, err := Parse(stagesOf(t, `[{"$match": {"a": 1}}, {"$group": {"_id": "$a", "n": {"$sum": 1}}}, {"$sort": {"n": -1}}, {"$limit": 2}, {"$lookup": {"from": "x", "localField": "_id", "foreignField": "k", "as": "j"}}, {"$unwind": "$j"}]`), Options{DB: "test", Coll: "c", Explain: true})
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, st := range p.Explain() {
		names = append(names, st.String())
	}
	got := strings.Join(names, "\n")
	for _, want := range []string{`{"$group": {"_id": "$a","n": {"$sum": {"$const": {"$numberInt":"1"}}}}}`, `"sortKey": {"n": {"$numberInt":"-1"}},"limit": {"$numberLong":"2"}`, `"unwinding": {"preserveNullAndEmptyArrays": false}`} {
		if !strings.Contains(got, want) {
			t.Errorf("explain lacks %s:\n%s", want, got)
		}
	}
	h := newFakeHost()
	h.colls["test.c"] = []bson.Raw{docOf(t, `{"_id": 1, "a": 1}`), docOf(t, `{"_id": 2, "a": 1}`), docOf(t, `{"_id": 3, "a": 2}`)}
	h.colls["test.x"] = []bson.Raw{docOf(t, `{"_id": 9, "k": 1}`)}
	in, _ := h.Open(context.Background(), "test.c", p.Query())
	src, err := p.Run(context.Background(), h, in)
	if err != nil {
		t.Fatal(err)
	}
	out, err := drain(context.Background(), src)
	if err != nil || len(out) != 1 {
		t.Fatalf("got %v, %v", out, err)
	}
	ex := p.Explain()
	if !strings.Contains(ex[0].String(), `"nReturned": {"$numberLong":"1"}`) || !strings.Contains(ex[0].String(), `"usedDisk": false`) || !strings.Contains(ex[0].String(), `"maxAccumulatorMemoryUsageBytes": {"n": {"$numberLong":"`) {
		t.Errorf("explain after run: %s", ex[0])
	}
}

// runWith runs a pipeline over docs with opts.
func runWith(t testing.TB, pipeline string, docs []bson.Raw, opts Options) ([]bson.Raw, *Pipeline, error) {
	h := newFakeHost()
	h.colls["test.c"] = docs
	opts.DB, opts.Coll = "test", "c"
	p, err := Parse(stagesOf(t, pipeline), opts)
	if err != nil {
		return nil, nil, err
	}
	in, err := h.Open(context.Background(), "test.c", p.Query())
	if err != nil {
		return nil, nil, err
	}
	src, err := p.Run(context.Background(), h, in)
	if err != nil {
		return nil, p, err
	}
	out, err := drain(context.Background(), src)
	return out, p, err
}

func manyDocs(n, keys int) []bson.Raw {
	docs := make([]bson.Raw, n)
	for i := range docs {
		docs[i], _ = bson.Marshal(bson.D{{Key: "_id", Value: i}, {Key: "k", Value: i % keys}, {Key: "v", Value: n - i}, {Key: "pad", Value: strings.Repeat("x", 50)}})
	}
	return docs
}

func TestBlockingStagesSpill(t *testing.T) {
	docs := manyDocs(2000, 300)
	small := Limits{Sort: 20000, Group: 20000, BucketAuto: 20000}
	for _, pl := range []string{
		`[{"$addFields": {"z": 1}}, {"$sort": {"v": 1}}, {"$project": {"v": 1}}]`,
		`[{"$group": {"_id": "$k", "n": {"$sum": 1}, "f": {"$first": "$v"}, "p": {"$push": "$v"}, "s": {"$addToSet": "$k"}, "sd": {"$stdDevPop": "$v"}, "t": {"$topN": {"n": 2, "sortBy": {"v": 1}, "output": "$v"}}, "mx": {"$maxN": {"n": 2, "input": "$v"}}, "m": {"$mergeObjects": {"k": "$k"}}, "a": {"$avg": "$v"}}}, {"$sort": {"_id": 1}}]`,
		`[{"$bucketAuto": {"groupBy": "$v", "buckets": 7}}]`,
	} {
		mem, _, err := runWith(t, pl, docs, Options{AllowDiskUse: true})
		if err != nil {
			t.Fatalf("%s in memory: %v", pl, err)
		}
		disk, p, err := runWith(t, pl, docs, Options{AllowDiskUse: true, Limits: small, Explain: true})
		if err != nil {
			t.Fatalf("%s spilling: %v", pl, err)
		}
		if len(mem) != len(disk) {
			t.Fatalf("%s: %d docs in memory, %d spilled", pl, len(mem), len(disk))
		}
		for i := range mem {
			if mem[i].String() != disk[i].String() {
				t.Fatalf("%s: doc %d differs:\n%s\n%s", pl, i, mem[i], disk[i])
			}
		}
		if ex := p.Explain(); !strings.Contains(fmt.Sprint(ex), `"usedDisk": true`) {
			t.Errorf("%s: explain does not report usedDisk: %s", pl, ex)
		}
		_, _, err = runWith(t, pl, docs, Options{AllowDiskUse: false, Limits: small})
		if !mongoerr.Is(err, mongoerr.QueryExceededMemoryLimitNoDiskUseAllowed) {
			t.Errorf("%s without allowDiskUse: %v, want 292", pl, err)
		}
	}
}

func TestGraphLookupMemoryLimit(t *testing.T) {
	h := newFakeHost()
	var docs []bson.Raw
	for i := 0; i < 200; i++ {
		d, _ := bson.Marshal(bson.D{{Key: "_id", Value: i}, {Key: "next", Value: i + 1}, {Key: "pad", Value: strings.Repeat("y", 100)}})
		docs = append(docs, d)
	}
	h.colls["test.c"] = docs
	p, err := Parse(stagesOf(t, `[{"$limit": 1}, {"$graphLookup": {"from": "c", "startWith": "$next", "connectFromField": "next", "connectToField": "_id", "as": "chain"}}]`), Options{DB: "test", Coll: "c", Limits: Limits{GraphLookup: 5000}})
	if err != nil {
		t.Fatal(err)
	}
	in, _ := h.Open(context.Background(), "test.c", p.Query())
	src, _ := p.Run(context.Background(), h, in)
	if _, err := drain(context.Background(), src); !mongoerr.Is(err, mongoerr.Code(40099)) {
		t.Fatalf("got %v, want 40099", err)
	}
}

func TestUpdatePipeline(t *testing.T) {
	u, err := ParseUpdatePipeline(stagesOf(t, `[{"$set": {"b": {"$add": ["$a", "$$inc"]}}}, {"$unset": "a"}, {"$replaceWith": {"$mergeObjects": ["$$ROOT", {"c": true}]}}]`), docOf(t, `{"inc": 10}`))
	if err != nil {
		t.Fatal(err)
	}
	out, err := u.Apply(context.Background(), docOf(t, `{"_id": 1, "a": 5}`))
	if err != nil {
		t.Fatal(err)
	}
	if got, want := out.String(), `{"_id": {"$numberInt":"1"},"b": {"$numberInt":"15"},"c": true}`; got != want {
		t.Errorf("got %s, want %s", got, want)
	}
	for _, bad := range []string{`[{"$match": {}}]`, `[{"$group": {"_id": 1}}]`, `[{"$limit": 1}]`} {
		_, err := ParseUpdatePipeline(stagesOf(t, bad), nil)
		if !mongoerr.Is(err, mongoerr.InvalidOptions) {
			t.Errorf("%s: %v, want InvalidOptions", bad, err)
		}
	}
}

func TestPipelineWritesAndInput(t *testing.T) {
	p, err := Parse(stagesOf(t, `[{"$match": {}}, {"$out": "o"}]`), Options{DB: "d", Coll: "c"})
	if err != nil {
		t.Fatal(err)
	}
	if ns, ok := p.Writes(); !ok || ns != "d.o" {
		t.Errorf("Writes = %q %v", ns, ok)
	}
	p, err = Parse(stagesOf(t, `[{"$documents": [{}]}]`), Options{DB: "d"})
	if err != nil {
		t.Fatal(err)
	}
	if p.NeedsInput() {
		t.Error("$documents pipeline needs input")
	}
}

func TestSubPipelineDepth(t *testing.T) {
	pl := `{"$match": {}}`
	for i := 0; i < MaxDepth+2; i++ {
		pl = `{"$lookup": {"from": "c", "pipeline": [` + pl + `], "as": "x"}}`
	}
	_, err := Parse(stagesOf(t, "["+pl+"]"), Options{DB: "d", Coll: "c"})
	if err == nil {
		t.Fatal("deep nesting accepted")
	}
}

// checkMongoErr fails when err is not a MongoDB error (or a context
// error from the fuzz time bound).
func checkMongoErr(t *testing.T, err error) {
	t.Helper()
	if me := mongoerr.As(err); me.Code == mongoerr.InternalError && !strings.Contains(me.Msg, "context") {
		t.Fatalf("non-MongoDB error: %v", err)
	}
}

// TestTopKSpills checks that a top-k $sort past its memory limit spills
// with allowDiskUse (same documents, same order, ties by input order) and
// fails with 292 without it.
func TestTopKSpills(t *testing.T) {
	big := manyDocs(500, 10)
	const pipe = `[{"$addFields": {"z": 1}}, {"$sort": {"k": 1}}, {"$limit": 400}]`
	want, _, err := runWith(t, pipe, big, Options{AllowDiskUse: true})
	if err != nil {
		t.Fatal(err)
	}
	got, _, err := runWith(t, pipe, big, Options{AllowDiskUse: true, Limits: Limits{Sort: 10000}})
	if err != nil {
		t.Fatalf("top-k past the limit: %v", err)
	}
	if len(got) != 400 || len(want) != 400 {
		t.Fatalf("got %d documents, want 400", len(got))
	}
	for i := range got {
		if !bytes.Equal(got[i], want[i]) {
			t.Fatalf("document %d: got %s, want %s", i, got[i], want[i])
		}
	}
	if _, _, err := runWith(t, pipe, big, Options{AllowDiskUse: false, Limits: Limits{Sort: 10000}}); !mongoerr.Is(err, mongoerr.QueryExceededMemoryLimitNoDiskUseAllowed) {
		t.Errorf("without allowDiskUse: %v, want 292", err)
	}
}

// TestPercentileDivergence pins the documented divergence of
// percentileState: on inputs large enough for mongod's t-digest to merge
// centroids the answer here stays the exact discrete percentile.
func TestPercentileDivergence(t *testing.T) {
	docs := make([]bson.Raw, 5000)
	for i := range docs {
		docs[i], _ = bson.Marshal(bson.D{{Key: "_id", Value: i}, {Key: "x", Value: (i * 7919) % 5000}})
	}
	out, _, err := runWith(t, `[{"$group": {"_id": null, "m": {"$median": {"input": "$x", "method": "approximate"}}, "p": {"$percentile": {"input": "$x", "p": [0.01, 0.999], "method": "approximate"}}}}]`, docs, Options{})
	if err != nil || len(out) != 1 {
		t.Fatalf("got %v, %v", out, err)
	}
	if m := out[0].Lookup("m").Double(); m != 2499 {
		t.Errorf("median %v, want 2499", m)
	}
	p := expr.Values(out[0].Lookup("p"))
	if p[0].Double() != 49 || p[1].Double() != 4994 {
		t.Errorf("percentiles %v, want [49, 4994]", p)
	}
}

// TestExprPushdown checks that a leading $match with $expr, at any
// position, goes to the host with the let values, and stays here when a
// let value is missing.
func TestExprPushdown(t *testing.T) {
	let := docOf(t, `{"want": 2}`)
	p, err := Parse(stagesOf(t, `[{"$match": {"$or": [{"$expr": {"$eq": ["$a", "$$want"]}}, {"b": 1}]}}]`), Options{DB: "test", Coll: "c", Let: let})
	if err != nil {
		t.Fatal(err)
	}
	q := p.Query()
	if len(q.Filter) == 0 || q.Let.Lookup("want").Int32() != 2 || len(p.stages) != 0 {
		t.Errorf("query %v let %v, %d stages left", q.Filter, q.Let, len(p.stages))
	}
	p, err = Parse(stagesOf(t, `[{"$match": {"$expr": {"$eq": ["$a", "$$gone"]}}}]`), Options{DB: "test", Coll: "c", Let: docOf(t, `{"gone": "$$REMOVE"}`)})
	if err != nil {
		t.Fatal(err)
	}
	if q := p.Query(); len(q.Filter) != 0 || len(p.stages) != 1 {
		t.Errorf("missing let: query %v, %d stages left", q.Filter, len(p.stages))
	}
}
