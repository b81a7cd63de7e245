package versioning

import (
	"context"
	"testing"
)

// benchDocs is the collection size the migration benchmarks upgrade.
const benchDocs = 3000

// BenchmarkMigrate upgrades 3000 contacts (a third each with no version,
// version 1, version 2) to version 3: the naive form, one updateMany per
// old version (fastest, but neither resumable nor throttled, and one long
// write a kill leaves half done with no record of where); Migrate with
// pipelines (batches of 500 in _id order, progress recorded after each);
// and Migrate with Go upgrades (a read and a guarded replace per
// document). It reports documents upgraded per second.
func BenchmarkMigrate(b *testing.B) {
	ctx := context.Background()
	run := func(b *testing.B, pipelines bool, migrate func(s *Store[Contact]) error) {
		vs := counted(pipelines)
		var total float64
		for b.Loop() {
			b.StopTimer()
			s, coll := contacts(b, Config{Versions: vs})
			seed(b, coll, benchDocs)
			b.StartTimer()
			if err := migrate(s); err != nil {
				b.Fatal(err)
			}
			total += benchDocs
			b.StopTimer()
			if n, _ := coll.CountDocuments(ctx, s.Outdated()); n != 0 {
				b.Fatalf("%d left", n)
			}
			b.StartTimer()
		}
		b.ReportMetric(total/b.Elapsed().Seconds(), "docs/s")
	}
	b.Run("naive=updateMany", func(b *testing.B) {
		run(b, true, func(s *Store[Contact]) error {
			for from := 1; from < 3; from++ {
				p, _ := s.pipeline(from)
				if _, err := s.coll.UpdateMany(ctx, s.AtVersion(from), p); err != nil {
					return err
				}
			}
			return nil
		})
	})
	b.Run("pattern=Migrate/pipeline", func(b *testing.B) {
		run(b, true, func(s *Store[Contact]) error { _, err := s.Migrate(ctx, MigrateOptions{}); return err })
	})
	b.Run("pattern=Migrate/up", func(b *testing.B) {
		run(b, false, func(s *Store[Contact]) error { _, err := s.Migrate(ctx, MigrateOptions{}); return err })
	})
}

// BenchmarkGet reads one contact stored at version 1 (upgraded in memory
// on every read, the cost of leaving a migration unfinished) and one at
// version 3 (decoded directly).
func BenchmarkGet(b *testing.B) {
	ctx := context.Background()
	for _, c := range []struct {
		name string
		id   int
	}{{"stored=v1", 1}, {"stored=v3", 2}} {
		b.Run(c.name, func(b *testing.B) {
			s, coll := contacts(b, Config{})
			seed(b, coll, 3)
			if c.id == 2 {
				if _, err := s.Upgrade(ctx, 2); err != nil {
					b.Fatal(err)
				}
			}
			for b.Loop() {
				if _, err := s.Get(ctx, c.id); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
