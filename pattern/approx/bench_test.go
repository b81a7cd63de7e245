package approx

import (
	"context"
	"math/rand/v2"
	"testing"

	"github.com/formworkdb/formwork/internal/testenv"
)

// BenchmarkEvents counts 1000 page views per iteration, over 10 pages:
// naive writes every event ($inc 1), the approximations write every
// 100th (deterministic) or each with probability 1/100 (probabilistic).
// writes/1000events counts the write commands the server received.
func BenchmarkEvents(b *testing.B) {
	for _, bc := range []struct {
		name string
		cfg  Config
	}{
		{"form=naive", Config{Field: "views", N: 1}},
		{"form=deterministic/N=100", Config{Field: "views", N: 100}},
		{"form=probabilistic/N=100", Config{Field: "views", N: 100, Mode: Probabilistic, Rand: rand.New(rand.NewPCG(1, 2))}},
	} {
		b.Run(bc.name, func(b *testing.B) {
			ctx := context.Background()
			db, count := testenv.Monitored(b)
			c, err := New(db.Collection("pageViews"), bc.cfg)
			if err != nil {
				b.Fatal(err)
			}
			pages := []string{"/", "/a", "/b", "/c", "/d", "/e", "/f", "/g", "/h", "/i"}
			count.Reset()
			for b.Loop() {
				for i := range 1000 {
					if err := c.Incr(ctx, pages[i%len(pages)]); err != nil {
						b.Fatal(err)
					}
				}
			}
			b.ReportMetric(float64(count.Commands("update"))/float64(b.N), "writes/1000events")
		})
	}
}
