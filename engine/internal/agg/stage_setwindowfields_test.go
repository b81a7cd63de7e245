package agg

import (
	"context"
	"fmt"
	"os"
	"strings"
	"testing"
	"time"

	"go.mongodb.org/mongo-driver/v2/bson"

	"github.com/formworkdb/formwork/engine/internal/mongoerr"
)

// runPipeline runs stages (Extended JSON, one per element) over docs.
func runPipeline(t *testing.T, docs []bson.Raw, opts Options, stages ...string) ([]bson.Raw, error) {
	t.Helper()
	var raws []bson.Raw
	for _, s := range stages {
		var d bson.Raw
		if err := bson.UnmarshalExtJSON([]byte(s), false, &d); err != nil {
			t.Fatalf("bad stage %s: %v", s, err)
		}
		raws = append(raws, d)
	}
	opts.Now = time.Now()
	opts.DB, opts.Coll = testDB, "c"
	host := newFakeHost()
	// Insert checks duplicate keys in quadratic time; large inputs go in
	// directly.
	host.colls[nsOf(testDB, "c")] = docs
	return runAggregate(context.Background(), host, raws, opts)
}

func numberedDocs(n int, pad int) []bson.Raw {
	docs := make([]bson.Raw, n)
	for i := range docs {
		d, _ := bson.Marshal(bson.D{{Key: "_id", Value: int32(i)}, {Key: "g", Value: int32(i % 2)}, {Key: "v", Value: int32(i)}, {Key: "s", Value: strings.Repeat("x", pad)}})
		docs[i] = d
	}
	return docs
}

func wantCode(t *testing.T, err error, code mongoerr.Code) {
	t.Helper()
	if err == nil {
		t.Fatalf("no error, want code %d", code)
	}
	if me := mongoerr.As(err); me.Code != code {
		t.Fatalf("error %v, want code %d", err, code)
	}
}

// TestSetWindowFieldsMemoryLimit checks that a partition larger than
// Limits.SetWindowFields fails with 5643011, that the same documents in
// smaller partitions pass, and that a function whose state grows past the
// limit fails with 5414201.
func TestSetWindowFieldsMemoryLimit(t *testing.T) {
	docs := numberedDocs(20, 1000)
	opts := Options{AllowDiskUse: false, Limits: Limits{SetWindowFields: 12000}}
	_, err := runPipeline(t, docs, opts, `{"$setWindowFields": {"sortBy": {"v": 1}, "output": {"s": {"$sum": "$v"}}}}`)
	wantCode(t, err, 5643011)

	opts.Limits.SetWindowFields = 15000
	out, err := runPipeline(t, docs, opts, `{"$setWindowFields": {"partitionBy": "$g", "sortBy": {"v": 1}, "output": {"s": {"$sum": "$v"}}}}`)
	if err != nil || len(out) != 20 {
		t.Fatalf("partitioned: %d docs, %v", len(out), err)
	}

	_, err = runPipeline(t, docs, opts, `{"$setWindowFields": {"partitionBy": "$g", "sortBy": {"v": 1}, "output": {"p": {"$push": "$s", "window": {"documents": [-9, 9]}}}}}`)
	wantCode(t, err, 5414201)
}

// TestSetWindowFieldsSpill checks that with allowDiskUse a partition past
// the limit is spilled to disk and gives the same results as in memory,
// and that the spill file is removed.
func TestSetWindowFieldsSpill(t *testing.T) {
	docs := numberedDocs(200, 1000)
	stage := `{"$setWindowFields": {"sortBy": {"v": 1}, "output": {"s": {"$sum": "$v", "window": {"documents": [-3, 3]}}, "f": {"$first": "$_id", "window": {"range": [-5, 0]}}, "r": {"$rank": {}}, "t": {"$topN": {"n": 2, "output": "$v", "sortBy": {"v": -1}}, "window": {"documents": [-2, 0]}}}}}`
	want, err := runPipeline(t, docs, Options{}, stage)
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	opts := Options{AllowDiskUse: true, TempDir: dir, Limits: Limits{SetWindowFields: 40000}}
	got, err := runPipeline(t, docs, opts, stage)
	if err != nil {
		t.Fatalf("spilled run: %v", err)
	}
	if len(got) != len(want) {
		t.Fatalf("spilled run: %d docs, want %d", len(got), len(want))
	}
	for i := range got {
		if got[i].String() != want[i].String() {
			t.Fatalf("doc %d: spilled %s, in memory %s", i, got[i], want[i])
		}
	}
	if files, _ := os.ReadDir(dir); len(files) != 0 {
		t.Fatalf("spill files left: %v", files)
	}
	opts.AllowDiskUse = false
	_, err = runPipeline(t, docs, opts, stage)
	wantCode(t, err, 5643011)
}

// TestSetWindowFieldsSlidingLinear checks that a sliding $sum over a large
// partition stays linear: doubling the input must not quadruple the time.
func TestSetWindowFieldsSlidingLinear(t *testing.T) {
	run := func(n int) time.Duration {
		docs := numberedDocs(n, 0)
		start := time.Now()
		out, err := runPipeline(t, docs, Options{}, `{"$setWindowFields": {"sortBy": {"v": 1}, "output": {"s": {"$sum": "$v", "window": {"documents": [-5000, 5000]}}, "m": {"$max": "$v", "window": {"range": [-3000, 0]}}}}}`)
		if err != nil || len(out) != n {
			t.Fatalf("n=%d: %d docs, %v", n, len(out), err)
		}
		return time.Since(start)
	}
	small, large := run(20000), run(80000)
	if large > 40*small {
		t.Fatalf("sliding window not linear: 20k docs %v, 80k docs %v", small, large)
	}
}

// TestDensifyDocLimit checks Limits.DensifyDocs (mongod's
// internalQueryMaxAllowedDensifyDocs): generating more documents fails
// with 5897900, exactly the limit passes.
func TestDensifyDocLimit(t *testing.T) {
	docs := []bson.Raw{mustRaw(bson.D{{Key: "v", Value: int32(0)}}), mustRaw(bson.D{{Key: "v", Value: int32(11)}})}
	opts := Options{Limits: Limits{DensifyDocs: 10}}
	out, err := runPipeline(t, docs, opts, `{"$densify": {"field": "v", "range": {"step": 1, "bounds": "full"}}}`)
	if err != nil || len(out) != 12 {
		t.Fatalf("at the limit: %d docs, %v", len(out), err)
	}
	opts.Limits.DensifyDocs = 9
	_, err = runPipeline(t, docs, opts, `{"$densify": {"field": "v", "range": {"step": 1, "bounds": "full"}}}`)
	wantCode(t, err, 5897900)

	// The default limit bounds a huge range.
	_, err = runPipeline(t, docs[:1], Options{}, `{"$densify": {"field": "v", "range": {"step": {"$numberLong": "1"}, "bounds": [{"$numberLong": "0"}, {"$numberLong": "1000000000000"}]}}}`)
	wantCode(t, err, 5897900)
	_, err = runPipeline(t, docs[:1], Options{}, fmt.Sprintf(`{"$densify": {"field": "v", "range": {"step": 1, "bounds": [0, %d]}}}`, DefaultDensifyDocs))
	if err != nil {
		t.Fatalf("default limit: %v", err)
	}
}

func mustRaw(d bson.D) bson.Raw {
	b, err := bson.Marshal(d)
	if err != nil {
		panic(err)
	}
	return b
}

// TestWindowStagesOddInput runs $setWindowFields, $densify and $fill
// specifications built from odd values over odd documents: each must
// give a result or a MongoDB error, never a panic.
func TestWindowStagesOddInput(t *testing.T) {
	vals := []string{`null`, `1`, `-1`, `0`, `2.5`, `"x"`, `"$a"`, `"unbounded"`, `"current"`, `[]`, `[1]`, `[1, 2]`, `["unbounded", "current"]`, `[-2147483648, 2147483647]`, `{}`, `{"a": 1}`, `{"$date": "2024-01-01T00:00:00Z"}`, `{"$numberDecimal": "1.5"}`, `{"$maxKey": 1}`, `{"$numberDouble": "NaN"}`, `{"$numberLong": "9223372036854775807"}`}
	docs := []bson.Raw{
		mustRaw(bson.D{{Key: "_id", Value: 1}, {Key: "a", Value: 1}}),
		mustRaw(bson.D{{Key: "_id", Value: 2}, {Key: "a", Value: bson.A{1, 2}}}),
		mustRaw(bson.D{{Key: "_id", Value: 3}, {Key: "a", Value: "s"}}),
		mustRaw(bson.D{{Key: "_id", Value: 4}, {Key: "a", Value: bson.NewDateTimeFromTime(time.Unix(0, 0))}}),
		mustRaw(bson.D{{Key: "_id", Value: 5}}),
		mustRaw(bson.D{{Key: "_id", Value: 6}, {Key: "a", Value: 2.5}}),
	}
	fns := []string{"$sum", "$avg", "$min", "$max", "$push", "$addToSet", "$first", "$last", "$stdDevPop", "$covarianceSamp", "$count", "$rank", "$shift", "$locf", "$linearFill", "$derivative", "$integral", "$expMovingAvg", "$topN", "$minN"}
	run := func(stage string) {
		defer func() {
			if r := recover(); r != nil {
				t.Fatalf("panic on %s: %v", stage, r)
			}
		}()
		_, _ = runPipeline(t, docs, Options{}, stage)
	}
	for _, v := range vals {
		for _, fn := range fns {
			run(fmt.Sprintf(`{"$setWindowFields": {"sortBy": {"a": 1}, "output": {"o": {"%s": %s}}}}`, fn, v))
			run(fmt.Sprintf(`{"$setWindowFields": {"partitionBy": %s, "sortBy": {"a": 1}, "output": {"o": {"%s": "$a", "window": {"documents": %s}}}}}`, v, fn, v))
			run(fmt.Sprintf(`{"$setWindowFields": {"sortBy": {"a": 1}, "output": {"o": {"%s": {"input": "$a", "n": 2, "unit": "day", "output": "$a", "by": 1, "N": 2}, "window": {"range": %s, "unit": "hour"}}}}}`, fn, v))
			run(fmt.Sprintf(`{"$setWindowFields": {"sortBy": {"a": 1}, "output": {"o": {"%s": {"input": "$a"}, "window": {"range": %s}}}}}`, fn, v))
		}
		for _, w := range vals {
			run(fmt.Sprintf(`{"$densify": {"field": "a", "range": {"step": %s, "bounds": %s}}}`, v, w))
			run(fmt.Sprintf(`{"$densify": {"field": "a", "partitionByFields": ["_id"], "range": {"step": %s, "unit": "day", "bounds": %s}}}`, v, w))
			run(fmt.Sprintf(`{"$fill": {"sortBy": {"a": 1}, "partitionBy": %s, "output": {"a": {"method": "linear"}, "b": {"value": %s}}}}`, v, w))
		}
		run(fmt.Sprintf(`{"$densify": {"field": "a", "range": {"step": 1, "bounds": [%s, %s]}}}`, v, v))
	}
}

// TestWindowStagesExpand checks that $setWindowFields, $densify and $fill
// run as the stages mongod desugars them into, which explain shows (a
// leading $sort goes to the query layer).
func TestWindowStagesExpand(t *testing.T) {
	cases := []struct {
		stage string
		want  []string
		sort  string
	}{
		{`{"$setWindowFields": {"partitionBy": "$g", "sortBy": {"t": 1}, "output": {"s": {"$sum": 1}}}}`, []string{"$_internalSetWindowFields"}, `{"g": 1, "t": 1}`},
		{`{"$setWindowFields": {"partitionBy": {"$toUpper": "$g"}, "output": {"s": {"$sum": 1}}}}`, []string{"$addFields", "$sort", "$_internalSetWindowFields", "$project"}, ``},
		{`{"$setWindowFields": {"output": {"s": {"$sum": 1}}}}`, []string{"$_internalSetWindowFields"}, ``},
		{`{"$densify": {"field": "v", "partitionByFields": ["g"], "range": {"step": 1, "bounds": "partition"}}}`, []string{"$_internalDensify"}, `{"g": 1, "v": 1}`},
		{`{"$fill": {"sortBy": {"t": 1}, "output": {"v": {"method": "locf"}, "w": {"value": 0}}}}`, []string{"$_internalSetWindowFields", "$addFields"}, `{"t": 1}`},
	}
	for _, c := range cases {
		var d bson.Raw
		if err := bson.UnmarshalExtJSON([]byte(c.stage), false, &d); err != nil {
			t.Fatal(err)
		}
		p, err := Parse([]bson.Raw{d}, Options{DB: testDB, Coll: "c"})
		if err != nil {
			t.Fatalf("%s: %v", c.stage, err)
		}
		var names []string
		for _, e := range p.Explain() {
			names = append(names, e.Index(0).Key())
		}
		if fmt.Sprint(names) != fmt.Sprint(c.want) {
			t.Errorf("%s: stages %v, want %v", c.stage, names, c.want)
		}
		got := ""
		if p.Query().Sort != nil {
			got = p.Query().Sort.String()
		}
		want := ""
		if c.sort != "" {
			var s bson.Raw
			_ = bson.UnmarshalExtJSON([]byte(c.sort), false, &s)
			want = s.String()
		}
		if got != want {
			t.Errorf("%s: query sort %s, want %s", c.stage, got, want)
		}
	}
}

// BenchmarkSetWindowFields measures window functions over one partition
// of 100 000 documents.
func BenchmarkSetWindowFields(b *testing.B) {
	docs := numberedDocs(100000, 0)
	t := &testing.T{}
	for _, c := range []struct{ name, stage string }{
		{"window=whole", `{"$setWindowFields": {"output": {"s": {"$sum": "$v"}}}}`},
		{"window=running", `{"$setWindowFields": {"sortBy": {"v": 1}, "output": {"s": {"$sum": "$v", "window": {"documents": ["unbounded", "current"]}}}}}`},
		{"window=sliding1000", `{"$setWindowFields": {"sortBy": {"v": 1}, "output": {"s": {"$avg": "$v", "window": {"documents": [-500, 500]}}, "m": {"$max": "$v", "window": {"documents": [-500, 500]}}}}}`},
		{"window=range", `{"$setWindowFields": {"sortBy": {"v": 1}, "output": {"s": {"$sum": "$v", "window": {"range": [-100, 100]}}}}}`},
	} {
		b.Run(c.name, func(b *testing.B) {
			for range b.N {
				if _, err := runPipeline(t, docs, Options{}, c.stage); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
