package versioning

import (
	"context"
	"math/rand/v2"
	"testing"
	"time"

	"go.mongodb.org/mongo-driver/v2/bson"
)

// TestMigrateKilledAtRandom kills Migrate at random points (its context
// cancelled after a random batch count or a random delay, so also between
// a batch's upgrade and its progress record, and inside a batch), reruns
// it until it finishes, and checks that every document was upgraded
// exactly once per step (counted by the upgrade itself), none was lost,
// and the job's record agrees, for server-side pipelines and for Go
// upgrades.
func TestMigrateKilledAtRandom(t *testing.T) {
	for _, pipelines := range []bool{true, false} {
		name := "up"
		if pipelines {
			name = "pipeline"
		}
		t.Run(name, func(t *testing.T) {
			const n = 600
			rng := rand.New(rand.NewPCG(7, uint64(len(name))))
			s, coll := contacts(t, Config{Versions: counted(pipelines), Batch: 25})
			seed(t, coll, n)
			var last Progress
			kills, runs := 0, 0
			for ; runs < 300; runs++ {
				ctx, cancel := context.WithCancel(context.Background())
				stopAt := rng.IntN(6)
				var timer *time.Timer
				if rng.IntN(2) == 0 {
					timer = time.AfterFunc(time.Duration(rng.IntN(3000))*time.Microsecond, cancel)
				}
				batches := 0
				p, err := s.Migrate(ctx, MigrateOptions{OnBatch: func(Progress) {
					batches++
					if batches > stopAt {
						cancel()
					}
				}})
				if timer != nil {
					timer.Stop()
				}
				cancel()
				if err == nil && p.Finished {
					last = p
					break
				}
				if err == nil {
					t.Fatalf("run %d ended unfinished without error: %+v", runs, p)
				}
				kills++
			}
			if !last.Finished {
				t.Fatalf("not finished after %d runs", runs)
			}
			t.Logf("%d kills, final %s", kills, last)
			if kills < 5 {
				t.Errorf("only %d kills", kills)
			}
			ctx := context.Background()
			if c, _ := coll.CountDocuments(ctx, bson.D{}); c != n {
				t.Fatalf("%d documents, want %d", c, n)
			}
			cur, err := coll.Find(ctx, bson.D{})
			if err != nil {
				t.Fatal(err)
			}
			for cur.Next(ctx) {
				d := cur.Current
				id := d.Lookup("_id").AsInt64()
				if v := d.Lookup("schemaVersion").AsInt64(); v != 3 {
					t.Fatalf("%d at version %d", id, v)
				}
				want2 := int64(1)
				if id%3 == 2 { // stored at version 2
					want2 = 0
				}
				if got, _ := d.Lookup("upgrades", "v2").AsInt64OK(); got != want2 {
					t.Errorf("%d upgraded to 2 %d times", id, got)
				}
				if got, _ := d.Lookup("upgrades", "v3").AsInt64OK(); got != 1 {
					t.Errorf("%d upgraded to 3 %d times", id, got)
				}
			}
			cur.Close(ctx)
			// The run that finished the job may have been cancelled after
			// its last write reached the server: its caller saw only the
			// cancellation, and the next run found nothing outdated, a job
			// of its own (0 of 0). The job record below holds the totals.
			fresh := last.Total == 0 && last.Done == 0 && !last.Resumed
			if !fresh && (last.Total != n || last.Done != n) || last.Failed != 0 {
				t.Errorf("progress %+v", last)
			}
			var j job
			if err := s.jobs().FindOne(ctx, bson.D{{Key: "_id", Value: s.JobID()}}).Decode(&j); err != nil {
				t.Fatal(err)
			}
			if j.FinishedAt == nil || j.Done != n || j.Total != n {
				t.Errorf("job %+v", j)
			}
			again, err := s.Migrate(ctx, MigrateOptions{})
			if err != nil || !again.Finished || again.Resumed {
				t.Errorf("rerun after the end: %+v %v", again, err)
			}
		})
	}
}

// TestMigrateSecondPass checks that documents written at an old version
// behind the scan (by code not yet upgraded) are upgraded by the second
// pass, that a failing Up is counted and left, and that a dry run writes
// nothing.
func TestMigrateSecondPass(t *testing.T) {
	ctx := context.Background()
	vs := counted(false)
	up := vs[2].Up
	vs[2].Up = func(d bson.D) (bson.D, error) {
		if get(d, "name") == "poison" {
			return nil, errPoison
		}
		return up(d)
	}
	s, coll := contacts(t, Config{Versions: vs, Batch: 10})
	seed(t, coll, 60)
	if _, err := coll.InsertOne(ctx, bson.D{{Key: "_id", Value: 1000}, {Key: "name", Value: "poison"}}); err != nil {
		t.Fatal(err)
	}
	dry, err := s.Migrate(ctx, MigrateOptions{DryRun: true})
	if err != nil || dry.Total != 61 || dry.Done != 0 || !dry.DryRun {
		t.Fatalf("dry run %+v %v", dry, err)
	}
	if n, _ := coll.CountDocuments(ctx, s.Outdated()); n != 61 {
		t.Fatalf("dry run wrote: %d outdated", n)
	}
	injected := false
	p, err := s.Migrate(ctx, MigrateOptions{OnBatch: func(p Progress) {
		if p.Batches == 3 && !injected {
			injected = true
			if _, err := coll.InsertOne(ctx, bson.D{{Key: "_id", Value: 5}, {Key: "name", Value: "late"}}); err == nil {
				t.Error("duplicate _id accepted")
			}
			if _, err := coll.InsertOne(ctx, bson.D{{Key: "_id", Value: -1}, {Key: "name", Value: "late"}, {Key: "work", Value: "x"}}); err != nil {
				t.Error(err)
			}
		}
	}})
	if err != nil {
		t.Fatal(err)
	}
	if !p.Finished || p.Failed != 1 || p.Done != 61 || p.Total != 62 {
		t.Errorf("progress %+v", p)
	}
	if got := stored(t, coll, -1).Lookup("schemaVersion").AsInt64(); got != 3 {
		t.Errorf("late document at %d", got)
	}
	if got := stored(t, coll, 1000).Lookup("schemaVersion"); got.Type != 0 {
		t.Errorf("poison rewritten: %v", got)
	}
	if p.String() != "61 of 62 at version 3, 1 failed, finished" {
		t.Errorf("%q", p.String())
	}
}

// errPoison is the failure of the poisoned document's upgrade.
var errPoison = errorString("poisoned")

// errorString is a constant error.
type errorString string

func (e errorString) Error() string { return string(e) }

// TestMigrateThrottle checks that Throttle pauses between batches and
// that a cancel during the pause stops the run, which a rerun resumes.
func TestMigrateThrottle(t *testing.T) {
	ctx := context.Background()
	s, coll := contacts(t, Config{Batch: 10, Throttle: 20 * time.Millisecond})
	seed(t, coll, 50)
	start := time.Now()
	p, err := s.Migrate(ctx, MigrateOptions{})
	if err != nil || !p.Finished || p.Batches != 5 {
		t.Fatalf("%+v %v", p, err)
	}
	if d := time.Since(start); d < 100*time.Millisecond {
		t.Errorf("5 throttled batches took %v", d)
	}
	s2, coll2 := contacts(t, Config{Batch: 10, Throttle: time.Hour})
	seed(t, coll2, 50)
	cctx, cancel := context.WithTimeout(ctx, 200*time.Millisecond)
	defer cancel()
	p, err = s2.Migrate(cctx, MigrateOptions{})
	if err == nil || p.Batches != 1 || p.Done != 10 {
		t.Fatalf("cancelled in the pause: %+v %v", p, err)
	}
	s3, err := New[Contact](coll2, Config{Versions: s2.cfg.Versions, Batch: 10})
	if err != nil {
		t.Fatal(err)
	}
	p, err = s3.Migrate(ctx, MigrateOptions{})
	if err != nil || !p.Resumed || !p.Finished || p.Done != 50 || p.Batches != 5 {
		t.Errorf("resumed: %+v %v", p, err)
	}
}
