package lab

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"net/url"
	"slices"
	"strings"
	"time"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo"
	"go.mongodb.org/mongo-driver/v2/mongo/options"

	"github.com/formworkdb/formwork/engine"
)

// DefaultScale is the scale of the default run: every scenario's counts
// are given for it and grow or shrink in proportion.
const DefaultScale = 100

// DefaultSeed seeds the default run's data.
const DefaultSeed = 1

// ErrNotEmpty is wrapped by Run when the scratch database already holds
// collections; the lab then writes and drops nothing.
var ErrNotEmpty = errors.New("database is not empty")

// ErrUnknownPattern is wrapped by Run for a pattern without a scenario.
var ErrUnknownPattern = errors.New("no scenario for pattern")

// Options configure Run.
type Options struct {
	// Patterns selects scenarios by package name; empty runs them all,
	// in the order of Patterns().
	Patterns []string
	// Scale sizes the data; DefaultScale (100) when zero. 10 is a tenth
	// of the default data, 1000 ten times it.
	Scale int
	// Seed seeds the generator; the same seed makes the same data.
	Seed int64
	// URI names a deployment; empty opens an in-memory embedded engine.
	URI string
	// Database names the scratch database; empty means
	// formwork_lab_<random>. Run refuses one that holds collections.
	Database string
	// Progress receives progress; nil reports none.
	Progress Progress
}

// Progress follows a run: Begin announces a pattern with its number of
// steps and returns the function that advances it one step and the one
// that ends it. Implementations must be safe to call from the goroutine
// running Run.
type Progress interface {
	Begin(pattern string, steps int) (step func(), done func(err error))
}

// Patterns returns the package names of the patterns that have a
// scenario, in run order.
func Patterns() []string {
	out := make([]string, len(scenarios))
	for i, s := range scenarios {
		out[i] = s.pattern
	}
	return out
}

// Run generates each selected scenario's data, measures both forms and
// returns the report. It connects to o.URI, or opens an in-memory engine
// and connects to it through the driver; either way the same code runs
// against a scratch database, dropped before Run returns.
func Run(ctx context.Context, o Options) (Report, error) {
	sel, err := selectScenarios(o.Patterns)
	if err != nil {
		return Report{}, err
	}
	if o.Scale == 0 {
		o.Scale = DefaultScale
	}
	if o.Scale < 1 {
		return Report{}, fmt.Errorf("lab: scale %d must be positive", o.Scale)
	}
	mon := &monitor{}
	client, target, closeAll, err := connect(ctx, o.URI, mon)
	if err != nil {
		return Report{}, fmt.Errorf("lab: connect: %w", err)
	}
	defer closeAll()
	return runOn(ctx, client, target, mon, sel, o)
}

// connect returns a client for uri, or for a new in-memory engine, with
// the monitor attached, a description of the target, and the function
// that disconnects (and closes the engine).
func connect(ctx context.Context, uri string, mon *monitor) (*mongo.Client, string, func(), error) {
	opts := options.Client().SetMonitor(mon.commandMonitor()).SetServerSelectionTimeout(15 * time.Second)
	if uri != "" {
		client, err := mongo.Connect(opts.ApplyURI(uri))
		if err != nil {
			return nil, "", nil, err
		}
		return client, redact(uri), func() { client.Disconnect(context.Background()) }, nil
	}
	db, err := engine.Open(ctx, engine.Options{})
	if err != nil {
		return nil, "", nil, err
	}
	client, err := mongo.Connect(opts.ApplyURI("mongodb://localhost:27017").SetDialer(db.Dialer()))
	if err != nil {
		db.Close()
		return nil, "", nil, err
	}
	return client, "embedded engine (in memory)", func() {
		client.Disconnect(context.Background())
		db.Close()
	}, nil
}

// redact removes the credentials from a connection string.
func redact(uri string) string {
	u, err := url.Parse(uri)
	if err != nil {
		return "(unparsable URI)"
	}
	if u.User != nil {
		u.User = url.User("…")
	}
	return u.String()
}

// selectScenarios returns the scenarios named, in run order.
func selectScenarios(names []string) ([]scenario, error) {
	if len(names) == 0 {
		return scenarios, nil
	}
	for _, n := range names {
		if !slices.Contains(Patterns(), n) {
			return nil, fmt.Errorf("lab: %w %q (have %s)", ErrUnknownPattern, n, strings.Join(Patterns(), ", "))
		}
	}
	var out []scenario
	for _, s := range scenarios {
		if slices.Contains(names, s.pattern) {
			out = append(out, s)
		}
	}
	return out, nil
}

// runOn runs the scenarios on client: the path shared by the embedded
// engine and a deployment.
func runOn(ctx context.Context, client *mongo.Client, target string, mon *monitor, sel []scenario, o Options) (Report, error) {
	start := time.Now()
	srv, err := serverInfo(ctx, client)
	if err != nil {
		return Report{}, fmt.Errorf("lab: server: %w", err)
	}
	srv.Target = target
	name := o.Database
	if name == "" {
		b := make([]byte, 6)
		rand.Read(b)
		name = "formwork_lab_" + hex.EncodeToString(b)
	}
	srv.Database = name
	db := client.Database(name)
	colls, err := db.ListCollectionNames(ctx, bson.D{})
	if err != nil {
		return Report{}, fmt.Errorf("lab: %s: %w", name, err)
	}
	if len(colls) > 0 {
		return Report{}, fmt.Errorf("lab: %s holds %d collections (%s): %w; the lab only runs in an empty scratch database",
			name, len(colls), strings.Join(colls, ", "), ErrNotEmpty)
	}
	defer func() {
		dctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 30*time.Second)
		defer cancel()
		db.Drop(dctx)
	}()
	rep := Report{Version: SchemaVersion, Server: srv, Scale: o.Scale, Seed: o.Seed}
	for _, sc := range sel {
		r, err := runScenario(ctx, db, mon, sc, o)
		if err != nil {
			return rep, fmt.Errorf("lab: %s: %w", sc.pattern, err)
		}
		rep.Patterns = append(rep.Patterns, r)
	}
	rep.Seconds = time.Since(start).Seconds()
	return rep, nil
}

// runScenario runs one scenario in a clean database and builds its
// result.
func runScenario(ctx context.Context, db *mongo.Database, mon *monitor, sc scenario, o Options) (res PatternResult, err error) {
	step, done := func() {}, func(error) {}
	if o.Progress != nil {
		step, done = o.Progress.Begin(sc.pattern, sc.steps)
	}
	defer func() { done(err) }()
	e := &env{ctx: ctx, db: db, mon: mon, gen: newGen(o.Seed, sc.pattern), scale: o.Scale, step: step}
	defer func() {
		// Each scenario starts from an empty database; dropping it also
		// frees an in-memory engine's memory between scenarios.
		dctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 30*time.Second)
		defer cancel()
		if derr := db.Drop(dctx); derr != nil && err == nil {
			err = derr
		}
	}()
	ms, lats, err := sc.run(e)
	if err != nil {
		return PatternResult{}, err
	}
	res = PatternResult{Pattern: sc.pattern, Scenario: sc.title, Metrics: ms, Latencies: lats, Verdict: verdict(ms)}
	return res, Check(res)
}

// serverInfo reads the server's version (buildInfo) and topology (hello).
func serverInfo(ctx context.Context, client *mongo.Client) (Server, error) {
	admin := client.Database("admin")
	var bi struct {
		Version string `bson:"version"`
	}
	if err := admin.RunCommand(ctx, bson.D{{Key: "buildInfo", Value: 1}}).Decode(&bi); err != nil {
		return Server{}, err
	}
	var h struct {
		SetName string `bson:"setName"`
		Msg     string `bson:"msg"`
	}
	if err := admin.RunCommand(ctx, bson.D{{Key: "hello", Value: 1}}).Decode(&h); err != nil {
		return Server{}, err
	}
	topo := "standalone"
	switch {
	case h.Msg == "isdbgrid":
		topo = "sharded"
	case h.SetName != "":
		topo = "replica set " + h.SetName
	}
	return Server{Version: bi.Version, Topology: topo}, nil
}
