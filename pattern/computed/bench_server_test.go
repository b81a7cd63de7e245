package computed

import (
	"context"
	"fmt"
	"testing"

	"github.com/formworkdb/formwork/internal/testenv"
)

// BenchmarkRecomputeAll recomputes every parent's totals (1,000 parents
// with 10 children each): on the server ($group + $merge per batch of
// 1,000 parents), against the client-side forms: Backfill ($group rows
// to the client, one update per parent) and a Recompute per parent
// (compare-and-set, four round trips each).
func BenchmarkRecomputeAll(b *testing.B) {
	const parents, children = 1000, 10
	for _, form := range []string{"server", "backfill", "perParent"} {
		b.Run("form="+form, func(b *testing.B) {
			ctx := context.Background()
			db, count := testenv.Monitored(b)
			ids := make([]string, parents)
			for i := range ids {
				ids[i] = fmt.Sprintf("p%04d", i)
			}
			f := fixtureOn(b, db, allConfig(), ids...)
			docs := make([]any, 0, parents*children)
			for _, p := range ids {
				for j := range children {
					docs = append(docs, review{Product: p, Stars: j%5 + 1})
				}
			}
			if _, err := f.reviews.InsertMany(ctx, docs); err != nil {
				b.Fatal(err)
			}
			count.Reset()
			for b.Loop() {
				var err error
				switch form {
				case "server":
					_, err = f.r.RecomputeAll(ctx, RecomputeOptions{})
				case "backfill":
					_, err = f.r.Backfill(ctx)
				case "perParent":
					for _, p := range ids {
						if _, err = f.r.Recompute(ctx, p); err != nil {
							break
						}
					}
				}
				if err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(count.Commands())/float64(b.N), "roundtrips/op")
			b.ReportMetric(float64(count.Docs())/float64(b.N), "docs-to-client/op")
		})
	}
}

// BenchmarkVerifyAll compares the client-side Verify with the server-side
// VerifyAll on the same 1,000 parents.
func BenchmarkVerifyAll(b *testing.B) {
	const parents, children = 1000, 10
	for _, form := range []string{"server", "client"} {
		b.Run("form="+form, func(b *testing.B) {
			ctx := context.Background()
			db, count := testenv.Monitored(b)
			ids := make([]string, parents)
			for i := range ids {
				ids[i] = fmt.Sprintf("p%04d", i)
			}
			f := fixtureOn(b, db, allConfig(), ids...)
			docs := make([]any, 0, parents*children)
			for _, p := range ids {
				for j := range children {
					docs = append(docs, review{Product: p, Stars: j%5 + 1})
				}
			}
			if _, err := f.reviews.InsertMany(ctx, docs); err != nil {
				b.Fatal(err)
			}
			if _, err := f.r.Backfill(ctx); err != nil {
				b.Fatal(err)
			}
			count.Reset()
			for b.Loop() {
				var rep Report
				var err error
				if form == "server" {
					rep, err = f.r.VerifyAll(ctx)
				} else {
					rep, err = f.r.Verify(ctx)
				}
				if err != nil || len(rep.Drifted) != 0 {
					b.Fatalf("%+v, %v", rep, err)
				}
			}
			b.ReportMetric(float64(count.Commands())/float64(b.N), "roundtrips/op")
			b.ReportMetric(float64(count.Docs())/float64(b.N), "docs-to-client/op")
		})
	}
}
