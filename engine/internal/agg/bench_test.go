package agg

import (
	"context"
	"testing"

	"go.mongodb.org/mongo-driver/v2/bson"
)

// benchDocs are 100k documents {_id, k: i%100, v: i}.
func benchDocs() []bson.Raw {
	docs := make([]bson.Raw, 100000)
	for i := range docs {
		docs[i], _ = bson.Marshal(bson.D{{Key: "_id", Value: i}, {Key: "k", Value: i % 100}, {Key: "v", Value: i}})
	}
	return docs
}

// BenchmarkGroup measures $group by 100 keys with $sum over 100k
// documents; BenchmarkGroup/op=iterate only pulls the same documents
// through a Source, the baseline the ratio is taken against.
func BenchmarkGroup(b *testing.B) {
	docs := benchDocs()
	ctx := context.Background()
	b.Run("op=iterate", func(b *testing.B) {
		for i := 0; i < b.N; i++ {
			src := NewSliceSource(docs)
			n := 0
			for {
				d, _ := src.Next(ctx)
				if d == nil {
					break
				}
				if _, err := d.LookupErr("k"); err == nil {
					n++
				}
			}
			if n != len(docs) {
				b.Fatal(n)
			}
		}
	})
	b.Run("op=group/keys=100", func(b *testing.B) {
		p, err := Parse(stagesOf(b, `[{"$group": {"_id": "$k", "total": {"$sum": "$v"}}}]`), Options{DB: "test", Coll: "c", AllowDiskUse: true})
		if err != nil {
			b.Fatal(err)
		}
		for i := 0; i < b.N; i++ {
			src, err := p.Run(ctx, nil, NewSliceSource(docs))
			if err != nil {
				b.Fatal(err)
			}
			out, err := drain(ctx, src)
			if err != nil || len(out) != 100 {
				b.Fatal(len(out), err)
			}
		}
	})
}
