package advisor

import (
	"fmt"
	"slices"
	"strings"
)

func init() {
	register(Check{ID: "volatile-extended-reference", Pattern: "extref",
		Doc: "Embedded copies of another collection's fields (an extended reference) that differ from their source in at least Thresholds.DriftShare (5%) of sampled documents: the copied field is volatile or the fan-out is missing.",
		Run: checkVolatileReference})
}

// checkVolatileReference reports copied fields that drifted from their
// source.
func checkVolatileReference(e *checkEnv) []Finding {
	var out []Finding
	for _, c := range e.collections() {
		if c.Schema == nil {
			continue
		}
		for _, ref := range c.Schema.References {
			if ref.Joined == 0 {
				continue
			}
			var drifted []string
			figs := []Figure{count("sampled copies joined to their source", ref.Joined)}
			for _, f := range ref.Fields {
				n := ref.Drift[f]
				if share(n, ref.Joined) < e.t.DriftShare {
					continue
				}
				drifted = append(drifted, f)
				figs = append(figs, count("copies with a stale "+f, n), fig("stale share of "+f, round2(share(n, ref.Joined)), "share"))
			}
			if len(drifted) == 0 {
				continue
			}
			var kept []string
			for _, f := range ref.Fields {
				if !slices.Contains(drifted, f) {
					kept = append(kept, fmt.Sprintf("%q", f))
				}
			}
			out = append(out, Finding{Severity: Warning, Namespace: c.NS(), Subject: ref.Field,
				Message:  fmt.Sprintf("%s copies %s from %s and the copies have drifted: stop copying volatile fields or fan out each change", ref.Field, strings.Join(drifted, ", "), ref.Source),
				Evidence: Evidence{Method: fmt.Sprintf("$sample of %d documents, $lookup of each %s._id in %s, copied fields compared with $ne and counted with $group", e.snap.Sample, ref.Field, ref.Source), Figures: figs},
				Fix: Fix{Summary: fmt.Sprintf("Copy only stable fields into %s and read volatile ones (%s) from %s on demand; apply each source change to its copies through the pattern package so the fan-out is never missed.", ref.Field, strings.Join(drifted, ", "), ref.Source),
					Commands: []string{createIndex(c.Name, []Key{{Field: ref.Field + "._id", Dir: 1}}) + "  // the fan-out updateMany"},
					Code: fmt.Sprintf("refs, err := extref.New[Source, Ref, Copy](db.Collection(%q), db.Collection(%q), extref.Config{\n\tField: %q, Fields: []string{%s}, Volatile: []string{%s}})",
						ref.Source, c.Name, ref.Field, strings.Join(kept, ", "), quoteList(drifted))}})
		}
	}
	return out
}

// quoteList quotes each string as Go does.
func quoteList(xs []string) string {
	q := make([]string, len(xs))
	for i, x := range xs {
		q[i] = fmt.Sprintf("%q", x)
	}
	return strings.Join(q, ", ")
}
