package engine_test

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"math"
	"slices"
	"testing"
	"time"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo"
	"go.mongodb.org/mongo-driver/v2/mongo/options"
	"pgregory.net/rapid"

	"github.com/formworkdb/formwork/engine"
	"github.com/formworkdb/formwork/internal/testenv"
)

// genValue draws a value of mixed type: numbers of every type (int32,
// int64, double, decimal, infinities, NaN, -0) at shared values, strings,
// null, undefined, booleans, MinKey, MaxKey, arrays (nested ones too) and
// nested documents.
func genValue(t *rapid.T, depth int) any {
	k := rapid.IntRange(0, 15).Draw(t, "kind")
	if (depth > 1 && (k == 7 || k == 8 || k == 9)) || depth > 2 && k == 14 {
		k = 0
	}
	n := rapid.IntRange(-2, 4).Draw(t, "n")
	switch k {
	case 10:
		return bson.MinKey{}
	case 11:
		return bson.MaxKey{}
	case 12:
		d, _ := bson.ParseDecimal128(fmt.Sprint(n) + []string{"", ".5", ".0"}[rapid.IntRange(0, 2).Draw(t, "dfrac")])
		return d
	case 13:
		return bson.Undefined{}
	case 14:
		// An array nested in an array, below the depth limit of the others.
		arr := bson.A{}
		for i := rapid.IntRange(0, 2).Draw(t, "nlen"); i > 0; i-- {
			arr = append(arr, genValue(t, depth+1))
		}
		return arr
	case 15:
		return []any{math.Inf(-1), math.NaN(), -0.0, false}[rapid.IntRange(0, 3).Draw(t, "special")]
	case 0:
		return int32(n)
	case 1:
		return int64(n)
	case 2:
		return float64(n) + []float64{0, 0.5}[rapid.IntRange(0, 1).Draw(t, "frac")]
	case 3:
		return []string{"", "a", "ab", "abc", "b", "B"}[rapid.IntRange(0, 5).Draw(t, "s")]
	case 4:
		return nil
	case 5:
		return math.Inf(1)
	case 6:
		return true
	case 7, 8:
		m := rapid.IntRange(0, 3).Draw(t, "len")
		arr := bson.A{}
		for i := 0; i < m; i++ {
			if depth == 0 && rapid.Bool().Draw(t, "objelem") {
				arr = append(arr, bson.D{{Key: "x", Value: genValue(t, depth+1)}})
			} else {
				arr = append(arr, genValue(t, depth+1))
			}
		}
		return arr
	}
	return bson.D{{Key: "x", Value: genValue(t, depth+1)}}
}

func genDoc(t *rapid.T, id int) bson.D {
	d := bson.D{{Key: "_id", Value: id}}
	for _, f := range []string{"a", "b"} {
		if rapid.IntRange(0, 5).Draw(t, "has"+f) > 0 {
			d = append(d, bson.E{Key: f, Value: genValue(t, 0)})
		}
	}
	if rapid.Bool().Draw(t, "hasc") {
		d = append(d, bson.E{Key: "c", Value: bson.D{{Key: "x", Value: genValue(t, 1)}}})
	}
	return d
}

var propIndexes = []bson.D{
	{{Key: "key", Value: bson.D{{Key: "a", Value: 1}}}, {Key: "name", Value: "a1"}},
	{{Key: "key", Value: bson.D{{Key: "a", Value: -1}}}, {Key: "name", Value: "a-1"}},
	{{Key: "key", Value: bson.D{{Key: "a", Value: 1}, {Key: "b", Value: 1}}}, {Key: "name", Value: "a1b1"}},
	{{Key: "key", Value: bson.D{{Key: "b", Value: 1}, {Key: "a", Value: -1}}}, {Key: "name", Value: "b1a-1"}},
	{{Key: "key", Value: bson.D{{Key: "c.x", Value: 1}}}, {Key: "name", Value: "cx1"}},
	{{Key: "key", Value: bson.D{{Key: "a.x", Value: 1}, {Key: "b", Value: 1}}}, {Key: "name", Value: "ax1b1"}},
	{{Key: "key", Value: bson.D{{Key: "b", Value: 1}}}, {Key: "name", Value: "b1sparse"}, {Key: "sparse", Value: true}},
	{{Key: "key", Value: bson.D{{Key: "a", Value: 1}}}, {Key: "name", Value: "a1partial"}, {Key: "partialFilterExpression", Value: bson.D{{Key: "b", Value: bson.D{{Key: "$gt", Value: 0}}}}}},
}

func genPred(t *rapid.T) bson.E {
	path := []string{"a", "b", "c.x", "a.x"}[rapid.IntRange(0, 3).Draw(t, "path")]
	v := genValue(t, 1)
	switch rapid.IntRange(0, 12).Draw(t, "op") {
	case 0:
		return bson.E{Key: path, Value: v}
	case 1, 2, 3, 4:
		op := []string{"$gt", "$gte", "$lt", "$lte"}[rapid.IntRange(0, 3).Draw(t, "cmp")]
		return bson.E{Key: path, Value: bson.D{{Key: op, Value: v}}}
	case 5:
		return bson.E{Key: path, Value: bson.D{{Key: "$in", Value: bson.A{v, genValue(t, 1)}}}}
	case 6:
		return bson.E{Key: path, Value: bson.D{{Key: "$ne", Value: v}}}
	case 7:
		return bson.E{Key: path, Value: bson.D{{Key: "$nin", Value: bson.A{v}}}}
	case 8:
		return bson.E{Key: path, Value: bson.D{{Key: "$exists", Value: rapid.Bool().Draw(t, "ex")}}}
	case 9:
		return bson.E{Key: path, Value: bson.Regex{Pattern: []string{"^a", "^ab", "b", "^A"}[rapid.IntRange(0, 3).Draw(t, "re")]}}
	case 10:
		return bson.E{Key: path, Value: bson.D{{Key: "$gt", Value: v}, {Key: "$lt", Value: genValue(t, 1)}}}
	case 11:
		return bson.E{Key: "a", Value: bson.D{{Key: "$elemMatch", Value: bson.D{{Key: "x", Value: v}}}}}
	}
	return bson.E{Key: path, Value: bson.D{{Key: "$type", Value: []string{"string", "number", "array", "null"}[rapid.IntRange(0, 3).Draw(t, "ty")]}}}
}

func genFilter(t *rapid.T) bson.D {
	var f bson.D
	n := rapid.IntRange(0, 3).Draw(t, "npred")
	for i := 0; i < n; i++ {
		f = append(f, genPred(t))
	}
	if rapid.IntRange(0, 4).Draw(t, "or") == 0 {
		f = append(f, bson.E{Key: "$or", Value: bson.A{bson.D{genPred(t)}, bson.D{genPred(t)}}})
	}
	if f == nil {
		f = bson.D{}
	}
	return f
}

func planIDs(t *rapid.T, ctx context.Context, c *mongo.Collection, filter, sort bson.D, hint any) ([]any, error) {
	opts := options.Find().SetHint(hint)
	if sort != nil {
		opts.SetSort(sort)
	}
	cur, err := c.Find(ctx, filter, opts)
	if err != nil {
		return nil, err
	}
	var docs []bson.D
	if err := cur.All(ctx, &docs); err != nil {
		return nil, err
	}
	out := make([]any, len(docs))
	for i, d := range docs {
		out[i] = d[0].Value
	}
	return out, nil
}

// TestPlanEquivalence checks, for random documents, indexes, filters and
// sorts, that every candidate index plan (forced with hint) returns the
// documents a collection scan returns, in the same order when sorted.
func TestPlanEquivalence(t *testing.T) {
	_, db := newDB(t)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	iter := 0
	rapid.Check(t, func(rt *rapid.T) {
		iter++
		c := db.Collection(fmt.Sprintf("p%d", iter))
		n := rapid.IntRange(0, 25).Draw(rt, "ndocs")
		var docs []any
		for i := 0; i < n; i++ {
			docs = append(docs, genDoc(rt, i))
		}
		if n > 0 {
			if _, err := c.InsertMany(ctx, docs); err != nil {
				rt.Fatalf("insert: %v", err)
			}
		} else if err := db.CreateCollection(ctx, c.Name()); err != nil {
			rt.Fatal(err)
		}
		var specs bson.A
		var hints []string
		for i, ix := range propIndexes {
			if rapid.Bool().Draw(rt, fmt.Sprintf("ix%d", i)) {
				specs = append(specs, ix)
				if i < 6 || i == 7 {
					hints = append(hints, ix[1].Value.(string))
				}
			}
		}
		if len(specs) > 0 {
			err := db.RunCommand(ctx, bson.D{{Key: "createIndexes", Value: c.Name()}, {Key: "indexes", Value: specs}}).Err()
			var ce mongo.CommandError
			if errors.As(err, &ce) && ce.Code == 171 {
				rt.Skip("parallel arrays")
			}
			if err != nil {
				rt.Fatalf("createIndexes: %v", err)
			}
		}
		filter := genFilter(rt)
		var sort bson.D
		if rapid.Bool().Draw(rt, "sorted") {
			f := []string{"a", "b", "c.x"}[rapid.IntRange(0, 2).Draw(rt, "sortf")]
			sort = bson.D{{Key: f, Value: []int{1, -1}[rapid.IntRange(0, 1).Draw(rt, "sortd")]}, {Key: "_id", Value: 1}}
		}
		want, err := planIDs(rt, ctx, c, filter, sort, bson.D{{Key: "$natural", Value: 1}})
		if err != nil {
			var ce mongo.CommandError
			if errors.As(err, &ce) && (ce.Code == 2 || ce.Code == 51091) {
				rt.Skip("invalid query")
			}
			rt.Fatalf("collscan %v: %v", filter, err)
		}
		if sort == nil {
			slices.SortFunc(want, cmpID)
		}
		for _, h := range append(hints, "") {
			var hint any = h
			if h == "" {
				hint = nil
			}
			got, err := planIDs(rt, ctx, c, filter, sort, hint)
			if err != nil {
				var ce mongo.CommandError
				if errors.As(err, &ce) && ce.Code == 291 {
					continue // a partial index the query cannot use
				}
				rt.Fatalf("hint %q filter %v: %v", h, filter, err)
			}
			if sort == nil {
				slices.SortFunc(got, cmpID)
			}
			if fmt.Sprint(got) != fmt.Sprint(want) {
				rt.Fatalf("hint %q filter %v sort %v:\n got %v\nwant %v\ndocs %v", h, filter, sort, got, want, docs)
			}
		}
	})
}

func cmpID(a, b any) int {
	return int(a.(int32)) - int(b.(int32))
}

var benchLarge = flag.Bool("bench.large", false, "BenchmarkPointFind also builds a 1,000,000-document collection")

// BenchmarkPointFind measures an indexed point lookup against the same
// lookup by collection scan as the collection grows. The 1M-document
// collection is built only with -bench.large.
func BenchmarkPointFind(b *testing.B) {
	sizes := []int{10000, 100000}
	if *benchLarge {
		sizes = append(sizes, 1000000)
	}
	for _, size := range sizes {
		_, client := newBenchDB(b)
		db := client.Database("bench")
		ctx := context.Background()
		c := db.Collection("c")
		start := time.Now()
		batch := make([]any, 0, 10000)
		for i := 0; i < size; i++ {
			batch = append(batch, bson.D{{Key: "_id", Value: i}, {Key: "k", Value: i}, {Key: "u", Value: i}})
			if len(batch) == cap(batch) {
				if _, err := c.InsertMany(ctx, batch); err != nil {
					b.Fatal(err)
				}
				batch = batch[:0]
			}
		}
		if err := db.RunCommand(ctx, bson.D{{Key: "createIndexes", Value: "c"}, {Key: "indexes", Value: bson.A{
			bson.D{{Key: "key", Value: bson.D{{Key: "k", Value: 1}}}, {Key: "name", Value: "k_1"}}}}}).Err(); err != nil {
			b.Fatal(err)
		}
		b.Logf("docs=%d: built in %v", size, time.Since(start))
		for _, mode := range []string{"indexed", "collscan"} {
			field := "k"
			if mode == "collscan" {
				field = "u"
			}
			b.Run(fmt.Sprintf("docs=%d/%s", size, mode), func(b *testing.B) {
				for i := 0; b.Loop(); i++ {
					var d bson.D
					if err := c.FindOne(ctx, bson.D{{Key: field, Value: (i * 7919) % size}}).Decode(&d); err != nil {
						b.Fatal(err)
					}
				}
				b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "finds/s")
			})
		}
	}
}

func newBenchDB(b *testing.B) (any, *mongo.Client) {
	b.Helper()
	db, client := testenv.Engine(b, engine.Options{})
	return db, client
}

// TestBlockingSortMemoryLimit checks error 292 without allowDiskUse and a
// spilling external sort otherwise.
func TestBlockingSortMemoryLimit(t *testing.T) {
	_, db := newDB(t)
	ctx := ctxT(t)
	var docs []any
	for i := 0; i < 300; i++ {
		docs = append(docs, bson.D{{Key: "_id", Value: i}, {Key: "k", Value: (i * 37) % 300}, {Key: "pad", Value: fmt.Sprintf("%0200d", i)}})
	}
	if _, err := db.Collection("s").InsertMany(ctx, docs); err != nil {
		t.Fatal(err)
	}
	admin := db.Client().Database("admin")
	if err := admin.RunCommand(ctx, bson.D{{Key: "setParameter", Value: 1}, {Key: "internalQueryMaxBlockingSortMemoryUsageBytes", Value: 10000}}).Err(); err != nil {
		t.Fatal(err)
	}
	err := db.RunCommand(ctx, bson.D{{Key: "find", Value: "s"}, {Key: "sort", Value: bson.D{{Key: "k", Value: 1}}}, {Key: "allowDiskUse", Value: false}}).Err()
	wantCode(t, err, 292, "QueryExceededMemoryLimitNoDiskUseAllowed")
	cur, err := db.Collection("s").Find(ctx, bson.D{}, options.Find().SetSort(bson.D{{Key: "k", Value: -1}}))
	if err != nil {
		t.Fatal(err)
	}
	var got []bson.D
	if err := cur.All(ctx, &got); err != nil {
		t.Fatal(err)
	}
	if len(got) != 300 {
		t.Fatalf("spilled sort returned %d documents", len(got))
	}
	for i, d := range got {
		if d[1].Value.(int32) != int32(299-i) {
			t.Fatalf("position %d holds k=%v", i, d[1].Value)
		}
	}
	var ex bson.D
	if err := db.RunCommand(ctx, bson.D{{Key: "explain", Value: bson.D{{Key: "find", Value: "s"}, {Key: "sort", Value: bson.D{{Key: "k", Value: 1}}}}}}).Decode(&ex); err != nil {
		t.Fatal(err)
	}
	if u := lookup(ex, "executionStats", "executionStages", "usedDisk"); u != true {
		t.Errorf("explain usedDisk = %v", u)
	}
	// A top-k sort keeps only limit rows, within the limit.
	if err := db.RunCommand(ctx, bson.D{{Key: "find", Value: "s"}, {Key: "sort", Value: bson.D{{Key: "k", Value: 1}}}, {Key: "limit", Value: 3}, {Key: "allowDiskUse", Value: false}}).Err(); err != nil {
		t.Errorf("top-k sort: %v", err)
	}
}

// TestProfilerAndIndexStats checks system.profile entries and
// $indexStats access counts.
func TestProfilerAndIndexStats(t *testing.T) {
	_, db := newDB(t)
	ctx := ctxT(t)
	c := db.Collection("pr")
	if _, err := c.InsertMany(ctx, []any{bson.D{{Key: "_id", Value: 1}, {Key: "a", Value: 1}}, bson.D{{Key: "_id", Value: 2}, {Key: "a", Value: 2}}}); err != nil {
		t.Fatal(err)
	}
	createIndex(t, db, "pr", bson.D{{Key: "a", Value: 1}})
	var res bson.D
	if err := db.RunCommand(ctx, bson.D{{Key: "profile", Value: 2}}).Decode(&res); err != nil {
		t.Fatal(err)
	}
	if lookup(res, "was") != int32(0) {
		t.Fatalf("profile reply %v", res)
	}
	if err := c.FindOne(ctx, bson.D{{Key: "a", Value: 2}}).Err(); err != nil {
		t.Fatal(err)
	}
	if err := c.FindOne(ctx, bson.D{{Key: "_id", Value: 1}}).Err(); err != nil {
		t.Fatal(err)
	}
	if err := db.RunCommand(ctx, bson.D{{Key: "profile", Value: 0}}).Err(); err != nil {
		t.Fatal(err)
	}
	cur, err := db.Collection("system.profile").Find(ctx, bson.D{{Key: "op", Value: "query"}})
	if err != nil {
		t.Fatal(err)
	}
	var entries []bson.D
	if err := cur.All(ctx, &entries); err != nil {
		t.Fatal(err)
	}
	if len(entries) != 2 {
		t.Fatalf("profile entries = %v", entries)
	}
	if s := lookup(entries[0], "planSummary"); s != "IXSCAN { a: 1 }" {
		t.Errorf("planSummary = %v", s)
	}
	if k, d := lookup(entries[0], "keysExamined"), lookup(entries[0], "docsExamined"); k != int32(1) || d != int32(1) {
		t.Errorf("examined = %v keys, %v docs", k, d)
	}
	if s := lookup(entries[1], "planSummary"); s != "IDHACK" {
		t.Errorf("planSummary = %v", s)
	}
	cur, err = c.Aggregate(ctx, mongo.Pipeline{{{Key: "$indexStats", Value: bson.D{}}}})
	if err != nil {
		t.Fatal(err)
	}
	var stats []bson.D
	if err := cur.All(ctx, &stats); err != nil {
		t.Fatal(err)
	}
	ops := map[string]any{}
	for _, s := range stats {
		ops[lookup(s, "name").(string)] = lookup(s, "accesses", "ops")
	}
	if ops["a_1"] != int64(1) || ops["_id_"] != int64(1) {
		t.Errorf("$indexStats ops = %v", ops)
	}
}

// genWildValue draws a value for wildcard documents: scalars of mixed
// types, empty and nested documents whose field names include array
// positions ("0"), and arrays of anything, arrays and documents included.
func genWildValue(t *rapid.T, depth int) any {
	k := rapid.IntRange(0, 11).Draw(t, "wkind")
	if depth >= 3 && k >= 8 {
		k %= 8
	}
	n := rapid.IntRange(-1, 3).Draw(t, "wn")
	switch k {
	case 0:
		return int32(n)
	case 1:
		return int64(n)
	case 2:
		return float64(n) + 0.5
	case 3:
		return []string{"", "a", "ab", "b", "x"}[rapid.IntRange(0, 4).Draw(t, "ws")]
	case 4:
		return nil
	case 5:
		return n > 1
	case 6:
		return bson.D{}
	case 7:
		return bson.A{}
	case 8, 9:
		d := bson.D{}
		for _, f := range []string{"x", "y", "0"} {
			if rapid.IntRange(0, 2).Draw(t, "whas"+f) > 0 {
				d = append(d, bson.E{Key: f, Value: genWildValue(t, depth+1)})
			}
		}
		return d
	}
	arr := bson.A{}
	for i := rapid.IntRange(0, 3).Draw(t, "wlen"); i > 0; i-- {
		arr = append(arr, genWildValue(t, depth+1))
	}
	return arr
}

func genWildDoc(t *rapid.T, id int) bson.D {
	d := bson.D{{Key: "_id", Value: id}}
	for _, f := range []string{"a", "b", "c"} {
		if rapid.IntRange(0, 4).Draw(t, "whas"+f) > 0 {
			d = append(d, bson.E{Key: f, Value: genWildValue(t, 0)})
		}
	}
	if rapid.Bool().Draw(t, "whasn") {
		d = append(d, bson.E{Key: "n", Value: int32(rapid.IntRange(0, 2).Draw(t, "wnv"))})
	}
	return d
}

var wildPaths = []string{"a", "a.x", "a.y", "a.x.y", "a.0", "a.0.x", "a.x.0", "a.1", "b", "b.x", "c", "c.x", "c.0", "n", "_id"}

func genWildPred(t *rapid.T) bson.E {
	path := wildPaths[rapid.IntRange(0, len(wildPaths)-1).Draw(t, "wpath")]
	v := genWildValue(t, 2)
	switch rapid.IntRange(0, 16).Draw(t, "wop") {
	case 0, 1:
		return bson.E{Key: path, Value: v}
	case 2, 3, 4:
		op := []string{"$gt", "$gte", "$lt", "$lte"}[rapid.IntRange(0, 3).Draw(t, "wcmp")]
		return bson.E{Key: path, Value: bson.D{{Key: op, Value: v}}}
	case 5:
		return bson.E{Key: path, Value: bson.D{{Key: "$in", Value: bson.A{v, genWildValue(t, 2)}}}}
	case 6:
		return bson.E{Key: path, Value: bson.D{{Key: "$ne", Value: v}}}
	case 7:
		return bson.E{Key: path, Value: bson.D{{Key: "$ne", Value: nil}}}
	case 8:
		return bson.E{Key: path, Value: bson.D{{Key: "$nin", Value: bson.A{v}}}}
	case 9:
		return bson.E{Key: path, Value: bson.D{{Key: "$exists", Value: rapid.Bool().Draw(t, "wex")}}}
	case 10:
		return bson.E{Key: path, Value: bson.Regex{Pattern: []string{"^a", "^ab", "b", "^x"}[rapid.IntRange(0, 3).Draw(t, "wre")]}}
	case 11:
		return bson.E{Key: path, Value: bson.D{{Key: "$gt", Value: v}, {Key: "$lt", Value: genWildValue(t, 2)}}}
	case 12:
		return bson.E{Key: path, Value: bson.D{{Key: "$elemMatch", Value: bson.D{{Key: "$gte", Value: v}}}}}
	case 13:
		return bson.E{Key: path, Value: bson.D{{Key: "$elemMatch", Value: bson.D{{Key: "x", Value: v}}}}}
	case 14:
		return bson.E{Key: path, Value: bson.D{{Key: "$all", Value: bson.A{v}}}}
	case 15:
		return bson.E{Key: path, Value: []any{bson.D{}, bson.A{}}[rapid.IntRange(0, 1).Draw(t, "wempty")]}
	}
	ty := []string{"string", "number", "object", "array", "null", "bool"}[rapid.IntRange(0, 5).Draw(t, "wty")]
	return bson.E{Key: path, Value: bson.D{{Key: "$type", Value: ty}}}
}

var wildIndexes = []bson.D{
	{{Key: "key", Value: bson.D{{Key: "$**", Value: 1}}}, {Key: "name", Value: "w"}},
	{{Key: "key", Value: bson.D{{Key: "$**", Value: -1}}}, {Key: "name", Value: "w"}},
	{{Key: "key", Value: bson.D{{Key: "a.$**", Value: 1}}}, {Key: "name", Value: "w"}},
	{{Key: "key", Value: bson.D{{Key: "$**", Value: 1}}}, {Key: "name", Value: "w"}, {Key: "wildcardProjection", Value: bson.D{{Key: "a.x", Value: 1}, {Key: "c", Value: 1}}}},
	{{Key: "key", Value: bson.D{{Key: "$**", Value: 1}}}, {Key: "name", Value: "w"}, {Key: "wildcardProjection", Value: bson.D{{Key: "b", Value: 0}, {Key: "a.y", Value: 0}}}},
	{{Key: "key", Value: bson.D{{Key: "$**", Value: 1}}}, {Key: "name", Value: "w"}, {Key: "wildcardProjection", Value: bson.D{{Key: "_id", Value: 1}, {Key: "a", Value: 1}}}},
	{{Key: "key", Value: bson.D{{Key: "a.$**", Value: 1}, {Key: "n", Value: 1}}}, {Key: "name", Value: "w"}},
	{{Key: "key", Value: bson.D{{Key: "n", Value: 1}, {Key: "a.$**", Value: 1}}}, {Key: "name", Value: "w"}},
}

// sortGroups returns, for rows sorted by a sort key then _id ascending
// (asc) and by the same key then _id descending (desc), the tie group of
// each _id: rows with equal sort keys share a group, groups numbered in
// sort order.
func sortGroups(asc, desc []any) map[any]int {
	g := map[any]int{}
	seen := map[any]int{}
	open, group := 0, 0
	for k := range asc {
		for _, id := range []any{asc[k], desc[k]} {
			seen[id]++
			if seen[id] == 2 {
				open--
			} else {
				open++
			}
		}
		g[asc[k]] = group
		if open == 0 {
			group++
		}
	}
	return g
}

// TestWildcardPlanEquivalence checks, for random nested documents (arrays
// of documents, numeric field names, empty arrays and objects, mixed
// types, missing fields) and random filters, that every plan of a hinted
// wildcard index, and the planner's own choice, returns exactly what a
// collection scan returns; with a sort, in the same order of sort keys.
func TestWildcardPlanEquivalence(t *testing.T) {
	_, db := newDB(t)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	iter, used, refused := 0, 0, 0
	rapid.Check(t, func(rt *rapid.T) {
		iter++
		c := db.Collection(fmt.Sprintf("w%d", iter))
		var docs []any
		for i := rapid.IntRange(1, 30).Draw(rt, "ndocs"); i > 0; i-- {
			docs = append(docs, genWildDoc(rt, len(docs)))
		}
		if _, err := c.InsertMany(ctx, docs); err != nil {
			rt.Fatalf("insert: %v", err)
		}
		spec := wildIndexes[rapid.IntRange(0, len(wildIndexes)-1).Draw(rt, "wix")]
		specs := bson.A{spec}
		if rapid.Bool().Draw(rt, "regular") {
			// A competitor for the trial. Not on a.x: a regular index
			// there mis-answers {"a.x": {$ne: null}} for {a: [0]} (a
			// one-element array is not multikey), a bug outside wildcard
			// planning.
			specs = append(specs, bson.D{{Key: "key", Value: bson.D{{Key: "n", Value: 1}}}, {Key: "name", Value: "n1"}})
		}
		if err := db.RunCommand(ctx, bson.D{{Key: "createIndexes", Value: c.Name()}, {Key: "indexes", Value: specs}}).Err(); err != nil {
			rt.Fatalf("createIndexes %v: %v", specs, err)
		}
		var filter bson.D
		for i := rapid.IntRange(1, 3).Draw(rt, "wnpred"); i > 0; i-- {
			filter = append(filter, genWildPred(rt))
		}
		if rapid.IntRange(0, 4).Draw(rt, "wor") == 0 {
			filter = append(filter, bson.E{Key: "$or", Value: bson.A{bson.D{genWildPred(rt)}, bson.D{genWildPred(rt)}}})
		}
		var sortPath string
		if rapid.IntRange(0, 3).Draw(rt, "wsorted") == 0 {
			sortPath = []string{"a", "a.x", "a.0", "c.x", "n"}[rapid.IntRange(0, 4).Draw(rt, "wsortf")]
		}
		dir := []int{1, -1}[rapid.IntRange(0, 1).Draw(rt, "wsortd")]
		sortBy := func(idDir int) bson.D {
			if sortPath == "" {
				return nil
			}
			return bson.D{{Key: sortPath, Value: dir}, {Key: "_id", Value: idDir}}
		}
		natural := bson.D{{Key: "$natural", Value: 1}}
		want, err := planIDs(rt, ctx, c, filter, sortBy(1), natural)
		if err != nil {
			var ce mongo.CommandError
			if errors.As(err, &ce) && (ce.Code == 2 || ce.Code == 51091) {
				rt.Skip("invalid query")
			}
			rt.Fatalf("collscan %v: %v", filter, err)
		}
		var groups map[any]int
		if sortPath != "" {
			desc, err := planIDs(rt, ctx, c, filter, sortBy(-1), natural)
			if err != nil {
				rt.Fatal(err)
			}
			groups = sortGroups(want, desc)
		} else {
			slices.SortFunc(want, cmpID)
		}
		for _, hint := range []any{"w", nil} {
			var sort bson.D
			if sortPath != "" {
				sort = bson.D{{Key: sortPath, Value: dir}}
			}
			got, err := planIDs(rt, ctx, c, filter, sort, hint)
			if err != nil {
				var ce mongo.CommandError
				if hint != nil && errors.As(err, &ce) && (ce.Code == 291 || ce.Code == 2) {
					refused++
					continue // nothing the wildcard index can answer
				}
				rt.Fatalf("hint %v filter %v: %v", hint, filter, err)
			}
			if hint != nil {
				used++
			}
			if sortPath == "" {
				slices.SortFunc(got, cmpID)
				if fmt.Sprint(got) != fmt.Sprint(want) {
					rt.Fatalf("index %v hint %v filter %v:\n got %v\nwant %v\ndocs %v", specs, hint, filter, got, want, docs)
				}
				continue
			}
			ids, wantIDs := slices.Clone(got), slices.Clone(want)
			slices.SortFunc(ids, cmpID)
			slices.SortFunc(wantIDs, cmpID)
			ok := fmt.Sprint(ids) == fmt.Sprint(wantIDs)
			last := 0
			for _, id := range got {
				g, in := groups[id]
				if !in || g < last {
					ok = false
				}
				last = g
			}
			if !ok {
				rt.Fatalf("index %v hint %v filter %v sort %v:\n got %v\nwant %v (ties %v)\ndocs %v", specs, hint, filter, sort, got, want, groups, docs)
			}
		}
	})
	t.Logf("hinted wildcard plans: %d run, %d refused", used, refused)
	if used == 0 {
		t.Error("the wildcard index answered no query")
	}
}

// TestPlanCacheClear checks that a query shape's cached plan is reused,
// that planCacheClear drops all of a collection's plans or one shape's,
// and that dropping the cached plan's index makes the planner choose
// again instead of reading a dropped index.
func TestPlanCacheClear(t *testing.T) {
	_, db := newDB(t)
	ctx := ctxT(t)
	c := db.Collection("pc")
	var docs []any
	for i := 0; i < 200; i++ {
		docs = append(docs, bson.D{{Key: "_id", Value: i}, {Key: "a", Value: i % 10}, {Key: "b", Value: i % 7}, {Key: "c", Value: i % 3}})
	}
	if _, err := c.InsertMany(ctx, docs); err != nil {
		t.Fatal(err)
	}
	for _, k := range []string{"a", "b", "c"} {
		createIndex(t, db, "pc", bson.D{{Key: k, Value: 1}})
	}
	if err := db.RunCommand(ctx, bson.D{{Key: "profile", Value: 2}}).Err(); err != nil {
		t.Fatal(err)
	}
	shapeA := bson.D{{Key: "a", Value: 3}, {Key: "b", Value: 3}, {Key: "c", Value: 0}}
	shapeB := bson.D{{Key: "a", Value: bson.D{{Key: "$gt", Value: 7}}}, {Key: "b", Value: 3}}
	run := func(filter bson.D) bool {
		t.Helper()
		n, err := c.CountDocuments(ctx, filter)
		if err != nil {
			t.Fatal(err)
		}
		var want int64
		for i := 0; i < 200; i++ {
			d := bson.M{"a": i % 10, "b": i % 7, "c": i % 3}
			ok := true
			for _, e := range filter {
				switch v := e.Value.(type) {
				case int:
					ok = ok && d[e.Key] == v
				case bson.D:
					ok = ok && d[e.Key].(int) > v[0].Value.(int)
				}
			}
			if ok {
				want++
			}
		}
		if n != want {
			t.Fatalf("%v: %d documents, want %d", filter, n, want)
		}
		cur, err := db.Collection("system.profile").Find(ctx, bson.D{{Key: "op", Value: "command"}, {Key: "command.aggregate", Value: "pc"}},
			options.Find().SetSort(bson.D{{Key: "$natural", Value: -1}}).SetLimit(1))
		if err != nil {
			t.Fatal(err)
		}
		var last []bson.D
		if err := cur.All(ctx, &last); err != nil || len(last) != 1 {
			t.Fatalf("profile: %v %v", last, err)
		}
		return lookup(last[0], "fromMultiPlanner") == true
	}
	clear := func(extra ...bson.E) {
		t.Helper()
		if err := db.RunCommand(ctx, append(bson.D{{Key: "planCacheClear", Value: "pc"}}, extra...)).Err(); err != nil {
			t.Fatal(err)
		}
	}
	if !run(shapeA) || run(shapeA) {
		t.Fatal("shape A: want a trial, then the cached plan")
	}
	if !run(shapeB) || run(shapeB) {
		t.Fatal("shape B: want a trial, then the cached plan")
	}
	clear(bson.E{Key: "query", Value: bson.D{{Key: "a", Value: 9}, {Key: "b", Value: 1}, {Key: "c", Value: 2}}})
	if !run(shapeA) {
		t.Error("shape A still cached after planCacheClear of its shape")
	}
	if run(shapeB) {
		t.Error("shape B re-planned after planCacheClear of another shape")
	}
	clear()
	if !run(shapeB) {
		t.Error("shape B still cached after planCacheClear")
	}
	// The winner of shape A is cached again; dropping every index it
	// could use but one leaves a single candidate, so no cached plan of a
	// dropped index can be read.
	run(shapeA)
	for _, name := range []string{"a_1", "b_1"} {
		if err := c.Indexes().DropOne(ctx, name); err != nil {
			t.Fatal(err)
		}
	}
	run(shapeA)
	createIndex(t, db, "pc", bson.D{{Key: "b", Value: 1}})
	if !run(shapeA) {
		t.Error("plan cached before an index build reused after it")
	}
	err := db.RunCommand(ctx, bson.D{{Key: "planCacheClear", Value: "pc"}, {Key: "sort", Value: bson.D{{Key: "a", Value: 1}}}}).Err()
	wantCode(t, err, 2, "BadValue")
	err = db.RunCommand(ctx, bson.D{{Key: "planCacheClear", Value: "pc"}, {Key: "query", Value: 1}}).Err()
	wantCode(t, err, 2, "BadValue")
	err = db.RunCommand(ctx, bson.D{{Key: "planCacheClear", Value: "pc"}, {Key: "query", Value: bson.D{{Key: "$bad", Value: 1}}}}).Err()
	wantCode(t, err, 2, "BadValue")
	if err := db.RunCommand(ctx, bson.D{{Key: "planCacheClear", Value: "nosuch"}}).Err(); err != nil {
		t.Errorf("planCacheClear of a missing collection: %v", err)
	}
}
