package advisor

import (
	"fmt"
	"strconv"
	"strings"
)

func init() {
	register(Check{ID: "schema-versions-live", Pattern: "versioning",
		Doc: "Documents of several schema versions (a schemaVersion-like field, missing counted as version 1) living side by side: every read handles each version until the migration finishes.",
		Run: checkSchemaVersionsLive})
}

// isVersionField reports whether a field name reads as a schema version.
func isVersionField(name string) bool {
	switch strings.ToLower(strings.TrimLeft(name, "_")) {
	case "schemaversion", "schema_version", "schemaver", "schema", "docversion", "doc_version", "version":
		return true
	}
	return false
}

// laterVersion reports whether version a is later than b: numerically
// when both are numbers (10 after 9), as text otherwise.
func laterVersion(a, b string) bool {
	x, errA := strconv.ParseFloat(strings.Trim(a, `"`), 64)
	y, errB := strconv.ParseFloat(strings.Trim(b, `"`), 64)
	if errA == nil && errB == nil {
		return x > y
	}
	return a > b
}

// checkSchemaVersionsLive reports version fields with two or more live
// values.
func checkSchemaVersionsLive(e *checkEnv) []Finding {
	var out []Finding
	for _, c := range e.collections() {
		s := c.Schema
		if s == nil {
			continue
		}
		for _, disc := range s.Discriminators {
			if !isVersionField(disc.Field) {
				continue
			}
			versions := len(disc.Values)
			if disc.Missing > 0 {
				versions++
			}
			if versions < 2 {
				continue
			}
			latest := disc.Values[0].Value
			for _, v := range disc.Values {
				if laterVersion(v.Value, latest) {
					latest = v.Value
				}
			}
			figs := []Figure{count("sampled documents", s.Sampled)}
			var parts []string
			if disc.Missing > 0 {
				figs = append(figs, count("documents without "+disc.Field, disc.Missing))
				parts = append(parts, fmt.Sprintf("%d without it", disc.Missing))
			}
			var latestN int64
			for _, v := range disc.Values {
				figs = append(figs, count("documents at "+disc.Field+" "+v.Value, v.Count))
				parts = append(parts, fmt.Sprintf("%d at %s", v.Count, v.Value))
				if v.Value == latest {
					latestN = v.Count
				}
			}
			figs = append(figs, fig("share not at the latest version", round2(1-share(latestN, s.Sampled)), "share"))
			out = append(out, Finding{Severity: Warning, Namespace: c.NS(), Subject: disc.Field,
				Message:  fmt.Sprintf("%d schema versions live (%s): finish the migration", versions, strings.Join(parts, ", ")),
				Evidence: Evidence{Method: sampleMethod(c, "distinct values of "+disc.Field), Figures: figs},
				Fix: Fix{Summary: fmt.Sprintf("Upgrade the remaining documents to %s %s in batches with a guarded pipeline update, then drop the old read path, indexes and validator branch.", disc.Field, latest),
					Commands: []string{fmt.Sprintf("%s.updateMany({%s: {$ne: %s}}, [{$set: {%s: %s /* , new fields from old ones */}} /* , {$unset: [old fields]} */])",
						collRef(c.Name), quoteField(disc.Field), latest, quoteField(disc.Field), latest)}}})
		}
	}
	return out
}
