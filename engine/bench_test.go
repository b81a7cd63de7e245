package engine_test

import (
	"context"
	"net"
	"testing"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo"
	"go.mongodb.org/mongo-driver/v2/mongo/options"

	"github.com/formworkdb/formwork/engine"
	"github.com/formworkdb/formwork/internal/testenv"
)

// benchClient returns a client over the named transport: "pipe" for the
// in-process dialer, "tcp" for a loopback listener.
func benchClient(b *testing.B, transport string, opts engine.Options) *mongo.Client {
	b.Helper()
	ctx := context.Background()
	if transport == "pipe" {
		_, client := testenv.Engine(b, opts)
		return client
	}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		b.Fatal(err)
	}
	opts.Host = l.Addr().String()
	db, err := engine.Open(ctx, opts)
	if err != nil {
		b.Fatal(err)
	}
	go db.Serve(l)
	client, err := mongo.Connect(options.Client().ApplyURI("mongodb://" + l.Addr().String()))
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { client.Disconnect(ctx); db.Close() })
	return client
}

// BenchmarkInsertOne measures single-document inserts, each its own
// acknowledged write, in memory and on disk (synced per write).
func BenchmarkInsertOne(b *testing.B) {
	for _, transport := range []string{"pipe", "tcp"} {
		for _, storage := range []string{"mem", "disk"} {
			b.Run("transport="+transport+"/storage="+storage, func(b *testing.B) {
				opts := engine.Options{}
				if storage == "disk" {
					opts.Dir = b.TempDir()
				}
				c := benchClient(b, transport, opts).Database("bench").Collection("c")
				ctx := context.Background()
				b.ReportAllocs()
				b.ResetTimer()
				for i := 0; i < b.N; i++ {
					if _, err := c.InsertOne(ctx, bson.D{{Key: "_id", Value: i}, {Key: "name", Value: "user"}, {Key: "n", Value: i}}); err != nil {
						b.Fatal(err)
					}
				}
				b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "inserts/s")
			})
		}
	}
}

// BenchmarkFindByID measures point lookups by _id on 10,000 documents.
func BenchmarkFindByID(b *testing.B) {
	for _, transport := range []string{"pipe", "tcp"} {
		b.Run("transport="+transport, func(b *testing.B) {
			c := benchClient(b, transport, engine.Options{}).Database("bench").Collection("c")
			ctx := context.Background()
			const n = 10000
			docs := make([]any, n)
			for i := range docs {
				docs[i] = bson.D{{Key: "_id", Value: i}, {Key: "name", Value: "user"}, {Key: "n", Value: i}}
			}
			if _, err := c.InsertMany(ctx, docs); err != nil {
				b.Fatal(err)
			}
			b.ReportAllocs()
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				var out bson.Raw
				if err := c.FindOne(ctx, bson.D{{Key: "_id", Value: i % n}}).Decode(&out); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "finds/s")
		})
	}
}
