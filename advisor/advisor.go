package advisor

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"time"

	"go.mongodb.org/mongo-driver/v2/mongo"
)

// Comment is sent with every command of the advisor, so that its own
// operations are left out when it reads system.profile.
const Comment = "formwork advise"

// Defaults of Options.
const (
	DefaultSample         = 1000
	DefaultBudget         = 60 * time.Second
	DefaultMaxTime        = 5 * time.Second
	DefaultMaxProfile     = 10000
	DefaultMaxExplain     = 20
	DefaultMaxCollections = 200
)

// ProfileSource is the value of Options.ProfileFrom that reads each
// database's system.profile.
const ProfileSource = "system.profile"

// Options configure Run.
type Options struct {
	// Databases to inspect; empty means every database except admin,
	// local and config.
	Databases []string
	// ProfileFrom is ProfileSource (the default when Workload is nil) or
	// a name for Workload's content, used in the report.
	ProfileFrom string
	// Workload, when not nil, holds JSON lines (mongod logv2 slow-query
	// lines or system.profile documents) read instead of system.profile.
	Workload []byte
	// Sample is the $sample size per collection: DefaultSample when zero.
	Sample int
	// Budget bounds the whole run: DefaultBudget when zero. Collection
	// stops at the budget and reports what it had.
	Budget time.Duration
	// MaxTime is the maxTimeMS of each command: DefaultMaxTime when zero.
	MaxTime time.Duration
	// MaxProfile bounds the workload entries read: DefaultMaxProfile.
	MaxProfile int
	// MaxExplain bounds the shapes explained: DefaultMaxExplain.
	MaxExplain int
	// MaxCollections bounds the collections read per database.
	MaxCollections int
	// EnableProfiler sets each inspected database's profiler to level 1
	// (slow operations) before reading: the advisor's only write.
	EnableProfiler bool
	// Thresholds tune the checks; zero fields take the defaults.
	Thresholds Thresholds
	// Checks selects checks by id; empty runs them all.
	Checks []string
	// Target names the deployment in the report (credentials removed).
	Target string
	// Now is the clock; time.Now when nil.
	Now func() time.Time
}

// plan is Options parsed: every default applied, every choice checked.
type plan struct {
	o      Options
	t      Thresholds
	checks []Check
	// now is the snapshot's clock (Options.Now); start is the wall clock
	// the budget counts from.
	now, start time.Time
}

// parse validates o into a plan.
func parse(o Options) (*plan, error) {
	if o.Sample == 0 {
		o.Sample = DefaultSample
	}
	if o.Sample < 1 || o.Sample > 100000 {
		return nil, fmt.Errorf("advisor: sample %d: must be between 1 and 100000", o.Sample)
	}
	if o.Budget == 0 {
		o.Budget = DefaultBudget
	}
	if o.MaxTime == 0 {
		o.MaxTime = DefaultMaxTime
	}
	if o.Budget < 0 || o.MaxTime < 0 {
		return nil, errors.New("advisor: budget and max time must be positive")
	}
	if o.MaxProfile == 0 {
		o.MaxProfile = DefaultMaxProfile
	}
	if o.MaxExplain == 0 {
		o.MaxExplain = DefaultMaxExplain
	}
	if o.MaxCollections == 0 {
		o.MaxCollections = DefaultMaxCollections
	}
	if o.ProfileFrom == "" && o.Workload == nil {
		o.ProfileFrom = ProfileSource
	}
	checks, err := selectChecks(o.Checks)
	if err != nil {
		return nil, err
	}
	now := time.Now
	if o.Now != nil {
		now = o.Now
	}
	return &plan{o: o, t: o.Thresholds.withDefaults(), checks: checks, now: now(), start: time.Now()}, nil
}

// Report is the outcome of a run: the snapshot and the findings.
type Report struct {
	Snapshot *Snapshot `json:"-"`
	Findings []Finding `json:"findings"`
	// Thresholds are the thresholds the checks used.
	Thresholds Thresholds `json:"-"`
}

// Run collects a Snapshot of the deployment client is connected to and
// runs the checks on it. It only reads (I1) unless o.EnableProfiler.
// Errors reaching the server at all are returned; a collection or
// command that fails leaves a note in the Snapshot instead.
func Run(ctx context.Context, client *mongo.Client, o Options) (*Report, error) {
	p, err := parse(o)
	if err != nil {
		return nil, err
	}
	snap, err := collect(ctx, client, p)
	if err != nil {
		return nil, err
	}
	return p.analyse(snap), nil
}

// Analyse runs the checks of o on a Snapshot already collected.
func Analyse(snap *Snapshot, o Options) (*Report, error) {
	p, err := parse(o)
	if err != nil {
		return nil, err
	}
	return p.analyse(snap), nil
}

// analyse runs the plan's checks on snap and orders the findings by
// namespace, then severity (highest first), then id.
func (p *plan) analyse(snap *Snapshot) *Report {
	env := &checkEnv{snap: snap, t: p.t}
	var out []Finding
	for _, c := range p.checks {
		for _, f := range c.Run(env) {
			f.ID = c.ID
			if f.Pattern == "" {
				f.Pattern = c.Pattern
			}
			if f.Fix.Lab == "" {
				f.Fix.Lab = labLink(f.Pattern)
			}
			out = append(out, f)
		}
	}
	sort.SliceStable(out, func(i, j int) bool {
		a, b := out[i], out[j]
		if a.Namespace != b.Namespace {
			return a.Namespace < b.Namespace
		}
		if a.Severity != b.Severity {
			return a.Severity > b.Severity
		}
		if a.ID != b.ID {
			return a.ID < b.ID
		}
		return a.Subject < b.Subject
	})
	return &Report{Snapshot: snap, Findings: out, Thresholds: p.t}
}

// Worst returns the highest severity among the findings, 0 when none.
func (r *Report) Worst() Severity {
	var w Severity
	for _, f := range r.Findings {
		w = max(w, f.Severity)
	}
	return w
}

// AtLeast reports whether a finding of severity s or higher exists.
func (r *Report) AtLeast(s Severity) bool { return r.Worst() >= s && r.Worst() != 0 }
