package agg

import (
	"context"
	"fmt"
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
	p, err := Parse(raws, opts)
	if err != nil {
		return nil, err
	}
	src, err := p.Run(context.Background(), newFakeHost(), NewSliceSource(docs))
	if err != nil {
		return nil, err
	}
	return drain(context.Background(), src)
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
