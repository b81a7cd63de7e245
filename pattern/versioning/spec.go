package versioning

import (
	"fmt"
	"slices"
	"strings"

	"go.mongodb.org/mongo-driver/v2/bson"
)

// Step is a declarative upgrade from one version to the next: fields
// renamed (moved), defaults set where a field is missing or null, fields
// removed, applied in that order. It builds both forms of Version, the Up
// function and the Pipeline, which do the same thing; it is what the
// formwork jobs migrate command runs, since it needs no Go code.
type Step struct {
	// Rename moves the value at each key (a dotted path) to the path it
	// maps to; a missing source is left missing.
	Rename map[string]string `bson:"rename,omitempty" json:"rename,omitempty"`
	// Set gives each path its value where the document has none (or null).
	Set map[string]any `bson:"set,omitempty" json:"set,omitempty"`
	// Unset removes each path.
	Unset []string `bson:"unset,omitempty" json:"unset,omitempty"`
}

// maxStepPaths bounds the paths one Step names.
const maxStepPaths = 1000

// check reports a path that cannot be used.
func (st Step) check() error {
	if len(st.Rename)+len(st.Set)+len(st.Unset) > maxStepPaths {
		return fmt.Errorf("more than %d paths", maxStepPaths)
	}
	var all []string
	for k, v := range st.Rename {
		all = append(all, k, v)
	}
	for k := range st.Set {
		all = append(all, k)
	}
	all = append(all, st.Unset...)
	for _, p := range all {
		if p == "" || p == "_id" || strings.HasPrefix(p, "_id.") || strings.ContainsAny(p, "$\x00") ||
			strings.HasPrefix(p, ".") || strings.HasSuffix(p, ".") || strings.Contains(p, "..") {
			return fmt.Errorf("path %q", p)
		}
	}
	return nil
}

// Version returns the Version number n upgrading by st from n-1.
func (st Step) Version(n int) (Version, error) {
	if err := st.check(); err != nil {
		return Version{}, fmt.Errorf("versioning: step to %d: %w: %w", n, err, ErrInvalidConfig)
	}
	renames := sortedKeys(st.Rename)
	sets := sortedKeys(st.Set)
	up := func(doc bson.D) (bson.D, error) {
		for _, from := range renames {
			if v, ok := lookup(doc, from); ok {
				doc = set(unset(doc, from), st.Rename[from], v)
			}
		}
		for _, p := range sets {
			if v, ok := lookup(doc, p); !ok || v == nil {
				doc = set(doc, p, st.Set[p])
			}
		}
		for _, p := range st.Unset {
			doc = unset(doc, p)
		}
		return doc, nil
	}
	var pipe []bson.D
	if len(renames) > 0 {
		moves := bson.D{}
		drops := bson.A{}
		for _, from := range renames {
			moves = append(moves, bson.E{Key: st.Rename[from], Value: "$" + from})
			drops = append(drops, from)
		}
		pipe = append(pipe, bson.D{{Key: "$set", Value: moves}}, bson.D{{Key: "$unset", Value: drops}})
	}
	if len(sets) > 0 {
		defs := bson.D{}
		for _, p := range sets {
			defs = append(defs, bson.E{Key: p, Value: bson.D{{Key: "$ifNull", Value: bson.A{"$" + p, bson.D{{Key: "$literal", Value: st.Set[p]}}}}}})
		}
		pipe = append(pipe, bson.D{{Key: "$set", Value: defs}})
	}
	if len(st.Unset) > 0 {
		drops := bson.A{}
		for _, p := range st.Unset {
			drops = append(drops, p)
		}
		pipe = append(pipe, bson.D{{Key: "$unset", Value: drops}})
	}
	if pipe == nil {
		pipe = []bson.D{}
	}
	return Version{Number: n, Up: up, Pipeline: pipe}, nil
}

// sortedKeys returns m's keys in order, for a deterministic upgrade.
func sortedKeys[V any](m map[string]V) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	slices.Sort(out)
	return out
}

// Spec is a declarative description of a collection's versions, read
// from relaxed extended JSON by ParseSpec:
//
//	{"field": "schemaVersion", "first": 1,
//	 "steps": [ {"rename": {"work": "contactInfo.work", "home": "contactInfo.home"}},
//	            {"set": {"contactInfo.instagram": ""}, "unset": ["fax"]} ]}
//
// First is the oldest version (1 if absent); step i upgrades to First+i+1.
type Spec struct {
	Field   string `bson:"field,omitempty"`
	First   int    `bson:"first,omitempty"`
	Missing int    `bson:"missing,omitempty"`
	Steps   []Step `bson:"steps"`
}

// maxSteps bounds a Spec's steps.
const maxSteps = 1000

// ParseSpec reads a Spec from relaxed extended JSON (numbers keep their
// integer type; dates are {"$date": …}).
func ParseSpec(data []byte) (Spec, error) {
	var sp Spec
	if err := bson.UnmarshalExtJSON(data, false, &sp); err != nil {
		return sp, fmt.Errorf("versioning: spec: %w: %w", err, ErrInvalidConfig)
	}
	return sp, nil
}

// Config returns the Config the spec describes, with base's other fields
// (Batch, Throttle, Jobs, TimeField).
func (sp Spec) Config(base Config) (Config, error) {
	if len(sp.Steps) == 0 {
		return base, fmt.Errorf("versioning: spec: no steps: %w", ErrInvalidConfig)
	}
	if len(sp.Steps) > maxSteps {
		return base, fmt.Errorf("versioning: spec: more than %d steps: %w", maxSteps, ErrInvalidConfig)
	}
	first := sp.First
	if first == 0 {
		first = 1
	}
	base.Field, base.Missing = sp.Field, sp.Missing
	base.Versions = []Version{{Number: first}}
	for i, st := range sp.Steps {
		v, err := st.Version(first + i + 1)
		if err != nil {
			return base, err
		}
		base.Versions = append(base.Versions, v)
	}
	if err := base.Validate(); err != nil {
		return base, err
	}
	return base, nil
}
