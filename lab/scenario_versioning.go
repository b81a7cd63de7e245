package lab

import (
	"fmt"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo"

	"github.com/formworkdb/formwork/pattern/versioning"
)

// versioningScenario: a CRM moves its contacts' phone numbers under
// contactInfo (version 2) and adds tags (version 3) while the application
// runs. Naive: one updateMany per old version, the whole collection in
// one write each, with no record of where a killed run stopped. Pattern:
// versioning.Migrate, guarded pipeline updates in batches in _id order,
// progress recorded in formwork_jobs after each; the price is many more
// round trips for the same documents written.
var versioningScenario = scenario{
	pattern: "versioning",
	title:   "contacts: a schema change migrated while the application runs",
	steps:   4,
	run:     runVersioning,
}

// vContact is the newest contact shape.
type vContact struct {
	ID          int               `bson:"_id"`
	Name        string            `bson:"name"`
	ContactInfo map[string]string `bson:"contactInfo"`
	Tags        []string          `bson:"tags"`
}

// runVersioning generates the scenario's data, loads it in both forms
// and measures the migration.
func runVersioning(e *env) ([]Metric, []Latency, error) {
	ctx, g := e.ctx, e.gen
	n := e.n(5000, 100)
	docs := make([]any, n)
	for i := range n {
		phone := func() string { return fmt.Sprintf("%03d-555-%04d", 200+g.intn(700), g.intn(10000)) }
		switch {
		case g.intn(10) < 7: // version 1, from before versioning: no field
			docs[i] = bson.D{{Key: "_id", Value: i}, {Key: "name", Value: g.name()}, {Key: "home", Value: phone()}, {Key: "work", Value: phone()}}
		default:
			docs[i] = bson.D{{Key: "_id", Value: i}, {Key: "schemaVersion", Value: 2}, {Key: "name", Value: g.name()},
				{Key: "contactInfo", Value: bson.D{{Key: "work", Value: phone()}, {Key: "cell", Value: phone()}}}}
		}
	}
	naive, pat := e.coll("naive_contacts"), e.coll("contacts")
	for _, c := range []*mongo.Collection{naive, pat} {
		if _, err := c.InsertMany(ctx, docs); err != nil {
			return nil, nil, err
		}
	}
	spec := versioning.Spec{Steps: []versioning.Step{
		{Rename: map[string]string{"home": "contactInfo.home", "work": "contactInfo.work"}},
		{Set: map[string]any{"tags": bson.A{}}},
	}}
	batch := max(10, n/20)
	cfg, err := spec.Config(versioning.Config{Batch: batch})
	if err != nil {
		return nil, nil, err
	}
	ns, err := versioning.New[vContact](naive, cfg)
	if err != nil {
		return nil, nil, err
	}
	s, err := versioning.New[vContact](pat, cfg)
	if err != nil {
		return nil, nil, err
	}
	e.step()

	// The naive migration: the same pipelines, one updateMany per old
	// version over the whole collection.
	var naiveLargest int64
	naiveRun, err := e.run(1, false, func(int) error {
		for from := 1; from < ns.Latest(); from++ {
			var p []bson.D
			for _, v := range cfg.Versions[from:] {
				p = append(p, v.Pipeline...)
				p = append(p, bson.D{{Key: "$set", Value: bson.D{{Key: "schemaVersion", Value: v.Number}}}})
			}
			res, err := naive.UpdateMany(ctx, ns.AtVersion(from), p)
			if err != nil {
				return err
			}
			naiveLargest = max(naiveLargest, res.ModifiedCount)
		}
		return nil
	})
	if err != nil {
		return nil, nil, err
	}
	var patLargest, last int64
	var final versioning.Progress
	patRun, err := e.run(1, false, func(int) error {
		var err error
		final, err = s.Migrate(ctx, versioning.MigrateOptions{OnBatch: func(p versioning.Progress) {
			patLargest = max(patLargest, p.Done-last)
			last = p.Done
		}})
		return err
	})
	if err != nil {
		return nil, nil, err
	}
	if !final.Finished {
		return nil, nil, fmt.Errorf("versioning: migration unfinished: %s", final)
	}
	e.step()

	for _, c := range []*versioning.Store[vContact]{ns, s} {
		r, err := c.Report(ctx)
		if err != nil {
			return nil, nil, err
		}
		if !r.Finished() {
			return nil, nil, fmt.Errorf("versioning: %s not migrated: %s", c.Collection().Name(), r)
		}
	}
	reads := e.n(200, 10)
	ids := make([]int, reads+warmup)
	for i := range ids {
		ids[i] = g.intn(n)
	}
	naiveGet, err := e.read(reads, func(i int) error { _, err := ns.Get(ctx, ids[i]); return err })
	if err != nil {
		return nil, nil, err
	}
	patGet, err := e.read(reads, func(i int) error { _, err := s.Get(ctx, ids[i]); return err })
	if err != nil {
		return nil, nil, err
	}
	e.step()

	nStore, err := e.storageOf("naive_contacts")
	if err != nil {
		return nil, nil, err
	}
	pStore, err := e.storageOf("contacts", versioning.DefaultJobs)
	if err != nil {
		return nil, nil, err
	}
	e.step()

	ms := writeMetrics("migrate every contact", naiveRun, patRun)
	ms = append(ms, Metric{Name: "migrate: most documents in one write", Kind: KindWrite, Unit: "docs", Better: Lower,
		Naive: float64(naiveLargest), Pattern: float64(patLargest)})
	ms = append(ms, readMetrics("read a contact after the migration", naiveGet, patGet)...)
	ms = append(ms, storageMetrics(nStore, pStore)...)
	return ms, []Latency{latency("migrate every contact", naiveRun, patRun)}, nil
}
