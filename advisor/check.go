package advisor

import (
	"fmt"
	"slices"
	"sort"

	"github.com/formworkdb/formwork/lab"
)

// Check is one rule: a pure function of the Snapshot (I4) with a stable
// id used in every output format.
type Check struct {
	// ID is the stable id, e.g. "unbounded-array".
	ID string
	// Pattern is the catalogue pattern its findings recommend, or the
	// kind of fix ("index", "query", "schema").
	Pattern string
	// Doc says in one sentence what the check looks for; SARIF and the
	// HTML report show it.
	Doc string
	// Run returns the findings; ID and, when empty, Pattern and Fix.Lab
	// are filled in by the caller.
	Run func(env *checkEnv) []Finding
}

// checkEnv is what every check reads: the snapshot and the thresholds.
type checkEnv struct {
	snap *Snapshot
	t    Thresholds
}

// collections returns every collection of the snapshot.
func (e *checkEnv) collections() []*Collection {
	var out []*Collection
	for _, d := range e.snap.Databases {
		out = append(out, d.Collections...)
	}
	return out
}

// collection returns the collection with namespace ns, or nil.
func (e *checkEnv) collection(ns string) *Collection {
	for _, c := range e.collections() {
		if c.NS() == ns {
			return c
		}
	}
	return nil
}

// shapesOn returns the shapes on namespace ns.
func (e *checkEnv) shapesOn(ns string) []*Shape {
	var out []*Shape
	for _, s := range e.snap.Shapes {
		if s.NS == ns {
			out = append(out, s)
		}
	}
	return out
}

// registry holds every check by id; each check_<id>.go registers its own.
var registry = map[string]Check{}

// register adds c; it panics on a duplicate id (a programming error).
func register(c Check) {
	if _, dup := registry[c.ID]; dup {
		panic("advisor: duplicate check " + c.ID)
	}
	registry[c.ID] = c
}

// Checks returns every check, in id order.
func Checks() []Check {
	out := make([]Check, 0, len(registry))
	for _, c := range registry {
		out = append(out, c)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].ID < out[j].ID })
	return out
}

// selectChecks returns the checks named, or all of them.
func selectChecks(ids []string) ([]Check, error) {
	if len(ids) == 0 {
		return Checks(), nil
	}
	var out []Check
	for _, id := range ids {
		c, ok := registry[id]
		if !ok {
			return nil, fmt.Errorf("advisor: unknown check %q", id)
		}
		out = append(out, c)
	}
	return out, nil
}

// labLink returns the formwork lab command measuring pattern, or "".
func labLink(pattern string) string {
	if slices.Contains(lab.Patterns(), pattern) {
		return "formwork lab " + pattern
	}
	return ""
}
