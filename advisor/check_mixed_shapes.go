package advisor

import (
	"fmt"
	"slices"
	"strconv"
	"strings"
)

func init() {
	register(Check{ID: "mixed-shapes", Pattern: "polymorphic",
		Doc: "Collections holding several document shapes told apart by a discriminator field, without a $jsonSchema validator: nothing keeps each kind's fields present and typed.",
		Run: checkMixedShapes})
}

// exclusiveFields returns, per discriminator value, the fields present in
// at least 90% of its documents and in at most 10% of every other
// value's: the fields of that kind alone. A lifecycle state (open,
// shipped, delivered) adds fields that later states keep, so at most one
// of its values has fields of its own.
func exclusiveFields(disc *Discriminator) map[string][]string {
	out := map[string][]string{}
	for v, fields := range disc.Presence {
	field:
		for f, p := range fields {
			if p < 0.9 || f == disc.Field {
				continue
			}
			for w, other := range disc.Presence {
				if w != v && other[f] > 0.1 {
					continue field
				}
			}
			out[v] = appendNew(out[v], f)
		}
		slices.Sort(out[v])
	}
	return out
}

// checkMixedShapes reports discriminators whose values have fields of
// their own, on collections without $jsonSchema.
func checkMixedShapes(e *checkEnv) []Finding {
	var out []Finding
	for _, c := range e.collections() {
		if c.Schema == nil || c.JSONSchema || versionsLive(c.Schema) {
			continue // several versions explain several shapes: schema-versions-live's
		}
		for _, disc := range c.Schema.Discriminators {
			if isVersionField(disc.Field) {
				continue
			}
			excl := exclusiveFields(disc)
			n, kinds := 0, 0
			var values []string
			for v := range disc.Presence {
				values = append(values, v)
				n += len(excl[v])
				if len(excl[v]) > 0 {
					kinds++
				}
			}
			if kinds < 2 {
				continue
			}
			slices.Sort(values)
			var branches []string
			for _, v := range values {
				req := append([]string{}, excl[v]...)
				for i := range req {
					req[i] = strconv.Quote(req[i])
				}
				branches = append(branches, fmt.Sprintf("{properties: {%s: {enum: [%s]}}, required: [%s]}", quoteField(disc.Field), v, strings.Join(req, ", ")))
			}
			out = append(out, Finding{Severity: Warning, Namespace: c.NS(), Subject: disc.Field,
				Message: fmt.Sprintf("%d shapes told apart by %s (%s) with %d kind-specific fields and no $jsonSchema validator", len(values), disc.Field, strings.Join(values, ", "), n),
				Evidence: Evidence{Method: sampleMethod(c, "distinct values of the field and presence of each field per value"), Figures: []Figure{
					count("sampled documents", c.Schema.Sampled), count("discriminator values", int64(len(values))),
					count("kind-specific fields", int64(n)), count("documents without the discriminator", disc.Missing)}},
				Fix: Fix{Summary: fmt.Sprintf("Declare the shapes: a $jsonSchema validator with one oneOf branch per %s value (validationLevel moderate while old documents are fixed), and repeat %s in every query on kind-specific fields so partial indexes apply.", disc.Field, disc.Field),
					Commands: []string{fmt.Sprintf("db.runCommand({collMod: %q, validator: {$jsonSchema: {bsonType: \"object\", required: [%q], oneOf: [%s]}}, validationLevel: \"moderate\", validationAction: \"error\"})",
						c.Name, disc.Field, strings.Join(branches, ", "))}}})
		}
	}
	return out
}

// versionsLive reports whether a schema has a version field with two or
// more live versions (missing counting as one).
func versionsLive(s *Schema) bool {
	for _, disc := range s.Discriminators {
		n := len(disc.Values)
		if disc.Missing > 0 {
			n++
		}
		if isVersionField(disc.Field) && n >= 2 {
			return true
		}
	}
	return false
}
