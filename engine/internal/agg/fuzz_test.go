package agg

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"go.mongodb.org/mongo-driver/v2/bson"

	"github.com/formworkdb/formwork/engine/internal/bsonkit"
	"github.com/formworkdb/formwork/internal/scripttest"
)

// fuzzDocs are the collection every fuzzed pipeline runs over.
var fuzzDocs = []string{
	`{"_id": 1, "a": 1, "b": "x", "c": [1, 2, {"d": 3}]}`,
	`{"_id": 2, "a": 2.5, "b": null, "c": []}`,
	`{"_id": 3, "a": {"$numberLong": "3"}, "c": {"d": [4, 5]}}`,
	`{"_id": {"k": 1}, "a": "s", "next": 1}`,
}

// scriptPipelines collects the pipelines of the agg directives of the
// scripts, as fuzz seeds.
func scriptPipelines(f *testing.F) [][]byte {
	files, _ := filepath.Glob("../../testdata/agg/*.txt")
	var out [][]byte
	for _, file := range files {
		data, err := os.ReadFile(file)
		if err != nil {
			f.Fatal(err)
		}
		lines := strings.Split(string(data), "\n")
		for i := 0; i < len(lines); i++ {
			if !strings.HasPrefix(lines[i], "agg") {
				continue
			}
			arr := bson.A{}
			for i++; i < len(lines) && lines[i] != "----"; i++ {
				d, err := scripttest.ParseDoc(lines[i])
				if err == nil {
					arr = append(arr, d)
				}
			}
			raw, err := bson.Marshal(bson.D{{Key: "p", Value: arr}})
			if err == nil {
				out = append(out, raw)
			}
		}
	}
	return out
}

// FuzzPipeline parses and runs arbitrary pipelines ({p: [stages]}) over
// arbitrary documents ({d: [docs]}) on the fake host: it must never
// panic or hang, and every failure must be a MongoDB error.
func FuzzPipeline(f *testing.F) {
	docsArr := bson.A{}
	for _, s := range fuzzDocs {
		docsArr = append(docsArr, docOf(f, s))
	}
	docs, _ := bson.Marshal(bson.D{{Key: "d", Value: docsArr}})
	for _, p := range scriptPipelines(f) {
		f.Add(p, docs)
	}
	f.Fuzz(func(t *testing.T, pipeline, docs []byte) {
		if len(pipeline) > 8192 || len(docs) > 8192 {
			return
		}
		if bsonkit.Validate(pipeline) != nil || bsonkit.Validate(docs) != nil {
			return
		}
		pv, ok := bson.Raw(pipeline).Lookup("p").ArrayOK()
		if !ok {
			return
		}
		var stages []bson.Raw
		vals, _ := pv.Values()
		for _, v := range vals {
			d, ok := v.DocumentOK()
			if !ok {
				return
			}
			stages = append(stages, d)
		}
		h := newFakeHost()
		dv, _ := bson.Raw(docs).Lookup("d").ArrayOK()
		dvals, _ := dv.Values()
		for i, v := range dvals {
			if d, ok := v.DocumentOK(); ok && i < 50 {
				h.colls["test.c"] = append(h.colls["test.c"], d)
				h.colls["test.o"] = append(h.colls["test.o"], d)
			}
		}
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		opts := Options{DB: "test", Coll: "c", AllowDiskUse: true, TempDir: t.TempDir(),
			Limits: Limits{Sort: 1 << 20, Group: 1 << 20, BucketAuto: 1 << 20, GraphLookup: 1 << 20, SetWindowFields: 1 << 20,
				// A low internalQueryMaxAllowedDensifyDocs keeps huge
				// $densify ranges quick: they stop at the cap (5897900).
				DensifyDocs: 2000}}
		start := time.Now()
		out, err := runAggregate(ctx, h, stages, opts)
		if time.Since(start) > 4*time.Second {
			t.Fatalf("pipeline ran %v", time.Since(start))
		}
		if err != nil {
			checkMongoErr(t, err)
			return
		}
		for _, d := range out {
			if bsonkit.Validate(d) != nil {
				t.Fatalf("invalid output document %x", []byte(d))
			}
		}
	})
}
