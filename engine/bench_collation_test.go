package engine_test

import (
	"context"
	"fmt"
	"math"
	"testing"
	"time"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo"
	"go.mongodb.org/mongo-driver/v2/mongo/options"

	"github.com/formworkdb/formwork/internal/explaintest"
	"github.com/formworkdb/formwork/internal/testenv"
)

// loadEmails inserts n users with distinct mixed-case e-mail addresses
// into c and indexes them, under the strength 2 collation when ci.
func loadEmails(tb testing.TB, c *mongo.Collection, n int, ci bool) {
	tb.Helper()
	ctx := context.Background()
	opts := options.Index()
	if ci {
		opts.SetCollation(&options.Collation{Locale: "en", Strength: 2})
	}
	if _, err := c.Indexes().CreateOne(ctx, mongo.IndexModel{Keys: bson.D{{Key: "email", Value: 1}}, Options: opts}); err != nil {
		tb.Fatal(err)
	}
	docs := make([]any, 0, 1000)
	for i := range n {
		docs = append(docs, bson.D{{Key: "_id", Value: int32(i)}, {Key: "email", Value: fmt.Sprintf("User%05d@Example.com", i)}})
		if len(docs) == cap(docs) || i == n-1 {
			if _, err := c.InsertMany(ctx, docs); err != nil {
				tb.Fatal(err)
			}
			docs = docs[:0]
		}
	}
}

// TestCollationIndexKeysExamined is the performance criterion: a
// strength 2 index serves case-insensitive equality with the same keys
// examined (one) as a simple index serves exact equality.
func TestCollationIndexKeysExamined(t *testing.T) {
	db := testenv.Database(t)
	loadEmails(t, db.Collection("simple"), 1000, false)
	loadEmails(t, db.Collection("ci"), 1000, true)
	exact := explaintest.Run(t, db, bson.D{{Key: "find", Value: "simple"}, {Key: "filter", Value: bson.D{{Key: "email", Value: "User00500@Example.com"}}}})
	ci := explaintest.Run(t, db, bson.D{{Key: "find", Value: "ci"}, {Key: "filter", Value: bson.D{{Key: "email", Value: "uSER00500@eXAMPLE.COM"}}}, {Key: "collation", Value: caseInsensitive}})
	if !exact.Uses("email_1") || !ci.Uses("email_1") {
		t.Fatalf("plans: exact %s, case-insensitive %s", exact, ci)
	}
	if exact.KeysExamined() != 1 || ci.KeysExamined() != exact.KeysExamined() || ci.NReturned() != 1 || ci.DocsExamined() != 1 {
		t.Fatalf("keys examined: exact %d, case-insensitive %d (nReturned %d, docs %d)", exact.KeysExamined(), ci.KeysExamined(), ci.NReturned(), ci.DocsExamined())
	}
}

// BenchmarkCollationEquality times one find by e-mail address among 100k
// users: exact equality through a simple index, and case-insensitive
// equality (another case than stored) through a strength 2 index, in the
// same iteration. It reports each (the fastest iteration's) and their
// ratio ("ci/exact").
func BenchmarkCollationEquality(b *testing.B) {
	const n = 100000
	client := perfEngine(b, false)
	db := client.Database("bench")
	loadEmails(b, db.Collection("simple"), n, false)
	loadEmails(b, db.Collection("ci"), n, true)
	settle(b)
	ctx := context.Background()
	ciOpts := options.FindOne().SetCollation(&options.Collation{Locale: "en", Strength: 2})
	exact, ci := time.Duration(math.MaxInt64), time.Duration(math.MaxInt64)
	i := 0
	for b.Loop() {
		id := (i * 7919) % n
		i++
		t0 := time.Now()
		var got bson.Raw
		if err := db.Collection("simple").FindOne(ctx, bson.D{{Key: "email", Value: fmt.Sprintf("User%05d@Example.com", id)}}).Decode(&got); err != nil {
			b.Fatal(err)
		}
		t1 := time.Now()
		if err := db.Collection("ci").FindOne(ctx, bson.D{{Key: "email", Value: fmt.Sprintf("uSER%05d@EXAMPLE.com", id)}}, ciOpts).Decode(&got); err != nil {
			b.Fatal(err)
		}
		exact = min(exact, t1.Sub(t0))
		ci = min(ci, time.Since(t1))
	}
	b.ReportMetric(float64(exact.Nanoseconds()), "exact-ns")
	b.ReportMetric(float64(ci.Nanoseconds()), "ci-ns")
	b.ReportMetric(float64(ci)/float64(exact), "ci/exact")
}
